package webhook

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/task"
)

// ValidateOperatorVersion refuses what can never run: a plan naming an
// undefined task, a task without the spec its kind needs, a timeout that is
// not positive. Everything else KUDO accepted passes — an OperatorVersion
// with `deploy: {}` and no templates among it, a trigger naming no plan (a
// change of its parameter is refused, as KUDO refused it); package rules
// such as semver are `kubectl kudo package verify`'s.
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
		if d.Rule != engine.TriggerWithoutPlan {
			errs = append(errs, specError(spec, d))
		}
	}
	return errs
}

// OperatorVersionWarnings are what install would warn about, and what keeps
// an admitted OperatorVersion from being Ready, as admission warnings:
// kubectl and kubectl kudo print them.
func OperatorVersionWarnings(ov *kudov1beta1.OperatorVersion, limits render.Limits) admission.Warnings {
	report := packages.VerifyOperatorVersion(ov, limits)
	warnings := make(admission.Warnings, 0, len(report.Errors)+len(report.Warnings))
	for _, issue := range append(report.Errors, report.Warnings...) {
		warnings = append(warnings, issue.String())
	}
	return warnings
}

// specError names a defect as the field of the spec it is in.
func specError(spec *field.Path, d engine.Defect) *field.Error {
	plan := spec.Child("plans").Key(d.Plan)
	step := plan.Child("phases").Index(d.Phase).Child("steps").Index(d.Step)
	switch d.Rule {
	case engine.UndefinedTask:
		return field.NotFound(step.Child("tasks").Index(d.Task), d.Value)
	case engine.PlanTimeoutNotPositive:
		return field.Invalid(plan.Child("timeout"), d.Value, "a timeout must be positive")
	default:
		return field.Invalid(step.Child("timeout"), d.Value, "a timeout must be positive")
	}
}
