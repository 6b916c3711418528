package action

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/repoconfig"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Config is what an action acts with, as Helm's action.Configuration: the
// cluster, the namespace the verb acts in, and where it says what it does
// on the way (the objects it writes, the plan it waits for) and warns.
type Config struct {
	Client    client.Client
	Namespace string
	Out       io.Writer
	ErrOut    io.Writer
	// Capabilities are what Helm charts' .Capabilities say of the cluster,
	// that a preview renders them as the manager does; nil: Helm's defaults.
	Capabilities func() (*chartrender.Capabilities, error)
}

// ParameterOptions are the parameter values a verb sets: -p and -P.
type ParameterOptions struct {
	Parameters     []string
	ParameterFiles []string
}

// AddFlags adds -p and -P.
func (o *ParameterOptions) AddFlags(f *pflag.FlagSet) {
	clientutil.ParameterFlags(f, &o.Parameters, &o.ParameterFiles)
}

// Assign checks the values against the parameters an OperatorVersion
// declares (params.Resolve).
func (o *ParameterOptions) Assign(declared []kudov1beta1.Parameter) (params.Assigned, error) {
	return params.Resolve(declared, o.ParameterFiles, o.Parameters)
}

// PackageOptions say which package a verb reads and where it is found: the
// flags install, upgrade and rbac share.
type PackageOptions struct {
	Repo string
	// Registry is how packages in OCI registries are reached.
	Registry        resolve.Registry
	AppVersion      string
	OperatorVersion string
}

// AddFlags adds the flags; which ends the help of the version flags ("of
// the package to install", "to upgrade to").
func (o *PackageOptions) AddFlags(f *pflag.FlagSet, which string) {
	clientutil.RepoFlag(f, &o.Repo)
	o.Registry.AddFlags(f)
	f.StringVar(&o.AppVersion, "app-version", "", "App version "+which)
	f.StringVar(&o.OperatorVersion, "operator-version", "", "Operator version "+which)
}

// Resolve finds the package ref names in the versions asked for, and the
// packages its KudoOperator tasks install with it
// (resolve.PackageAndDependencies), in --repo (a repository's name or URL)
// or the repository in use; check refuses a package before its
// dependencies are read.
func (o *PackageOptions) Resolve(ctx context.Context, ref string, check func(*packages.Package) error) (
	*packages.Package, []*packages.Package, error) {
	url, err := repoconfig.Resolve(o.Repo)
	if err != nil {
		return nil, nil, err
	}
	return resolve.PackageAndDependencies(ctx, resolve.Request{
		Ref: ref, Repo: url, AppVersion: o.AppVersion, OperatorVersion: o.OperatorVersion, Registry: o.Registry,
	}, check)
}

// WriteOptions say how the OperatorVersions of a package are written: the
// flags install and upgrade share.
type WriteOptions struct {
	// Verify checks the packages' signatures against the cluster's
	// TrustPolicies before anything is written.
	Verify bool
	// ReplaceOperatorVersion replaces an installed OperatorVersion of the
	// package's name and version that differs from it, if no Instance uses it.
	ReplaceOperatorVersion bool
	// AcceptBreakingChanges writes OperatorVersions whose typed API would
	// break the values of existing objects, which admission refuses
	// otherwise (typedapi.Breaks).
	AcceptBreakingChanges bool
}

// AddFlags adds --verify, --replace-operator-version and
// --accept-breaking-changes.
func (o *WriteOptions) AddFlags(f *pflag.FlagSet) {
	VerifyFlag(f, &o.Verify)
	clientutil.ReplaceFlag(f, &o.ReplaceOperatorVersion)
	f.BoolVar(&o.AcceptBreakingChanges, "accept-breaking-changes", false, "Install an OperatorVersion whose typed API "+
		"would lose or reject values existing objects hold, which no conversion rule of the package covers (docs/typed-apis.md)")
}

// Prepare checks the packages, dependencies first, as the OperatorVersions
// they make in ns (PrepareVersions) and, with --verify, their signatures,
// read through registry: nothing is written yet.
func (o *WriteOptions) Prepare(ctx context.Context, cfg Config, ns string, pkgs []*packages.Package,
	verify packages.VerifyOptions, registry resolve.Registry) ([]*Version, error) {
	versions, err := PrepareVersions(ctx, cfg.Client, ns, pkgs, verify, o.ReplaceOperatorVersion, cfg.ErrOut)
	if err != nil {
		return nil, err
	}
	if o.Verify {
		if err := VerifySignatures(ctx, cfg.Client, versions, registry, cfg.Out); err != nil {
			return nil, err
		}
	}
	if o.AcceptBreakingChanges {
		for _, v := range versions {
			metav1.SetMetaDataAnnotation(&v.ov.ObjectMeta, typedapi.AcceptBreakingChangesAnnotation, "true")
		}
	}
	return versions, nil
}

// WaitOptions are --wait and --wait-time.
type WaitOptions struct {
	Wait     bool
	WaitTime time.Duration
}

// AddFlags adds the flags; help says what the verb waits for.
func (o *WaitOptions) AddFlags(f *pflag.FlagSet, help string) {
	clientutil.WaitFlags(f, &o.Wait, &o.WaitTime, help)
}

// writeVersions writes the prepared OperatorVersions, dependencies first.
func writeVersions(ctx context.Context, cfg Config, versions []*Version) error {
	for _, v := range versions {
		if err := v.Write(ctx, cfg.Client, cfg.Out); err != nil {
			return err
		}
	}
	return nil
}

// NewConfig acts with c in namespace ns, saying what it does to streams.
func NewConfig(c client.Client, ns string, streams genericiooptions.IOStreams) Config {
	return Config{Client: c, Namespace: ns, Out: streams.Out, ErrOut: streams.ErrOut}
}

// CapabilitiesOf reads the Capabilities of the cluster the flags name when
// first asked, and again as the manager does (chartrender.Discovered): a
// dashboard runs for hours. It asks the cluster, not kubectl's discovery
// cache, which may be hours old and miss a CRD the manager's charts see.
func CapabilitiesOf(flags *genericclioptions.ConfigFlags) func() (*chartrender.Capabilities, error) {
	discovered := sync.OnceValues(func() (*chartrender.Discovered, error) {
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return nil, err
		}
		discoverer, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return chartrender.NewDiscovered(discoverer, chartrender.DiscoveryTTL, clock.RealClock{}), nil
	})
	return func() (*chartrender.Capabilities, error) {
		d, err := discovered()
		if err != nil {
			return nil, err
		}
		return d.Get()
	}
}

// RunE is the RunE of a verb that acts on the cluster: it connects to the
// cluster the flags name, then runs the verb in the namespace they name.
func RunE(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams,
	run func(ctx context.Context, cfg Config, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, ns, err := clientutil.New(flags)
		if err != nil {
			return err
		}
		cfg := NewConfig(c, ns, streams)
		cfg.Capabilities = CapabilitiesOf(flags)
		return run(cmd.Context(), cfg, args)
	}
}
