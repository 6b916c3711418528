package webhook

import (
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
	for _, d := range engine.Defects(&ov.Spec) {
		errs = append(errs, specError(spec, d))
	}
	return errs
}

// specError names a defect as the field of the spec it is in.
func specError(spec *field.Path, d engine.Defect) *field.Error {
	plan := spec.Child("plans").Key(d.Plan)
	step := plan.Child("phases").Index(d.Phase).Child("steps").Index(d.Step)
	switch d.Rule {
	case engine.UndefinedTask:
		return field.NotFound(step.Child("tasks").Index(d.Task), d.Value)
	case engine.TriggerWithoutPlan:
		return field.NotFound(spec.Child("parameters").Index(d.Parameter).Child("trigger"), d.Value)
	case engine.PlanTimeoutNotPositive:
		return field.Invalid(plan.Child("timeout"), d.Value, "a timeout must be positive")
	default:
		return field.Invalid(step.Child("timeout"), d.Value, "a timeout must be positive")
	}
}
