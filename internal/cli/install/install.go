// Package install is `kubectl kudo install`: a package's Operator and
// OperatorVersion, those of its dependencies, and an Instance.
package install

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/plan"
	"github.com/kudo-ng/kudo/internal/cli/repoconfig"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
)

// Options are the flags of install.
type Options struct {
	Package         string
	Instance        string
	Parameters      []string
	ParameterFiles  []string
	Repo            string
	AppVersion      string
	OperatorVersion string
	SkipInstance    bool
	CreateNamespace bool
	Wait            bool
	WaitTime        time.Duration
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
	f.StringVar(&opts.AppVersion, "app-version", "", "App version of the package to install")
	f.StringVar(&opts.OperatorVersion, "operator-version", "", "Operator version of the package to install")
	f.BoolVar(&opts.SkipInstance, "skip-instance", false, "Install the Operator and OperatorVersion only")
	f.BoolVar(&opts.CreateNamespace, "create-namespace", false, "Create the namespace if it does not exist")
	clientutil.WaitFlags(f, &opts.Wait, &opts.WaitTime, "Wait until the deploy plan has finished")
	return cmd
}

// Run installs the package, its dependencies and, unless skipped, an
// Instance. Everything is checked before anything is written: a bad
// parameter or package changes nothing in the cluster.
func Run(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	repo, err := repoconfig.Resolve(opts.Repo)
	if err != nil {
		return err
	}
	p, err := resolve.Package(ctx, resolve.Request{
		Ref: opts.Package, Repo: repo, AppVersion: opts.AppVersion, OperatorVersion: opts.OperatorVersion,
	})
	if err != nil {
		return err
	}
	dir := ""
	if info, err := os.Stat(opts.Package); err == nil && info.IsDir() {
		dir = opts.Package
	}
	deps, err := resolve.Dependencies(ctx, p, dir, repo)
	if err != nil {
		return err
	}
	for _, pkg := range append(deps, p) {
		if report := packages.Verify(pkg, packages.VerifyOptions{}); len(report.Errors) > 0 {
			return fmt.Errorf("package %s is not valid: %s", pkg.Operator.Name, report.Errors[0])
		}
	}
	_, ov, err := p.Convert(ns)
	if err != nil {
		return err
	}
	name := opts.Instance
	if name == "" {
		name = p.Operator.Name + "-instance"
	}
	var values map[string]string
	if !opts.SkipInstance {
		if values, err = params.Resolve(ov.Spec.Parameters, opts.ParameterFiles, opts.Parameters); err != nil {
			return err
		}
		existing := &kudov1beta1.Instance{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, existing); err == nil {
			return fmt.Errorf("instance %s already exists in namespace %s: change it with kubectl kudo update or upgrade", name, ns)
		} else if !apierrors.IsNotFound(err) {
			return err
		}
	}

	if err := ensureNamespace(ctx, c, ns, opts.CreateNamespace); err != nil {
		return err
	}
	for _, pkg := range append(deps, p) {
		if err := InstallVersion(ctx, c, ns, streams, pkg); err != nil {
			return err
		}
	}
	if opts.SkipInstance {
		return nil
	}
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"kudo.dev/operator": p.Operator.Name}},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}, Parameters: values},
	}
	if err := c.Create(ctx, i); err != nil {
		return fmt.Errorf("creating Instance %s: %w", name, err)
	}
	_, _ = fmt.Fprintf(streams.Out, "instance.kudo.dev/%s created\n", name)
	if !opts.Wait {
		return nil
	}
	if err := plan.Wait(ctx, c, ns, io.Discard, i.Name, opts.WaitTime); err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "instance %s is deployed\n", name)
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

// InstallVersion creates the package's Operator and OperatorVersion; one
// already installed is reused, as KUDO does.
func InstallVersion(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, p *packages.Package) error {
	op, ov, err := p.Convert(ns)
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{op, ov} {
		err := c.Create(ctx, obj)
		switch {
		case apierrors.IsAlreadyExists(err):
			_, _ = fmt.Fprintf(streams.Out, "%s.kudo.dev/%s unchanged\n", lower(obj), obj.GetName())
		case err != nil:
			return fmt.Errorf("creating %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		default:
			_, _ = fmt.Fprintf(streams.Out, "%s.kudo.dev/%s created\n", lower(obj), obj.GetName())
		}
	}
	return nil
}

func lower(obj client.Object) string {
	switch obj.(type) {
	case *kudov1beta1.Operator:
		return "operator"
	default:
		return "operatorversion"
	}
}
