package packages

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/healthrule"
)

// healthRules compiles the package's health rules and, where the schema of
// the kind they judge is known — a CRD the templates ship, or a built-in
// kind — type-checks them against it, as the API server does a CRD's
// validation rules: a misspelled field is refused before anything runs.
func (v *verifier) healthRules() {
	schemas := v.shippedSchemas()
	schemaOf := func(gvk schema.GroupVersionKind) (healthrule.Schema, bool) {
		if s, ok := schemas[gvk]; ok {
			return s, true
		}
		return healthrule.BuiltinSchema(gvk)
	}
	seen := map[schema.GroupVersionKind]int{}
	for n, hc := range v.p.Operator.HealthChecks {
		at := fmt.Sprintf("healthChecks[%d]", n)
		if hc.APIVersion == "" || hc.Kind == "" {
			v.r.errorf(OperatorFileName, at, "apiVersion and kind are required: they name the objects the rule judges")
			continue
		}
		gvk := schema.FromAPIVersionAndKind(hc.APIVersion, hc.Kind)
		if first, dup := seen[gvk]; dup {
			v.r.errorf(OperatorFileName, at, "judges %s %s, as healthChecks[%d] does", hc.APIVersion, hc.Kind, first)
			continue
		}
		seen[gvk] = n
		if hc.Current == "" {
			v.r.errorf(OperatorFileName, at+".current", "is required: it says when the object is ready")
		}
		s, typed := schemaOf(gvk)
		for _, rule := range []struct{ name, source string }{{"inProgress", hc.InProgress}, {"failed", hc.Failed}, {"current", hc.Current}} {
			if rule.source != "" {
				v.healthRule(at+"."+rule.name, rule.source, s, typed)
			}
		}
	}
	for n := range v.p.Operator.Tasks {
		t := &v.p.Operator.Tasks[n]
		for m, source := range t.Spec.ReadyWhen {
			at := fmt.Sprintf("tasks[%d].spec.readyWhen[%d]", n, m)
			if t.Kind != kudov1beta1.ApplyTaskKind {
				v.r.errorf(OperatorFileName, at, "readyWhen judges what an Apply task applies; task %s is a %s task", t.Name, t.Kind)
				continue
			}
			kinds := v.appliedKinds(t)
			if len(kinds) == 0 {
				v.healthRule(at, source, healthrule.Schema{}, false)
			}
			for _, gvk := range kinds {
				s, typed := schemaOf(gvk)
				v.healthRule(at, source, s, typed)
			}
		}
	}
}

// healthRule compiles a rule, type-checked against s when typed.
func (v *verifier) healthRule(field, source string, s healthrule.Schema, typed bool) {
	var err error
	if typed {
		err = healthrule.Typecheck(field, source, s)
	} else {
		_, err = healthrule.NewExpression(field, source)
	}
	if fe := (*healthrule.FieldError)(nil); errors.As(err, &fe) {
		v.r.errorf(OperatorFileName, fe.Field, "%s", fe.Message)
	}
}

// shippedSchemas are the schemas of the CRDs the templates render.
func (v *verifier) shippedSchemas() map[schema.GroupVersionKind]healthrule.Schema {
	out := map[schema.GroupVersionKind]healthrule.Schema{}
	for _, name := range sortedKeys(v.rendered) {
		for _, obj := range v.rendered[name] {
			if obj.GroupVersionKind().GroupKind() != crd.GroupKind {
				continue
			}
			schemas, err := healthrule.CRDSchemas(obj, TemplatesDir+name)
			if err != nil {
				continue // the API server says what is wrong with it
			}
			for gvk, s := range schemas {
				out[gvk] = s
			}
		}
	}
	return out
}

// appliedKinds are the kinds of the objects an Apply task's templates
// render, once each, in order.
func (v *verifier) appliedKinds(t *kudov1beta1.Task) []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	seen := map[schema.GroupVersionKind]bool{}
	for _, name := range t.Spec.Resources {
		for _, obj := range v.rendered[name] {
			if gvk := obj.GroupVersionKind(); !seen[gvk] {
				seen[gvk] = true
				kinds = append(kinds, gvk)
			}
		}
	}
	return kinds
}
