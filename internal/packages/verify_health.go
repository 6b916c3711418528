package packages

import (
	"errors"

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
	rules, misplaced := healthrule.Rules(v.p.Operator.HealthChecks, v.p.Operator.Tasks)
	for _, err := range misplaced {
		v.r.errorf(OperatorFileName, err.Field, "%s", err.Message)
	}
	for _, rule := range rules {
		if rule.Check != "" {
			s, typed := schemaOf(rule.Kind)
			v.healthRule(rule.Field, rule.Source, s, typed)
			continue
		}
		kinds := v.appliedKinds(&v.p.Operator.Tasks[rule.Task])
		if len(kinds) == 0 {
			v.healthRule(rule.Field, rule.Source, healthrule.Schema{}, false)
		}
		for _, gvk := range kinds {
			s, typed := schemaOf(gvk)
			v.healthRule(rule.Field, rule.Source, s, typed)
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
