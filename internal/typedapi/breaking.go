package typedapi

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// AcceptBreakingChangesAnnotation, "true" on an OperatorVersion, accepts
// the breaking changes of its typed API knowingly (kubectl kudo install
// and upgrade --accept-breaking-changes).
const AcceptBreakingChangesAnnotation = "kudo.dev/accept-breaking-changes"

// The rules a change of a typed API's schema may break, as OLM v1's
// CustomResourceDefinition upgrade-safety names its own.
const (
	FieldRemoved     = "removed"
	TypeChanged      = "type changed"
	NewRequiredField = "new required field"
	EnumNarrowed     = "enum narrowed"
	RuleInPlace      = "rule in place"
)

// Break is a change of a typed API's schema that would lose or reject the
// values of objects of the version From, which no conversion rule covers.
type Break struct {
	// From is the API version whose objects it breaks; To the one the
	// change serves (From, when it changes From in place).
	From, To string
	// Field of spec, as From names it (To's for a new required field).
	Field string
	Rule  string
	// Why, in words.
	Why string
}

func (b Break) String() string {
	versions := b.From
	if b.To != b.From {
		versions += " → " + b.To
	}
	return fmt.Sprintf("%s: spec.%s: %s (%s)", versions, b.Field, b.Why, b.Rule)
}

// Breaks are the changes to operator's typed API that the OperatorVersion
// next makes, beside existing (the Operator's other OperatorVersions in
// its namespace), that would lose or reject the values of existing
// objects: a field removed that no rule carries, a type changed, a new
// required field without a default, a narrowed enum; in place, within an
// API version, any rule, which converts between versions. The scope of a
// typed API never changes: it is namespaced. An error when next would
// serve an API version the package has left.
func Breaks(existing []kudov1beta1.OperatorVersion, next *kudov1beta1.OperatorVersion) ([]Break, error) {
	operator := next.Spec.Operator.Name
	others := slices.DeleteFunc(slices.Clone(existing), func(ov kudov1beta1.OperatorVersion) bool { return ov.Name == next.Name })
	before, err := EvolutionOf(operator, others)
	if err != nil || len(before) == 0 {
		return nil, nil
	}
	after, err := EvolutionOf(operator, append(others, *next))
	if err != nil {
		return nil, err
	}
	k := after.index(APIVersionOf(next))
	if after[k].Newest().Name != next.Name {
		// An older version of its API version: it types no schema.
		return nil, nil
	}
	if i := before.index(after[k].Name); i >= 0 {
		return inPlace(&before[i], next), nil
	}
	if k == 0 {
		return nil, nil
	}
	return newVersion(&after[k-1], &after[k]), nil
}

// inPlace are the breaks of next, which types its API version's schema
// anew: the objects stored at it keep their values.
func inPlace(version *APIVersion, next *kudov1beta1.OperatorVersion) []Break {
	was := version.fields()
	var breaks []Break
	add := func(field, rule, why string) {
		breaks = append(breaks, Break{From: version.Name, To: version.Name, Field: field, Rule: rule, Why: why})
	}
	now := map[string]*kudov1beta1.Parameter{}
	for i := range next.Spec.Parameters {
		q := &next.Spec.Parameters[i]
		field := FieldOf(q.Name)
		now[field] = q
		p := was[field]
		if p == nil {
			if params.NeedsValue(q) {
				add(field, NewRequiredField, "required, with no default, which the objects stored do not have")
			}
		} else {
			if from, to := params.TypeOf(p.Type), params.TypeOf(q.Type); from != to && !widened(from, to) {
				add(field, TypeChanged, fmt.Sprintf("from %s to %s, which the values stored are not", from, to))
			}
			if narrowed := narrowedEnum(p, q, nil); narrowed != "" {
				add(field, EnumNarrowed, narrowed)
			}
			if !params.NeedsValue(p) && params.NeedsValue(q) {
				add(field, NewRequiredField, "required now, with no default, which objects stored without it do not have")
			}
		}
		stated := version.Newest().Spec.Parameters
		if j := slices.IndexFunc(stated, func(s kudov1beta1.Parameter) bool { return s.Name == q.Name }); (q.OldName != "" || q.Conversion != nil) &&
			(j < 0 || stated[j].OldName != q.OldName) {
			add(field, RuleInPlace, fmt.Sprintf("a conversion rule converts from the API version before: "+
				"name a new API version (typedAPI.version in operator.yaml) for it, %s serves %s", next.Name, version.Name))
		}
	}
	for _, field := range slices.Sorted(maps.Keys(was)) {
		if now[field] == nil {
			add(field, FieldRemoved, "removed, while objects that set it would lose its value at their upgrade: "+
				"keep the parameter, or name a new API version (typedAPI.version) with a rule that carries it")
		}
	}
	return breaks
}

