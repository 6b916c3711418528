package task

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/render"
)

// helm renders a chart of the package with Helm's library and applies its
// objects as an Apply task applies a template's: server-side apply,
// ownership, inventory, drift correction, pruning, health. It goes as Helm
// does, each wave healthy before the next: the chart's CRDs, its
// pre-install and pre-upgrade hooks (a Job complete), its objects, its
// post-install and post-upgrade hooks, the hooks by their weight. The
// Instance's first plan run is the chart's install, a later one its
// upgrade: that makes the upgrade hooks anew, as each `helm upgrade` runs
// them again, and keeps the install hooks as they are. Test hooks are left
// out, as `helm install` leaves them; hooks of deletion and rollback are
// refused: a plan (cleanup, a rollback's) is where such work goes.
type helm struct{}

func (helm) Validate(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path) field.ErrorList {
	if spec.Chart == "" {
		return field.ErrorList{field.Required(at.Child("chart"), "a Helm task needs the chart it renders, of the package's charts/")}
	}
	var errs field.ErrorList
	if _, ok := defs.Charts[spec.Chart]; !ok {
		errs = append(errs, field.Invalid(at.Child("chart"), spec.Chart, fmt.Sprintf("chart %q is not in charts/", spec.Chart)))
	}
	if spec.Values != "" {
		errs = append(errs, defs.template(spec.Values, at.Child("values"))...)
	}
	return errs
}

func (helm) Uses(spec *kudov1beta1.TaskSpec) Uses {
	if spec.Values == "" {
		return Uses{}
	}
	return Uses{Others: []string{spec.Values}}
}

// The stages of a Helm task, in Helm's order: the chart's CRDs, then its
// pre hooks, its objects, its post hooks.
const (
	crdsStage = iota
	preHooksStage
	objectsStage
	postHooksStage
)

// hookStage is where a hook's objects are applied.
var hookStage = map[string]int{
	"pre-install": preHooksStage, "pre-upgrade": preHooksStage, "post-install": postHooksStage, "post-upgrade": postHooksStage,
}

// Helm runs the hooks of upgrades at every upgrade, deleting the last run's
// hook first (its default policy, before-hook-creation): a plan run after
// the one that made them makes them anew. A hook of installs only it leaves
// as it is at an upgrade, and one of upgrades only out of an install.
func ofUpgrades(event string) bool { return event == "pre-upgrade" || event == "post-upgrade" }
func ofInstalls(event string) bool { return event == "pre-install" || event == "post-install" }

// hookKey names a hook's object as Helm does.
type hookKey struct{ kind, name string }

// wave is one wave of a Helm task: a stage, and of hooks their weight
// (helm.sh/hook-weight): Helm runs the hooks of one weight, and waits for
// them, before those of the next.
type wave struct{ stage, weight int }

