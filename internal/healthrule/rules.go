package healthrule

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Rule is one health rule of a package, where operator.yaml has it.
type Rule struct {
	// Field is where it is: healthChecks[0].current,
	// tasks[2].spec.readyWhen[0].
	Field  string
	Source string
	// Check is the verdict a health check's rule gives (inProgress,
	// failed, current) of the objects of Kind; "" for a readyWhen rule.
	Check string
	Kind  schema.GroupVersionKind
	// Task is the index of the Apply task whose objects a readyWhen rule
	// judges.
	Task int
}

// Rules lists a package's health rules, and refuses those written where no
// rule can be: the one place that says which rules are well placed, for
// package verify (which compiles each, type-checked where it knows the
// schema), the OperatorVersion's webhook and the Instance's controller
// (Compile).
func Rules(healthChecks []kudov1beta1.HealthCheck, tasks []kudov1beta1.Task) ([]Rule, []*FieldError) {
	var rules []Rule
	var errs []*FieldError
	seen := map[schema.GroupVersionKind]int{}
	for n, hc := range healthChecks {
		at := fmt.Sprintf("healthChecks[%d]", n)
		if hc.APIVersion == "" || hc.Kind == "" {
			errs = append(errs, &FieldError{at, "apiVersion and kind are required: they name the objects the rule judges"})
			continue
		}
		if _, err := schema.ParseGroupVersion(hc.APIVersion); err != nil {
			// Parsed leniently, it would name a kind no object has, and the
			// rule would judge nothing.
			errs = append(errs, &FieldError{at + ".apiVersion", err.Error()})
			continue
		}
		gvk := schema.FromAPIVersionAndKind(hc.APIVersion, hc.Kind)
		if first, dup := seen[gvk]; dup {
			errs = append(errs, &FieldError{at, fmt.Sprintf("judges %s %s, as healthChecks[%d] does", hc.APIVersion, hc.Kind, first)})
			continue
		}
		seen[gvk] = n
		if hc.Current == "" {
			errs = append(errs, &FieldError{at + ".current", "is required: it says when the object is ready"})
		}
		for _, rule := range []struct{ check, source string }{{"inProgress", hc.InProgress}, {"failed", hc.Failed}, {"current", hc.Current}} {
			if rule.source != "" {
				rules = append(rules, Rule{Field: at + "." + rule.check, Source: rule.source, Check: rule.check, Kind: gvk})
			}
		}
	}
	for n := range tasks {
		t := &tasks[n]
		for m, source := range t.Spec.ReadyWhen {
			at := fmt.Sprintf("tasks[%d].spec.readyWhen[%d]", n, m)
			if t.Kind != kudov1beta1.ApplyTaskKind {
				errs = append(errs, &FieldError{at, fmt.Sprintf("readyWhen judges what an Apply task applies; task %s is a %s task", t.Name, t.Kind)})
				continue
			}
			rules = append(rules, Rule{Field: at, Source: source, Task: n})
		}
	}
	return rules, errs
}
