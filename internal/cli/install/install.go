// Package install is `kubectl kudo install`: a package's Operator and
// OperatorVersion, those of its dependencies, and an Instance.
package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
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
	f.StringVar(&opts.AppVersion, "app-version", "", "App version of the package to install")
	f.StringVar(&opts.OperatorVersion, "operator-version", "", "Operator version of the package to install")
	f.BoolVar(&opts.SkipInstance, "skip-instance", false, "Install the Operator and OperatorVersion only")
	f.BoolVar(&opts.CreateNamespace, "create-namespace", false, "Create the namespace if it does not exist")
	clientutil.WaitFlags(f, &opts.Wait, &opts.WaitTime, "Wait until the deploy plan has finished")
	ReplaceFlag(f, &opts.ReplaceOperatorVersion)
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
	deps, err := Dependencies(ctx, p, opts.Package, repo)
	if err != nil {
		return err
	}
	var assigned params.Assigned
	if !opts.SkipInstance {
		// A package whose parameters do not convert has no values to
		// resolve; verifying it says why.
		if _, ov, err := p.Convert(ns); err == nil {
			if assigned, err = params.Resolve(ov.Spec.Parameters, opts.ParameterFiles, opts.Parameters); err != nil {
				return err
			}
		}
	}
	verify := packages.VerifyOptions{Values: assigned.Values}
	versions, err := PrepareVersions(ctx, c, ns, append(deps, p), verify, opts.ReplaceOperatorVersion, streams.ErrOut)
	if err != nil {
		return err
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
	if err := plan.Wait(ctx, c, i.Namespace, streams.Out, i.Name, opts.WaitTime); err != nil {
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

// ReplaceFlag adds --replace-operator-version, of install and upgrade.
func ReplaceFlag(f *pflag.FlagSet, replace *bool) {
	f.BoolVar(replace, "replace-operator-version", false, "Replace an installed OperatorVersion of the package's name "+
		"but other content, if no Instance uses it (without the flag such a package is refused: bump its operatorVersion instead)")
}

// Dependencies resolves the packages of p's KudoOperator tasks, and theirs,
// each before the packages that need it; ref is where p was found, to which
// a directory a task names is relative.
func Dependencies(ctx context.Context, p *packages.Package, ref, repo string) ([]*packages.Package, error) {
	dir := ""
	if info, err := os.Stat(ref); err == nil && info.IsDir() {
		dir = ref
	}
	return resolve.Dependencies(ctx, p, dir, repo)
}

// PrepareVersions verifies the packages to install or upgrade to, the last
// with verify and each before it, a dependency, with its defaults: the
// values its parent's KudoOperator task passes are known only when the plan
// runs. It prepares, in the same order, what installing them writes.
func PrepareVersions(ctx context.Context, c client.Reader, ns string, pkgs []*packages.Package, verify packages.VerifyOptions,
	replace bool, errOut io.Writer) ([]*Version, error) {
	versions := make([]*Version, 0, len(pkgs))
	for k, pkg := range pkgs {
		opts := packages.VerifyOptions{}
		if k == len(pkgs)-1 {
			opts = verify
		}
		if err := VerifyPackage(pkg, opts, errOut); err != nil {
			return nil, err
		}
		v, err := PrepareVersion(ctx, c, ns, pkg, replace)
		if err != nil {
			return nil, err
		}
		versions = append(versions, v)
	}
	return versions, nil
}

// VerifyPackage verifies a package to install or upgrade to (opts.Install):
// it refuses one that cannot install or run, and prints the rules of good
// packaging it breaks as warnings, as package verify names them.
func VerifyPackage(p *packages.Package, opts packages.VerifyOptions, errOut io.Writer) error {
	opts.Install = true
	report := packages.Verify(p, opts)
	if len(report.Errors) > 0 {
		return fmt.Errorf("package %s is not valid: %s", p.Operator.Name, report.Errors[0])
	}
	for _, w := range report.Warnings {
		_, _ = fmt.Fprintf(errOut, "Warning: package %s: %s\n", p.Operator.Name, w)
	}
	return nil
}

// Version is what installing a package writes: its Operator and
// OperatorVersion. It is decided before anything is written.
type Version struct {
	operator *kudov1beta1.Operator
	ov       *kudov1beta1.OperatorVersion
	// installed is the OperatorVersion of the same name already in the
	// cluster: unchanged when its content is the package's, replaced if not.
	installed *kudov1beta1.OperatorVersion
}

// OperatorVersion is the package's OperatorVersion.
func (v *Version) OperatorVersion() *kudov1beta1.OperatorVersion { return v.ov }

// PrepareVersion converts the package for the namespace and compares it with
// what is installed. An installed Operator is reused, as KUDO does; an
// installed OperatorVersion of the same name is reused only when its content
// is the package's: KUDO silently kept the old one. One that differs is
// refused, or with replace replaced, but never under an Instance using it.
func PrepareVersion(ctx context.Context, c client.Reader, ns string, p *packages.Package, replace bool) (*Version, error) {
	op, ov, err := p.Convert(ns)
	if err != nil {
		return nil, err
	}
	v := &Version{operator: op, ov: ov}
	installed := &kudov1beta1.OperatorVersion{}
	switch err := c.Get(ctx, client.ObjectKeyFromObject(ov), installed); {
	case apierrors.IsNotFound(err):
		return v, nil
	case err != nil:
		return nil, err
	}
	fields, err := differentFields(&installed.Spec, &ov.Spec)
	if err != nil || len(fields) == 0 {
		return v, err
	}
	differs := fmt.Sprintf("OperatorVersion %s in namespace %s differs from package %s %s (in spec.%s)",
		ov.Name, ns, p.Operator.Name, ov.Spec.Version, strings.Join(fields, ", spec."))
	if !replace {
		return nil, fmt.Errorf("%s: bump operatorVersion in the package's operator.yaml, "+
			"or pass --replace-operator-version to replace it (if no Instance uses it)", differs)
	}
	users, err := instancesOf(ctx, c, installed)
	if err != nil {
		return nil, err
	}
	if len(users) > 0 {
		return nil, fmt.Errorf("%s, and Instances %s use it: it cannot be replaced under them; "+
			"bump operatorVersion in the package's operator.yaml and upgrade them with kubectl kudo upgrade",
			differs, strings.Join(users, ", "))
	}
	v.installed = installed
	return v, nil
}

// differentFields lists, sorted, the fields of two specs that differ as the
// API server stores them, where an empty list and a missing one are the same.
func differentFields(a, b *kudov1beta1.OperatorVersionSpec) ([]string, error) {
	var fields [2]map[string]json.RawMessage
	for k, spec := range []*kudov1beta1.OperatorVersionSpec{a, b} {
		data, err := json.Marshal(spec)
		if err == nil {
			err = json.Unmarshal(data, &fields[k])
		}
		if err != nil {
			return nil, err
		}
	}
	var differ []string
	for _, name := range sets.List(sets.KeySet(fields[0]).Union(sets.KeySet(fields[1]))) {
		if !bytes.Equal(fields[0][name], fields[1][name]) {
			differ = append(differ, name)
		}
	}
	return differ, nil
}

// instancesOf names the Instances that use the OperatorVersion, from any
// namespace (namespace/name) or, for a user who may not list Instances
// across namespaces, from its own, where almost all of them are.
func instancesOf(ctx context.Context, c client.Reader, ov *kudov1beta1.OperatorVersion) ([]string, error) {
	list := &kudov1beta1.InstanceList{}
	err := c.List(ctx, list)
	if apierrors.IsForbidden(err) {
		err = c.List(ctx, list, client.InNamespace(ov.Namespace))
	}
	if err != nil {
		return nil, fmt.Errorf("listing the Instances that use OperatorVersion %s: %w", ov.Name, err)
	}
	var names []string
	for i := range list.Items {
		if list.Items[i].OperatorVersionKey() == client.ObjectKeyFromObject(ov) {
			names = append(names, list.Items[i].Namespace+"/"+list.Items[i].Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Write creates the Operator and OperatorVersion, or replaces the
// OperatorVersion, and says what it did as kubectl does.
func (v *Version) Write(ctx context.Context, c client.Client, out io.Writer) error {
	if err := c.Create(ctx, v.operator); apierrors.IsAlreadyExists(err) {
		_, _ = fmt.Fprintf(out, "operator.kudo.dev/%s unchanged\n", v.operator.Name)
	} else if err != nil {
		return fmt.Errorf("creating Operator %s: %w", v.operator.Name, err)
	} else {
		_, _ = fmt.Fprintf(out, "operator.kudo.dev/%s created\n", v.operator.Name)
	}
	if v.installed != nil {
		replaced := v.installed.DeepCopy()
		replaced.Spec = v.ov.Spec
		if err := c.Update(clientutil.Warned(ctx), replaced); err != nil {
			return fmt.Errorf("replacing OperatorVersion %s: %w", v.ov.Name, err)
		}
		_, _ = fmt.Fprintf(out, "operatorversion.kudo.dev/%s replaced\n", v.ov.Name)
		return nil
	}
	if err := c.Create(clientutil.Warned(ctx), v.ov); apierrors.IsAlreadyExists(err) {
		// Checked by PrepareVersion to be the package's.
		_, _ = fmt.Fprintf(out, "operatorversion.kudo.dev/%s unchanged\n", v.ov.Name)
	} else if err != nil {
		return fmt.Errorf("creating OperatorVersion %s: %w", v.ov.Name, err)
	} else {
		_, _ = fmt.Fprintf(out, "operatorversion.kudo.dev/%s created\n", v.ov.Name)
	}
	return nil
}