func (helm) Build(t *kudov1beta1.Task, in *Input) (*Intent, error) {
	spec := &t.Spec.HelmTaskSpec
	site := &in.Site
	chart, ok := site.OperatorVersion.Spec.Charts[spec.Chart]
	if !ok {
		return nil, Fatalf("chart %q is not in the OperatorVersion", spec.Chart)
	}
	var values map[string]any
	if spec.Values != "" {
		vars := site.Variables()
		var err error
		if _, values, err = site.Limits.ParameterFile(spec.Values, site.OperatorVersion.Spec.Templates[spec.Values], &vars); err != nil {
			return nil, err
		}
	}
	chartReq := &chartrender.Request{
		Chart: chart, Values: values,
		Release: chartrender.Release{Name: site.Instance, Namespace: site.Namespace, Revision: 1},
	}
	if in.Capabilities != nil {
		caps, err := in.Capabilities()
		if err != nil {
			return nil, fmt.Errorf("chart %s: its .Capabilities: %w", spec.Chart, err)
		}
		chartReq.KubeVersion, chartReq.APIVersions = caps.KubeVersion, caps.APIVersions
	}
	limits := chartrender.DefaultLimits
	limits.Share = site.Namespace
	res, err := chartrender.Render(context.Background(), chartReq, limits)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", spec.Chart, err)
	}
	waves := map[wave][]render.Rendered{}
	var tests, upgrades []string
	runs := map[hookKey]HookRun{}
	install := site.Revision == 1
	for _, h := range res.Hooks {
		stage, ok := -1, false
		for _, e := range h.Events {
			if st, known := hookStage[e]; known {
				stage, ok = st, true
			} else if e != "test" {
				return nil, Fatalf("chart %s: hook %s %s runs at %s, which a Helm task does not run: do it in a plan of its own",
					spec.Chart, h.Kind, h.Name, e)
			}
		}
		switch {
		case !ok:
			tests = append(tests, h.Kind+" "+h.Name)
			continue
		case install && !slices.ContainsFunc(h.Events, ofInstalls):
			upgrades = append(upgrades, h.Kind+" "+h.Name)
			continue
		}
		objs, err := site.Limits.Objects(h.Template, h.Content)
		if err != nil {
			return nil, err
		}
		runs[hookKey{h.Kind, h.Name}] = KeptHook
		if slices.ContainsFunc(h.Events, ofUpgrades) {
			runs[hookKey{h.Kind, h.Name}] = RemadeHook
		}
		at := wave{stage: stage, weight: h.Weight}
		waves[at] = append(waves[at], render.Rendered{Name: h.Template, Objects: objs})
	}
	for stage, manifests := range map[int][]chartrender.Manifest{crdsStage: res.CRDs, objectsStage: res.Manifests} {
		for _, m := range manifests {
			objs, err := site.Limits.Objects(m.Template, m.Content)
			if err != nil {
				return nil, err
			}
			waves[wave{stage: stage}] = append(waves[wave{stage: stage}], render.Rendered{Name: m.Template, Objects: objs})
		}
	}
	req := &render.Request{Metadata: site.Metadata(), Served: in.Served, Scope: in.Scope, Dependencies: in.Dependencies, Limits: site.Limits}
	intent := &Intent{Action: ActionApply}
	inOrder := slices.SortedFunc(maps.Keys(waves), func(a, b wave) int {
		return cmp.Or(cmp.Compare(a.stage, b.stage), cmp.Compare(a.weight, b.weight))
	})
	for _, at := range inOrder {
		prepared, err := render.Prepare(req, waves[at])
		if err != nil {
			return nil, err
		}
		if len(prepared.Objects) > 0 {
			intent.Waves = append(intent.Waves, prepared.Objects)
		}
		if at.stage == preHooksStage || at.stage == postHooksStage {
			for _, obj := range prepared.Objects {
				if intent.Hooks == nil {
					intent.Hooks = map[kudov1beta1.ObjectRef]HookRun{}
				}
				intent.Hooks[inventory.RefOf(obj)] = runs[hookKey{obj.GetKind(), obj.GetName()}]
			}
		}
		intent.Objects = append(intent.Objects, prepared.Objects...)
		intent.Migrations = append(intent.Migrations, prepared.Migrations...)
	}
	var notes []string
	if len(tests) > 0 {
		notes = append(notes, "test hooks not run: "+strings.Join(tests, ", "))
	}
	if len(upgrades) > 0 {
		notes = append(notes, "upgrade hooks not run at install: "+strings.Join(upgrades, ", "))
	}
	intent.Note = strings.Join(notes, "; ")
	return intent, nil
}

// Run applies the waves of the chart's objects, each healthy before the
// next.
func (h helm) Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error) {
	intent, err := env.build(ctx, h, t)
	if err != nil {
		return Result{}, err
	}
	return applyIntent(ctx, env, t.Name, intent)
}

func (helm) Access(r *Rendered) []Access { return applying(r.Objects) }
func (helm) Rerenders() bool             { return true }