// newVersion are the breaks of the conversion from the API version before
// to next, by next's rules.
func newVersion(before, next *APIVersion) []Break {
	was := before.fields()
	var breaks []Break
	add := func(field, rule, why string) {
		breaks = append(breaks, Break{From: before.Name, To: next.Name, Field: field, Rule: rule, Why: why})
	}
	carried := map[string]bool{}
	newest := next.Newest()
	for i := range newest.Spec.Parameters {
		q := &newest.Spec.Parameters[i]
		source, rule := next.rule(q)
		p := was[source]
		switch {
		case rule.Expression != "":
			carried[source] = true
		case p == nil:
			if params.NeedsValue(q) && rule.Default == nil {
				add(FieldOf(q.Name), NewRequiredField, "required, with no default, and no rule gives the objects of "+before.Name+" a value (conversion.default)")
			}
		default:
			carried[source] = true
			from, to := params.TypeOf(p.Type), params.TypeOf(q.Type)
			if from != to && to != kudov1beta1.StringValueType && !widened(from, to) && len(rule.Values) == 0 {
				add(source, TypeChanged, fmt.Sprintf("from %s to %s (%s), and no rule converts it (conversion.values or expression)", from, to, q.Name))
			}
			if narrowed := narrowedEnum(p, q, rule.Values); narrowed != "" {
				add(source, EnumNarrowed, narrowed+" ("+q.Name+")")
			}
		}
	}
	for _, field := range slices.Sorted(maps.Keys(was)) {
		if !carried[field] {
			add(field, FieldRemoved, fmt.Sprintf("removed in %s, and no rule carries its value (oldName, or conversion.expression)", next.Name))
		}
	}
	return breaks
}

// widened: every value of type from is one of type to.
func widened(from, to kudov1beta1.ParameterType) bool {
	return from == kudov1beta1.IntegerValueType && to == kudov1beta1.NumberValueType
}

// narrowedEnum says which values of p, mapped by values, q no longer
// allows; "" when it allows them all.
func narrowedEnum(p, q *kudov1beta1.Parameter, values map[string]string) string {
	if q.Enum == nil {
		return ""
	}
	if p.Enum == nil {
		if len(values) > 0 {
			return ""
		}
		return fmt.Sprintf("any value was allowed, now only %s", strings.Join(*q.Enum, ", "))
	}
	var gone []string
	for _, v := range *p.Enum {
		if mapped, ok := values[v]; ok {
			v = mapped
		}
		if !slices.Contains(*q.Enum, v) {
			gone = append(gone, v)
		}
	}
	if len(gone) == 0 {
		return ""
	}
	return fmt.Sprintf("%s no longer allowed", strings.Join(gone, ", "))
}

// Affected are the breaks that objects (of the version each break is
// from, as they are stored) hold values for: a field removed, retyped or
// narrowed that an object sets; a new required field, or a rule in place,
// when any object is there. Each says how many objects, naming up to three
// of namespace, the one the change is made in: those of other namespaces
// are counted, not named, as their owners are not its author.
func Affected(breaks []Break, objects map[string][]map[string]any, namespace string) []string {
	var out []string
	for _, b := range breaks {
		var here []string
		count := 0
		for _, obj := range objects[b.From] {
			spec, _ := obj["spec"].(map[string]any)
			if _, set := spec[b.Field]; !set && b.Rule != NewRequiredField && b.Rule != RuleInPlace {
				continue
			}
			count++
			metadata, _ := obj["metadata"].(map[string]any)
			if name, _ := metadata["name"].(string); metadata["namespace"] == namespace && len(here) < 3 {
				here = append(here, name)
			}
		}
		if count == 0 {
			continue
		}
		which := ""
		if len(here) > 0 {
			which = " (" + strings.Join(here, ", ") + " of this namespace)"
		}
		out = append(out, fmt.Sprintf("%s: %d object(s) hold a value it breaks%s", b, count, which))
	}
	return out
}
