package action

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/preview"
)

// Install is `kubectl kudo install`: a package's Operator and
// OperatorVersion, those of its dependencies, and an Instance.
type Install struct {
	PackageOptions
	ParameterOptions
	WriteOptions
	// Package names the package: a name in a repository, a directory, a
	// tarball, a URL; with InCluster, the operator of an installed
	// OperatorVersion.
	Package string
	// Instance is the Instance's name; "" is <operator>-instance.
	Instance        string
	SkipInstance    bool
	CreateNamespace bool
	// InCluster installs an Instance of an OperatorVersion already in the
	// namespace, named by its operator, rather than of a package.
	InCluster bool
	// KubeConfigSecret, NAME[:KEY], names the Secret of the namespace whose
	// kubeconfig the Instance acts with on another cluster (kudo-ng).
	KubeConfigSecret string
}

// kubeConfig is the Instance's spec.kubeConfig that KubeConfigSecret says;
// nil for none.
func (a *Install) kubeConfig() (*kudov1beta1.KubeConfigReference, error) {
	if a.KubeConfigSecret == "" {
		return nil, nil
	}
	name, key, _ := strings.Cut(a.KubeConfigSecret, ":")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("--kubeconfig-secret %q: %q is not a Secret's name: %s", a.KubeConfigSecret, name, strings.Join(errs, "; "))
	}
	if errs := validation.IsConfigMapKey(key); key != "" && len(errs) > 0 {
		return nil, fmt.Errorf("--kubeconfig-secret %q: %q is not a Secret's key: %s", a.KubeConfigSecret, key, strings.Join(errs, "; "))
	}
	return &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: name, Key: key}}, nil
}

// Run installs the package, its dependencies and, unless skipped, an
// Instance, which it returns (nil when skipped). Everything is checked
// before anything is written: a bad parameter or package changes nothing
// in the cluster.
func (a *Install) Run(ctx context.Context, cfg Config) (*kudov1beta1.Instance, error) {
	if a.InCluster {
		return a.runInCluster(ctx, cfg)
	}
	in, err := a.prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, cfg, a.CreateNamespace); err != nil {
		return nil, err
	}
	if err := writeVersions(ctx, cfg, in.versions); err != nil {
		return nil, err
	}
	if a.SkipInstance {
		return nil, nil
	}
	return createInstance(ctx, cfg, newInstance(in.ov, in.name, in.assigned, in.kubeConfig))
}

// Preview says what the install would do (previewer), writing nothing: the
// OperatorVersions' writes are dry runs, which admission checks.
func (a *Install) Preview(ctx context.Context, cfg Config) (*preview.Report, error) {
	if a.InCluster || a.SkipInstance {
		return nil, fmt.Errorf("a preview shows what an Instance's plan would do: --in-cluster and --skip-instance install none")
	}
	in, err := a.prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p := newPreviewer(cfg, in.versions)
	i := newInstance(in.ov, in.name, in.assigned, in.kubeConfig)
	r := &preview.Report{Instance: i.Name, Namespace: i.Namespace, OperatorVersion: in.ov.Name, Action: "install"}
	if err := ensureNamespace(ctx, Config{Client: p.dryRun, Namespace: cfg.Namespace}, a.CreateNamespace); err != nil {
		return refused(r, err)
	}
	if err := p.writeVersions(ctx, in.versions); err != nil {
		return refused(r, err)
	}
	return p.report(ctx, "install", nil, i, in.ov, 0)
}

// installing is an install checked and ready to write.
type installing struct {
	versions   []*Version
	ov         *kudov1beta1.OperatorVersion
	name       string
	assigned   params.Assigned
	kubeConfig *kudov1beta1.KubeConfigReference
}

// prepare resolves and checks the package, its dependencies and the
// Instance's values: a bad parameter or package changes nothing.
func (a *Install) prepare(ctx context.Context, cfg Config) (*installing, error) {
	kubeConfig, err := a.kubeConfig()
	if err != nil {
		return nil, err
	}
	p, deps, err := a.Resolve(ctx, a.Package, nil)
	if err != nil {
		return nil, err
	}
	assigned, err := a.instanceParameters(p, cfg.Namespace)
	if err != nil {
		return nil, err
	}
	versions, err := a.Prepare(ctx, cfg, cfg.Namespace, append(deps, p), packages.VerifyOptions{Values: assigned.Values}, a.Registry)
	if err != nil {
		return nil, err
	}
	ov := versions[len(versions)-1].OperatorVersion()
	name := a.instanceName(p.Operator.Name)
	if !a.SkipInstance {
		clientutil.WarnPlainSensitive(cfg.ErrOut, assigned, ov.Spec.Parameters)
		if err := refuseExisting(ctx, cfg, name); err != nil {
			return nil, err
		}
	}
	return &installing{versions: versions, ov: ov, name: name, assigned: assigned, kubeConfig: kubeConfig}, nil
}

