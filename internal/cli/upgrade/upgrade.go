// Package upgrade is `kubectl kudo upgrade`: move an Instance to a newer
// OperatorVersion of its package; its upgrade plan (or update, or deploy) runs.
package upgrade

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Options are the flags of upgrade.
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
	Wait            bool
	WaitTime        time.Duration
	// ReplaceOperatorVersion replaces an installed OperatorVersion of the
	// new version that differs from the package, if no Instance uses it.
	ReplaceOperatorVersion bool
}

// NewCmd returns the upgrade command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "upgrade <name|dir|tgz|url> --instance NAME",
		Short: "Upgrade an Instance to a newer version of its package",
		Args:  cobra.ExactArgs(1),
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
	clientutil.InstanceFlag(cmd, &opts.Instance, flags)
	clientutil.ParameterFlags(f, &opts.Parameters, &opts.ParameterFiles)
	clientutil.RepoFlag(f, &opts.Repo)
	opts.Registry.AddFlags(f)
	action.VerifyFlag(f, &opts.Verify)
	f.StringVar(&opts.AppVersion, "app-version", "", "App version to upgrade to")
	f.StringVar(&opts.OperatorVersion, "operator-version", "", "Operator version to upgrade to")
	clientutil.WaitFlags(f, &opts.Wait, &opts.WaitTime, "Wait until the upgrade's plan has finished")
	clientutil.ReplaceFlag(f, &opts.ReplaceOperatorVersion)
	return cmd
}

// Run checks that the package is the Instance's, and newer, installs its
// OperatorVersion and its dependencies' next to the current one (which may
// be in another namespace than the Instance) and points the Instance at it.
func Run(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	i, current, err := clientutil.GetInstance(ctx, c, ns, opts.Instance)
	if err != nil {
		return err
	}
	p, deps, err := resolveUpgrade(ctx, i, current, opts)
	if err != nil {
		return err
	}
	changes, kept, err := keptParameters(i, p, opts)
	if err != nil {
		return err
	}
	// As KUDO's upgrade: deploy is only needed to install; an upgrade runs
	// the upgrade plan, or update, or deploy, whichever the package has.
	verify := packages.VerifyOptions{SkipDeployPlan: true, Values: kept.Parameters}
	versions, err := action.PrepareVersions(ctx, c, i.OperatorVersionNamespace(), append(deps, p), verify,
		opts.ReplaceOperatorVersion, streams.ErrOut)
	if err != nil {
		return err
	}
	if opts.Verify {
		if err := action.VerifySignatures(ctx, c, versions, opts.Registry, streams.Out); err != nil {
			return err
		}
	}
	ov := versions[len(versions)-1].OperatorVersion()
	clientutil.WarnPlainSensitive(streams.ErrOut, changes, ov.Spec.Parameters)
	for _, v := range versions {
		if err := v.Write(ctx, c, streams.Out); err != nil {
			return err
		}
	}
	if err := pointInstance(ctx, c, streams, i, ov, changes, opts.Wait); err != nil {
		return err
	}
	if !opts.Wait {
		return nil
	}
	return action.Wait(ctx, c, ns, streams.Out, i.Name, opts.WaitTime)
}

// resolveUpgrade finds the package to upgrade to, refuses it unless it is
// the Instance's package and newer than its OperatorVersion, and finds its
// dependencies: as KUDO's upgrade, and install, the new version's are
// installed with it, and its KudoOperator tasks name their packages.
func resolveUpgrade(ctx context.Context, i *kudov1beta1.Instance, current *kudov1beta1.OperatorVersion, opts *Options,
) (*packages.Package, []*packages.Package, error) {
	req := resolve.Request{
		Ref: opts.Package, AppVersion: opts.AppVersion, OperatorVersion: opts.OperatorVersion, Registry: opts.Registry,
	}
	return action.ResolvePackage(ctx, opts.Repo, req, func(p *packages.Package) error {
		if p.Operator.Name != current.Spec.Operator.Name {
			return fmt.Errorf("package %s is not %s, the package of Instance %s", p.Operator.Name, current.Spec.Operator.Name, i.Name)
		}
		return newer(p.Operator.OperatorVersion, current.Spec.Version)
	})
}

// keptParameters are the parameter changes the flags make and the spec the
// Instance keeps with them: the templates render with its own parameters
// and the changes. A package whose parameters do not convert has no changes
// to resolve; verifying it says why.
func keptParameters(i *kudov1beta1.Instance, p *packages.Package, opts *Options) (params.Assigned, *kudov1beta1.InstanceSpec, error) {
	var changes params.Assigned
	kept := i.Spec.DeepCopy()
	if _, ov, err := p.Convert(i.OperatorVersionNamespace()); err == nil {
		if changes, err = params.Resolve(params.Optional(ov.Spec.Parameters), opts.ParameterFiles, opts.Parameters); err != nil {
			return params.Assigned{}, nil, err
		}
		changes.ApplyTo(kept)
	}
	return changes, kept, nil
}

// pointInstance points the Instance at ov with the changes: through the
// typed object that makes it, if there is one (with wait, until the
// Instance has them), else by patching it.
func pointInstance(ctx context.Context, c client.Client, streams genericiooptions.IOStreams, i *kudov1beta1.Instance,
	ov *kudov1beta1.OperatorVersion, changes params.Assigned, wait bool) error {
	if typed := typedapi.HolderOf(i); typed != nil {
		if err := upgradeTyped(ctx, c, typed, ov, changes); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(streams.Out, "%s upgraded to %s\n", clientutil.TypedName(typed), ov.Name)
		if !wait {
			return nil
		}
		return clientutil.AwaitInstanceOf(ctx, c, typed, func(i *kudov1beta1.Instance) bool {
			return i.Spec.OperatorVersion.Name == ov.Name && changes.AppliedTo(i)
		})
	}
	patch := client.MergeFrom(i.DeepCopy())
	i.Spec.OperatorVersion.Name = ov.Name
	changes.ApplyTo(&i.Spec)
	if err := c.Patch(ctx, i, patch); err != nil {
		return fmt.Errorf("upgrading Instance %s: %w", i.Name, err)
	}
	_, _ = fmt.Fprintf(streams.Out, "instance.kudo.dev/%s upgraded to %s\n", i.Name, ov.Name)
	return nil
}

// upgradeTyped points the typed object that makes the Instance at ov, with
// the changes, once its typed API has the fields they set.
func upgradeTyped(ctx context.Context, c client.Client, typed *unstructured.Unstructured, ov *kudov1beta1.OperatorVersion,
	changes params.Assigned) error {
	spec, err := clientutil.TypedChanges(changes, ov.Spec.Parameters)
	if err != nil {
		return err
	}
	if err := clientutil.AwaitTypedFields(ctx, c, typed, slices.Collect(maps.Keys(spec))); err != nil {
		return err
	}
	spec[typedapi.OperatorVersionField] = ov.Name
	return clientutil.PatchTyped(ctx, c, typed, spec)
}

func newer(next, current string) error {
	n, err := semver.NewVersion(next)
	if err != nil {
		return fmt.Errorf("operator version %q is not a semantic version", next)
	}
	c, err := semver.NewVersion(current)
	if err == nil && !n.GreaterThan(c) {
		return fmt.Errorf("operator version %s is not newer than the installed %s: upgrade only goes forward", next, current)
	}
	return nil
}
