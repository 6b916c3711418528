package webhook

import (
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// ValidateOperatorVersion refuses what can never run: a plan naming an
// undefined task, a trigger naming a missing plan, a task whose spec its kind
// cannot use. Everything else KUDO accepted passes — an OperatorVersion with
// `deploy: {}` and no templates among it; package rules such as semver are
// `kubectl kudo package verify`'s.
func ValidateOperatorVersion(ov *kudov1beta1.OperatorVersion) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	tasks := map[string]bool{}
	for i, t := range ov.Spec.Tasks {
		path := spec.Child("tasks").Index(i)
		tasks[t.Name] = true
		switch t.Kind {
		case kudov1beta1.ApplyTaskKind, kudov1beta1.DeleteTaskKind:
			if len(t.Spec.Resources) == 0 {
				errs = append(errs, field.Required(path.Child("spec", "resources"), "an "+string(t.Kind)+" task needs the templates it renders"))
			}
		case kudov1beta1.ToggleTaskKind:
			if t.Spec.Parameter == "" {
				errs = append(errs, field.Required(path.Child("spec", "parameter"), "a Toggle task needs the boolean parameter that switches it"))
			}
		case kudov1beta1.PipeTaskKind:
			if t.Spec.Pod == "" || len(t.Spec.Pipe) == 0 {
				errs = append(errs, field.Required(path.Child("spec", "pod"), "a Pipe task needs a pod template and the files it pipes"))
			}
		case kudov1beta1.KudoOperatorTaskKind:
			if t.Spec.Package == "" {
				errs = append(errs, field.Required(path.Child("spec", "package"), "a KudoOperator task needs the package it installs"))
			}
		}
	}
	names := make([]string, 0, len(ov.Spec.Plans))
	for name := range ov.Spec.Plans {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for i, phase := range ov.Spec.Plans[name].Phases {
			for j, step := range phase.Steps {
				for k, task := range step.Tasks {
					if !tasks[task] {
						errs = append(errs, field.NotFound(
							spec.Child("plans").Key(name).Child("phases").Index(i).Child("steps").Index(j).Child("tasks").Index(k), task))
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