// runInCluster is KUDO's install --in-cluster: an Instance of an
// OperatorVersion the namespace holds, found by its operator's name.
func (a *Install) runInCluster(ctx context.Context, cfg Config) (*kudov1beta1.Instance, error) {
	if a.SkipInstance {
		return nil, fmt.Errorf("--in-cluster installs an Instance of an installed OperatorVersion: --skip-instance would install nothing")
	}
	kubeConfig, err := a.kubeConfig()
	if err != nil {
		return nil, err
	}
	ov, err := installedVersion(ctx, cfg, a.Package, a.OperatorVersion, a.AppVersion)
	if err != nil {
		return nil, err
	}
	assigned, err := a.Assign(ov.Spec.Parameters)
	if err != nil {
		return nil, err
	}
	name := a.instanceName(ov.Spec.Operator.Name)
	clientutil.WarnPlainSensitive(cfg.ErrOut, assigned, ov.Spec.Parameters)
	if err := refuseExisting(ctx, cfg, name); err != nil {
		return nil, err
	}
	return createInstance(ctx, cfg, newInstance(ov, name, assigned, kubeConfig))
}

func (a *Install) instanceName(operator string) string {
	if a.Instance != "" {
		return a.Instance
	}
	return operator + "-instance"
}

// instanceParameters are the values the flags give the Instance; none with
// --skip-instance, which creates no Instance. A package whose parameters do
// not convert has no values to resolve; verifying it says why.
func (a *Install) instanceParameters(p *packages.Package, ns string) (params.Assigned, error) {
	if a.SkipInstance {
		return params.Assigned{}, nil
	}
	_, ov, err := p.Convert(ns)
	if err != nil {
		return params.Assigned{}, nil
	}
	return a.Assign(ov.Spec.Parameters)
}

// refuseExisting refuses to install over an Instance of the name.
func refuseExisting(ctx context.Context, cfg Config, name string) error {
	err := cfg.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: name}, &kudov1beta1.Instance{})
	switch {
	case err == nil:
		return fmt.Errorf("instance %s already exists in namespace %s: change it with kubectl kudo update or upgrade", name, cfg.Namespace)
	case apierrors.IsNotFound(err):
		return nil
	}
	return err
}

// createInstance creates the Instance.
func createInstance(ctx context.Context, cfg Config, i *kudov1beta1.Instance) (*kudov1beta1.Instance, error) {
	if err := cfg.Client.Create(ctx, i); err != nil {
		return nil, fmt.Errorf("creating Instance %s: %w", i.Name, err)
	}
	return i, nil
}

// newInstance is the Instance of ov that install creates.
func newInstance(ov *kudov1beta1.OperatorVersion, name string, assigned params.Assigned,
	kubeConfig *kudov1beta1.KubeConfigReference) *kudov1beta1.Instance {
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ov.Namespace,
			Labels: map[string]string{kudov1beta1.OperatorLabel: ov.Spec.Operator.Name}},
		Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}, KubeConfig: kubeConfig},
	}
	assigned.ApplyTo(&i.Spec)
	return i
}

func ensureNamespace(ctx context.Context, cfg Config, create bool) error {
	err := cfg.Client.Get(ctx, client.ObjectKey{Name: cfg.Namespace}, &corev1.Namespace{})
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return err
	case !create:
		return fmt.Errorf("namespace %s does not exist: create it, or pass --create-namespace", cfg.Namespace)
	}
	return cfg.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cfg.Namespace}})
}

// installedVersion is the operator's OperatorVersion in the namespace of
// the versions asked for, else the newest.
func installedVersion(ctx context.Context, cfg Config, operator, version, appVersion string,
) (*kudov1beta1.OperatorVersion, error) {
	list := &kudov1beta1.OperatorVersionList{}
	if err := cfg.Client.List(ctx, list, client.InNamespace(cfg.Namespace)); err != nil {
		return nil, err
	}
	var found *kudov1beta1.OperatorVersion
	for k := range list.Items {
		ov := &list.Items[k]
		if ov.Spec.Operator.Name != operator || version != "" && ov.Spec.Version != version ||
			appVersion != "" && ov.Spec.AppVersion != appVersion {
			continue
		}
		if found == nil || newerVersion(ov, found) {
			found = ov
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no OperatorVersion of operator %s%s in namespace %s: install the package first, "+
			"or install it from its package without --in-cluster", operator, versionsAsked(version, appVersion), cfg.Namespace)
	}
	return found, nil
}

// newerVersion orders by operator version, then app version.
func newerVersion(a, b *kudov1beta1.OperatorVersion) bool {
	if c := packages.CompareVersions(a.Spec.Version, b.Spec.Version); c != 0 {
		return c > 0
	}
	return packages.CompareVersions(a.Spec.AppVersion, b.Spec.AppVersion) > 0
}

func versionsAsked(version, appVersion string) string {
	out := ""
	if version != "" {
		out += " version " + version
	}
	if appVersion != "" {
		out += " app version " + appVersion
	}
	return out
}
