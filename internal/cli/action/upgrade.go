package action

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/preview"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Upgrade is `kubectl kudo upgrade`: move an Instance to a newer
// OperatorVersion of its package; its upgrade plan (or update, or deploy)
// runs.
type Upgrade struct {
	PackageOptions
	ParameterOptions
	WriteOptions
	// Package names the package to upgrade to.
	Package  string
	Instance string
}

// Run checks that the package is the Instance's, and newer, installs its
// OperatorVersion and its dependencies' next to the current one (which may
// be in another namespace than the Instance) and points the Instance at
// it; it returns the change and the OperatorVersion upgraded to.
func (a *Upgrade) Run(ctx context.Context, cfg Config) (*Change, *kudov1beta1.OperatorVersion, error) {
	u, err := a.prepare(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	clientutil.WarnPlainSensitive(cfg.ErrOut, u.changes, u.ov.Spec.Parameters)
	if err := writeVersions(ctx, cfg, u.versions); err != nil {
		return nil, nil, err
	}
	change, err := pointInstance(ctx, cfg.Client, u.instance, u.ov, u.changes)
	return change, u.ov, err
}

// Preview says what the upgrade would do (previewer), writing nothing: the
// OperatorVersions' writes are dry runs, which admission checks.
func (a *Upgrade) Preview(ctx context.Context, cfg Config) (*preview.Report, error) {
	u, err := a.prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p := newPreviewer(cfg, u.versions)
	after := u.instance.DeepCopy()
	after.Spec.OperatorVersion.Name = u.ov.Name
	u.changes.ApplyTo(&after.Spec)
	if err := p.writeVersions(ctx, u.versions); err != nil {
		return refused(&preview.Report{Instance: after.Name, Namespace: after.Namespace, OperatorVersion: u.ov.Name, Action: "upgrade"}, err)
	}
	return p.report(ctx, "upgrade", u.instance, after, u.ov, 0)
}

// upgrading is an upgrade checked and ready to write.
type upgrading struct {
	instance *kudov1beta1.Instance
	ov       *kudov1beta1.OperatorVersion
	versions []*Version
	changes  params.Assigned
}

// prepare checks that the package is the Instance's, and newer, and
// prepares its OperatorVersion and its dependencies' next to the current
// one (which may be in another namespace than the Instance).
func (a *Upgrade) prepare(ctx context.Context, cfg Config) (*upgrading, error) {
	i, current, err := clientutil.GetInstance(ctx, cfg.Client, cfg.Namespace, a.Instance)
	if err != nil {
		return nil, err
	}
	p, deps, err := a.Resolve(ctx, a.Package, func(p *packages.Package) error {
		if p.Operator.Name != current.Spec.Operator.Name {
			return fmt.Errorf("package %s is not %s, the package of Instance %s", p.Operator.Name, current.Spec.Operator.Name, i.Name)
		}
		return newer(p.Operator.OperatorVersion, current.Spec.Version)
	})
	if err != nil {
		return nil, err
	}
	changes, kept, err := a.keptParameters(i, p)
	if err != nil {
		return nil, err
	}
	// As KUDO's upgrade: deploy is only needed to install; an upgrade runs
	// the upgrade plan, or update, or deploy, whichever the package has.
	verify := packages.VerifyOptions{SkipDeployPlan: true, Values: kept.Parameters}
	versions, err := a.Prepare(ctx, cfg, i.OperatorVersionNamespace(), append(deps, p), verify, a.Registry)
	if err != nil {
		return nil, err
	}
	return &upgrading{instance: i, ov: versions[len(versions)-1].OperatorVersion(), versions: versions, changes: changes}, nil
}

// keptParameters are the parameter changes the flags make and the spec the
// Instance keeps with them: the templates render with its own parameters
// and the changes. A package whose parameters do not convert has no changes
// to resolve; verifying it says why.
func (a *Upgrade) keptParameters(i *kudov1beta1.Instance, p *packages.Package) (params.Assigned, *kudov1beta1.InstanceSpec, error) {
	kept := i.Spec.DeepCopy()
	_, ov, err := p.Convert(i.OperatorVersionNamespace())
	if err != nil {
		return params.Assigned{}, kept, nil
	}
	changes, err := a.Assign(params.Optional(ov.Spec.Parameters))
	if err != nil {
		return params.Assigned{}, nil, err
	}
	changes.ApplyTo(kept)
	return changes, kept, nil
}

// pointInstance points the Instance at ov with the changes: through the
// typed object that makes it, if there is one, else by patching it.
func pointInstance(ctx context.Context, c client.Client, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion,
	changes params.Assigned) (*Change, error) {
	if typed := typedapi.HolderAt(i, ov); typed != nil {
		if err := upgradeTyped(ctx, c, typed, ov, changes); err != nil {
			return nil, err
		}
		return typedChange(i, typed, func(i *kudov1beta1.Instance) bool {
			return i.Spec.OperatorVersion.Name == ov.Name && changes.AppliedTo(i)
		}), nil
	}
	patch := client.MergeFrom(i.DeepCopy())
	i.Spec.OperatorVersion.Name = ov.Name
	changes.ApplyTo(&i.Spec)
	if err := c.Patch(ctx, i, patch); err != nil {
		return nil, fmt.Errorf("upgrading Instance %s: %w", i.Name, err)
	}
	return instanceChange(i), nil
}

// upgradeTyped points the typed object that makes the Instance at ov, with
// the changes, at the API version ov serves, once its typed API serves it
// with the fields they set: the API server converts the object's other
// values by the package's rules.
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

// newer refuses a version that is not newer than the installed one: an
// upgrade only goes forward.
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

// Fleet are the Instances of the namespace that run the package's
// Operator and whose labels — a typed object's, for the Instance it makes
// — match selector: those `kubectl kudo upgrade -l` upgrades, by name.
func (a *Upgrade) Fleet(ctx context.Context, cfg Config, selector string) ([]string, error) {
	matches, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("--selector: %w", err)
	}
	p, _, err := a.Resolve(ctx, a.Package, nil)
	if err != nil {
		return nil, err
	}
	list := &kudov1beta1.InstanceList{}
	if err := cfg.Client.List(ctx, list, client.InNamespace(cfg.Namespace)); err != nil {
		return nil, err
	}
	var names []string
	for k := range list.Items {
		i := &list.Items[k]
		ov := &kudov1beta1.OperatorVersion{}
		if err := cfg.Client.Get(ctx, i.OperatorVersionKey(), ov); err != nil || ov.Spec.Operator.Name != p.Operator.Name {
			continue
		}
		set := i.Labels
		if typed := typedapi.HolderOf(i); typed != nil {
			if err := cfg.Client.Get(ctx, client.ObjectKeyFromObject(typed), typed); err != nil {
				return nil, fmt.Errorf("reading %s: %w", clientutil.TypedName(typed), err)
			}
			set = typed.GetLabels()
		}
		if matches.Matches(labels.Set(set)) {
			names = append(names, i.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}
