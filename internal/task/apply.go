package task

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/objects"
)

// apply renders its templates, applies them with server-side apply and is
// done when every object is healthy. CustomResourceDefinitions and
// Namespaces go first and must be Established / Active before the rest, so a
// package can ship a CRD and its custom resources in one step.
type apply struct{}

func (apply) Validate(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path) field.ErrorList {
	return validateResources(spec, defs, at, field.Required(at.Child("resources"), "an Apply task needs the templates it renders"))
}

// validateResources checks the templates of an Apply, Delete or Toggle
// task; none is the error when it lists none.
func validateResources(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path, none *field.Error) field.ErrorList {
	if len(spec.Resources) == 0 {
		return field.ErrorList{none}
	}
	var errs field.ErrorList
	for i, name := range spec.Resources {
		errs = append(errs, defs.template(name, at.Child("resources").Index(i))...)
	}
	return errs
}

func (apply) Uses(spec *kudov1beta1.TaskSpec) Uses {
	return Uses{Objects: spec.Resources}
}

func (apply) Build(t *kudov1beta1.Task, in *Input) (*Intent, error) {
	return renderObjects(ActionApply, t.Spec.Resources, in)
}

// Run applies what changed and reports what is not healthy yet.
func (a apply) Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error) {
	intent, err := env.build(ctx, a, t)
	if err != nil {
		return Result{}, err
	}
	return applyIntent(ctx, env, t.Name, intent)
}

// applyIntent applies what a task renders, in its waves (Intent.Waves),
// each in its stages (objects.Stages), each healthy before the next.
func applyIntent(ctx context.Context, env *Env, task string, intent *Intent) (Result, error) {
	res := Result{Migrations: intent.Migrations}
	if env.Admit != nil {
		if err := env.Admit(task, intent.Objects); err != nil {
			return res, err
		}
	}
	waves := intent.Waves
	if waves == nil {
		waves = [][]*unstructured.Unstructured{intent.Objects}
	}
	for _, wave := range waves {
		for _, batch := range objects.Stages(wave) {
			applied, err := applyInOrder(ctx, env, batch, intent.Hooks)
			res.Applied = append(res.Applied, applied...)
			if err != nil {
				return res, err
			}
			waiting, notes, err := healthOf(ctx, env, task, applied)
			if err != nil {
				return res, err
			}
			if len(waiting) > 0 {
				messages := make([]string, len(waiting))
				for n, w := range waiting {
					messages[n] = w.Message
				}
				res.Message, res.Waiting = strings.Join(messages, "; "), waiting
				return res, nil
			}
			res.Message = strings.Join(notes, "; ")
		}
	}
	res.Done = true
	return res, nil
}

// healthOf judges the objects task applied; it returns what is not healthy
// yet and notes on the healthy ones.
func healthOf(ctx context.Context, env *Env, task string, applied []objects.Change) (
	waiting []kudov1beta1.ObjectHealth, notes []string, err error) {
	for _, a := range applied {
		if a.Action == objects.Deleting {
			waiting = append(waiting, health.Record(a.Object, health.Result{Status: health.InProgress,
				Message: fmt.Sprintf("%s %s: made anew in this plan run, once the last run's is deleted", a.Object.GetKind(), a.Object.GetName())}))
			continue
		}
		verdict := env.Objects.Health(ctx, env.Instance.Name, task, a.Object)
		switch {
		case verdict.Fatal:
			return nil, nil, Fatalf("%s", verdict.Message)
		case !verdict.Healthy:
			waiting = append(waiting, health.Record(a.Object, verdict))
		case verdict.Message != "":
			notes = append(notes, verdict.Message)
		}
	}
	return waiting, notes, nil
}

// maxConcurrentApplies bounds the applies of one task in flight: a package of
// a hundred ConfigMaps should not be a hundred requests at once.
const maxConcurrentApplies = 8

// applyInOrder applies objects in the order the templates list them, and
// each run of objects of one kind at once: an object may need one of another
// kind listed before it (a Pod its ServiceAccount), hardly one of its own.
// Hooks are applied as they run.
func applyInOrder(ctx context.Context, env *Env, objs []*unstructured.Unstructured, hooks map[kudov1beta1.ObjectRef]HookRun) (
	[]objects.Change, error) {
	applied := make([]objects.Change, len(objs))
	for start := 0; start < len(objs); {
		kind := objs[start].GroupVersionKind().GroupKind()
		end := start + 1
		for end < len(objs) && objs[end].GroupVersionKind().GroupKind() == kind {
			end++
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(maxConcurrentApplies)
		for i := start; i < end; i++ {
			g.Go(func() (err error) {
				write := env.Objects.Apply
				switch hooks[inventory.RefOf(objs[i])] {
				case KeptHook:
					write = env.Objects.Keep
				case RemadeHook:
					write = env.Objects.Remake
				}
				applied[i], err = applyBy(gctx, env, objs[i], write)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return slices.DeleteFunc(applied[:end], func(a objects.Change) bool { return a.Object == nil }), err
		}
		start = end
	}
	return applied, nil
}

// applyOne applies obj unless the cluster already has what kudo-ng last
// applied of it, and returns the object as the cluster has it.
func applyOne(ctx context.Context, env *Env, obj *unstructured.Unstructured) (objects.Change, error) {
	return applyBy(ctx, env, obj, env.Objects.Apply)
}

// applyBy applies obj with write, one of env.Objects' ways to.
func applyBy(ctx context.Context, env *Env, obj *unstructured.Unstructured,
	write func(context.Context, *unstructured.Unstructured) (objects.Change, error)) (objects.Change, error) {
	applied, err := write(ctx, obj)
	if err != nil {
		return applied, env.classify(obj, err)
	}
	return applied, nil
}

// OwnerReference makes the Instance the controller owner of what its tasks
// make, so that deleting it deletes them.
func OwnerReference(i *kudov1beta1.Instance) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: kudov1beta1.GroupVersion.String(), Kind: "Instance", Name: i.Name, UID: i.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}
