package webhook

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/task"
)

// ValidateOperatorVersion refuses what can never run: a plan naming an
// undefined task, a trigger naming a missing plan, a task without the spec
// its kind needs, a timeout that is not positive. Everything else KUDO accepted passes — an OperatorVersion
// with `deploy: {}` and no templates among it; package rules such as semver
// are `kubectl kudo package verify`'s.
func ValidateOperatorVersion(ov *kudov1beta1.OperatorVersion) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	defs := task.DefinitionsOf(ov)
	for i, t := range ov.Spec.Tasks {
		// An unknown kind is the CRD's enum to refuse.
		if kind, err := task.For(t.Kind); err == nil {
			errs = append(errs, task.Required(kind.Validate(&t.Spec, defs, spec.Child("tasks").Index(i).Child("spec")))...)
		}
	}
	tasks := ov.Spec.TasksByName()
	for _, name := range engine.PlanNames(ov.Spec.Plans) {
		plan := spec.Child("plans").Key(name)
		errs = append(errs, positive(ov.Spec.Plans[name].Timeout, plan.Child("timeout"))...)
		for i, phase := range ov.Spec.Plans[name].Phases {
			for j, step := range phase.Steps {
				errs = append(errs, positive(step.Timeout, plan.Child("phases").Index(i).Child("steps").Index(j).Child("timeout"))...)
				for k, t := range step.Tasks {
					if _, ok := tasks[t]; !ok {
						errs = append(errs, field.NotFound(
							spec.Child("plans").Key(name).Child("phases").Index(i).Child("steps").Index(j).Child("tasks").Index(k), t))
					}
				}
			}
		}
	}
	for i, p := range ov.Spec.Parameters {
		if _, ok := ov.Spec.Plans[p.Trigger]; p.Trigger != "" && !ok {
			errs = append(errs, field.NotFound(spec.Child("parameters").Index(i).Child("trigger"), p.Trigger))
		}
	}
	return errs
}

// positive refuses a timeout that would end a run before it starts.
func positive(timeout *metav1.Duration, at *field.Path) field.ErrorList {
	if timeout != nil && timeout.Duration <= 0 {
		return field.ErrorList{field.Invalid(at, timeout.Duration.String(), "a timeout must be positive")}
	}
	return nil
}
