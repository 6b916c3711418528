// Package validation checks that an OperatorVersion's parts refer to each
// other: plans to tasks, tasks to templates, triggers to plans. It takes plain
// API objects and needs no client, so the controller, the webhook and the CLI
// can share it.
package validation

import (
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// OperatorVersion returns every reference in spec that points at nothing. An
// OperatorVersion with no plans or templates at all is valid, as in KUDO.
func OperatorVersion(spec *kudov1beta1.OperatorVersionSpec) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")

	tasks := make(map[string]bool, len(spec.Tasks))
	for i, t := range spec.Tasks {
		taskPath := specPath.Child("tasks").Index(i)
		if tasks[t.Name] {
			errs = append(errs, field.Duplicate(taskPath.Child("name"), t.Name))
		}
		tasks[t.Name] = true
		for j, r := range t.Spec.Resources {
			if _, ok := spec.Templates[r]; !ok {
				errs = append(errs, field.NotFound(taskPath.Child("spec", "resources").Index(j), r))
			}
		}
		if t.Spec.Pod != "" {
			if _, ok := spec.Templates[t.Spec.Pod]; !ok {
				errs = append(errs, field.NotFound(taskPath.Child("spec", "pod"), t.Spec.Pod))
			}
		}
	}

	for _, name := range sortedKeys(spec.Plans) {
		planPath := specPath.Child("plans").Key(name)
		for i, phase := range spec.Plans[name].Phases {
			for j, step := range phase.Steps {
				for k, task := range step.Tasks {
					if !tasks[task] {
						errs = append(errs, field.NotFound(planPath.Child("phases").Index(i).Child("steps").Index(j).Child("tasks").Index(k), task))
					}
				}
			}
		}
	}

	for i, p := range spec.Parameters {
		if p.Trigger == "" {
			continue
		}
		if _, ok := spec.Plans[p.Trigger]; !ok {
			errs = append(errs, field.NotFound(specPath.Child("parameters").Index(i).Child("trigger"), p.Trigger))
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
