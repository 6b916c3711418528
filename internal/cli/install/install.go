// Package install is `kubectl kudo install`: a package's Operator and
// OperatorVersion, those of its dependencies, and an Instance.
package install

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
)

// Options are the flags of install.
type Options struct {
	Package        string
	Instance       string
	Parameters     []string
	ParameterFiles []string
	Repo           string
	// Registry is how packages in OCI registries are reached.
	Registry resolve.Registry
	// Verify checks the packages' signatures against the cluster's
	// TrustPolicies before anything is written.
	Verify          bool
	AppVersion      string
	OperatorVersion string
	SkipInstance    bool
	CreateNamespace bool
	Wait            bool
	WaitTime        time.Duration
	// ReplaceOperatorVersion replaces an installed OperatorVersion of the
	// package's name that differs from it, if no Instance uses it.
	ReplaceOperatorVersion bool
	// InCluster installs an Instance of an OperatorVersion already in the
	// namespace, named by its operator, rather than of a package.
	InCluster bool
}

// NewCmd returns the install command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "install <name|dir|tgz|url>",
		Short: "Install an operator package and an Instance of it",
		Example: `  kubectl kudo install ./zookeeper/operator --instance zk -p NODE_COUNT=5 --wait
  kubectl kudo install zookeeper --repo http://127.0.0.1:8080`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Package = args[0]
			c, ns, err := clientutil.New(flags)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), c, ns, streams, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Instance, "instance", "", "Instance name (default <operator>-instance)")
	clientutil.ParameterFlags(f, &opts.Parameters, &opts.ParameterFiles)
	clientutil.RepoFlag(f, &opts.Repo)
	opts.Registry.AddFlags(f)
	action.VerifyFlag(f, &opts.Verify)
	f.StringVar(&opts.AppVersion, "app-version", "", "App version of the package to install")
	f.StringVar(&opts.OperatorVersion, "operator-version", "", "Operator version of the package to install")
	f.BoolVar(&opts.SkipInstance, "skip-instance", false, "Install the Operator and OperatorVersion only")
	f.BoolVar(&opts.CreateNamespace, "create-namespace", false, "Create the namespace if it does not exist")
	clientutil.WaitFlags(f, &opts.Wait, &opts.WaitTime, "Wait until the deploy plan has finished")
	clientutil.ReplaceFlag(f, &opts.ReplaceOperatorVersion)
	f.BoolVar(&opts.InCluster, "in-cluster", false, "Install an Instance of an OperatorVersion already in the namespace, "+
		"named by its operator (the newest, or --operator-version and --app-version), reading no package")
	return cmd
}

// Run installs the package, its dependencies and, unless skipped, an
// Instance. Everything is checked before anything is written: a bad
// parameter or package changes nothing in the cluster.
func Run(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	if opts.InCluster {
		return runInCluster(ctx, c, ns, streams, opts)
	}
	p, deps, err := action.ResolvePackage(ctx, opts.Repo, resolve.Request{
		Ref: opts.Package, AppVersion: opts.AppVersion, OperatorVersion: opts.OperatorVersion, Registry: opts.Registry,
	}, nil)
	if err != nil {
		return err
	}
	assigned, err := instanceParameters(p, ns, opts)
	if err != nil {
		return err
	}
	verify := packages.VerifyOptions{Values: assigned.Values}
	versions, err := action.PrepareVersions(ctx, c, ns, append(deps, p), verify, opts.ReplaceOperatorVersion, streams.ErrOut)
	if err != nil {
		return err
	}
	if opts.Verify {
		if err := action.VerifySignatures(ctx, c, versions, opts.Registry, streams.Out); err != nil {
			return err
		}
	}
	ov := versions[len(versions)-1].OperatorVersion()
	name := opts.Instance
	if name == "" {
		name = p.Operator.Name + "-instance"
	}
	if !opts.SkipInstance {
		clientutil.WarnPlainSensitive(streams.ErrOut, assigned, ov.Spec.Parameters)
		if err := refuseExisting(ctx, c, ns, name); err != nil {
			return err
		}
	}

	if err := ensureNamespace(ctx, c, ns, opts.CreateNamespace); err != nil {
		return err
	}
	for _, v := range versions {
		if err := v.Write(ctx, c, streams.Out); err != nil {
			return err
		}
	}
	if opts.SkipInstance {
		return nil
	}
	return createInstance(ctx, c, streams, opts, ov, name, assigned)
}

// instanceParameters are the values the flags give the Instance; none with
// --skip-instance, which creates no Instance. A package whose parameters do
// not convert has no values to resolve; verifying it says why.
func instanceParameters(p *packages.Package, ns string, opts *Options) (params.Assigned, error) {
	var assigned params.Assigned
	if opts.SkipInstance {
		return assigned, nil
	}
	if _, ov, err := p.Convert(ns); err == nil {
		if assigned, err = params.Resolve(ov.Spec.Parameters, opts.ParameterFiles, opts.Parameters); err != nil {
			return params.Assigned{}, err
		}
	}
	return assigned, nil
}

// refuseExisting refuses to install over an Instance of the name.
func refuseExisting(ctx context.Context, c client.Reader, ns, name string) error {
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &kudov1beta1.Instance{})
	switch {
	case err == nil:
		return fmt.Errorf("instance %s already exists in namespace %s: change it with kubectl kudo update or upgrade", name, ns)
	case apierrors.IsNotFound(err):
		return nil
	}
	return err
}

// createInstance creates the Instance of ov, and with --wait waits for its
// deploy plan.
func createInstance(ctx context.Context, c client.Client, streams genericiooptions.IOStreams, opts *Options,
	ov *kudov1beta1.OperatorVersion, name string, assigned params.Assigned) error {
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ov.Namespace,
			Labels: map[string]string{kudov1beta1.OperatorLabel: ov.Spec.Operator.Name}},
		Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}},
	}
	assigned.ApplyTo(&i.Spec)
	if err := c.Create(ctx, i); err != nil {
		return fmt.Errorf("creating Instance %s: %w", name, err)
	}
	_, _ = fmt.Fprintf(streams.Out, "instance.kudo.dev/%s created\n", name)
	if !opts.Wait {
		return nil
	}
	if err := action.Wait(ctx, c, i.Namespace, streams.Out, i.Name, opts.WaitTime); err != nil {
		return err
	}
	_, err := fmt.Fprintf(streams.Out, "instance %s is deployed\n", name)
	return err
}

func ensureNamespace(ctx context.Context, c client.Client, ns string, create bool) error {
	err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return err
	case !create:
		return fmt.Errorf("namespace %s does not exist: create it, or pass --create-namespace", ns)
	}
	return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
}
