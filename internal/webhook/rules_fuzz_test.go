package webhook

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// The bits of FuzzInstanceRules' flags.
const (
	hasDefault uint8 = 1 << iota
	isRequired
	isImmutable
	isSensitive
	hasEnum
	valueSet
	valueFromSecret
	valueOfAnother // set for name+"x", which the OperatorVersion does not define
)

// FuzzInstanceRules feeds a parameter of any type, default, enum and flags,
// and an Instance's value for it, to the create and update rules:
// validating is deterministic; a refusal names the parameter or the field,
// and never quotes a sensitive value; and, when the OperatorVersion passes
// admission and its defaults fit their parameters, an Instance accepted
// stays accepted once defaulted, and an update that changes nothing is
// accepted and schedules nothing.
func FuzzInstanceRules(f *testing.F) {
	for _, seed := range []struct {
		name, typ, def, enum, value, secret string
		flags                               uint8
	}{
		{"SIZE", "", "small", "", "small", "", hasDefault | isImmutable | valueSet},
		{"COUNT", "integer", "1", "", "x", "", hasDefault | valueSet},
		{"LEVEL", "", "low", "low,high", "mid", "", hasDefault | hasEnum | valueSet},
		{"TOKEN", "", "", "", "", "", isRequired},
		{"PASSWORD", "integer", "", "", "hunter2", "", isRequired | isSensitive | valueSet},
		{"PASSWORD", "", "", "", "", "creds", isRequired | isSensitive | valueFromSecret},
		{"LIST", "array", "[1]", "", "[1, {a: b}]", "", hasDefault | valueSet},
		{"MAP", "map", "{}", "", "{a: [", "", isSensitive | valueSet},
		{"FLAG", "boolean", "true", "", "yes", "", hasDefault | isImmutable | valueOfAnother},
	} {
		f.Add(seed.name, seed.typ, seed.def, seed.enum, seed.value, seed.secret, seed.flags)
	}
	f.Fuzz(func(t *testing.T, name, typ, def, enum, value, secret string, flags uint8) {
		name = "P" + name // the CRD requires a name
		ov := operatorVersion(func(ov *kudov1beta1.OperatorVersion) {
			ov.Spec.Parameters = []kudov1beta1.Parameter{fuzzedParameter(name, typ, def, enum, flags)}
		})
		i := instance(func(i *kudov1beta1.Instance) {
			i.Spec.Parameters = map[string]string{}
			i.Status = kudov1beta1.InstanceStatus{}
		})
		switch {
		case flags&valueOfAnother != 0:
			i.Spec.Parameters[name+"x"] = value
		case flags&valueSet != 0:
			i.Spec.Parameters[name] = value
		}
		if flags&valueFromSecret != 0 {
			i.Spec.SecretParameters = map[string]kudov1beta1.SecretKeyReference{name: {Name: secret, Key: secret}}
		}

		err := ValidateCreate(i, ov)
		if again := ValidateCreate(i.DeepCopy(), ov); errorText(err) != errorText(again) {
			t.Fatalf("validating twice: %v, then %v", err, again)
		}
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, name) && !strings.Contains(msg, "spec.") {
				t.Fatalf("the refusal %q names neither the parameter %s nor a field", msg, name)
			}
			shownElsewhere := strings.Contains(name+typ+def+enum+secret, value)
			if flags&isSensitive != 0 && !shownElsewhere && strings.Contains(msg, strconv.Quote(value)) {
				t.Fatalf("the refusal %q quotes the sensitive value", msg)
			}
		}
		if len(ValidateOperatorVersion(ov)) > 0 || !defaultsFit(ov) {
			return
		}

		created := i.DeepCopy()
		DefaultCreate(created, ov)
		if createErr := ValidateCreate(created, ov); createErr != nil {
			if err == nil {
				t.Fatalf("accepted, then refused once defaulted to %v: %v", created.Spec, createErr)
			}
			return
		}
		updated := created.DeepCopy()
		DefaultUpdate(created, updated, ov)
		if !reflect.DeepEqual(updated.Spec, created.Spec) {
			t.Fatalf("an update that changes nothing scheduled %v", updated.Spec.PlanExecution)
		}
		if err := ValidateUpdate(created, updated, ov); err != nil {
			t.Fatalf("an update that changes nothing was refused: %v", err)
		}
	})
}

func fuzzedParameter(name, typ, def, enum string, flags uint8) kudov1beta1.Parameter {
	p := kudov1beta1.Parameter{
		Name: name, Type: kudov1beta1.ParameterType(typ),
		Required: ptr.To(flags&isRequired != 0), Immutable: ptr.To(flags&isImmutable != 0), Sensitive: ptr.To(flags&isSensitive != 0),
	}
	if flags&hasDefault != 0 {
		p.Default = &def
	}
	if flags&hasEnum != 0 {
		values := strings.Split(enum, ",")
		p.Enum = &values
	}
	return p
}

// defaultsFit: every default fits its parameter's type and enum, which
// package verify checks and admission does not.
func defaultsFit(ov *kudov1beta1.OperatorVersion) bool {
	for i := range ov.Spec.Parameters {
		p := &ov.Spec.Parameters[i]
		if p.Default != nil && params.Check(p, *p.Default) != nil {
			return false
		}
	}
	return true
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
