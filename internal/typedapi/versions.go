package typedapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/healthrule"
	"github.com/kudo-ng/kudo/internal/params"
)

// KeptFieldsAnnotation holds, on a typed object, the fields of other API
// versions of its kind that the version it was converted to has no field
// for, by version: {"v1":{"replicas":4}}. Converting back restores them,
// so that a round trip keeps every field, as Kubernetes' own conversions
// keep theirs in annotations.
const KeptFieldsAnnotation = "kudo.dev/kept-fields"

// APIVersion is one version of an Operator's typed API and the
// OperatorVersions that serve it, oldest first: the newest types its
// schema, and states the rules that convert from the version before.
type APIVersion struct {
	Name     string
	Versions []kudov1beta1.OperatorVersion
}

// Newest is the OperatorVersion that types the version's schema.
func (v *APIVersion) Newest() *kudov1beta1.OperatorVersion { return &v.Versions[len(v.Versions)-1] }

// APIVersionOf is the API version of the typed API an OperatorVersion
// serves: the one its package names (typedAPI.version in operator.yaml),
// else DefaultVersion.
func APIVersionOf(ov *kudov1beta1.OperatorVersion) string {
	if ov.Spec.TypedAPI != nil && ov.Spec.TypedAPI.Version != "" {
		return ov.Spec.TypedAPI.Version
	}
	return DefaultVersion
}

// fields are the version's fields and their parameters: the newest
// OperatorVersion's, and those only older ones of the version have.
func (v *APIVersion) fields() map[string]*kudov1beta1.Parameter {
	fields := map[string]*kudov1beta1.Parameter{}
	for i := len(v.Versions) - 1; i >= 0; i-- {
		for j := range v.Versions[i].Spec.Parameters {
			p := &v.Versions[i].Spec.Parameters[j]
			if f := FieldOf(p.Name); fields[f] == nil {
				fields[f] = p
			}
		}
	}
	return fields
}

// rule is how parameter p of the version's newest OperatorVersion converts
// from the version before: the field it comes from there, and the rule
// the newest of the version's OperatorVersions to state one states.
func (v *APIVersion) rule(p *kudov1beta1.Parameter) (source string, conversion kudov1beta1.ParameterConversion) {
	oldName := p.OldName
	var stated *kudov1beta1.ParameterConversion
	for i := len(v.Versions) - 1; i >= 0 && (oldName == "" || stated == nil); i-- {
		for _, q := range v.Versions[i].Spec.Parameters {
			if q.Name != p.Name {
				continue
			}
			oldName = cmpOr(oldName, q.OldName)
			if stated == nil {
				stated = q.Conversion
			}
		}
	}
	if stated != nil {
		conversion = *stated
	}
	return FieldOf(cmpOr(oldName, p.Name)), conversion
}

// Evolution is an Operator's typed API, its versions oldest first: the
// last is the storage version, which new objects are written in.
type Evolution []APIVersion

// EvolutionOf orders the OperatorVersions of operator, of versions, into
// the API versions they serve, by their semantic versions. A package's API
// version only moves on: an OperatorVersion that serves a version an older
// one left is refused.
func EvolutionOf(operator string, versions []kudov1beta1.OperatorVersion) (Evolution, error) {
	var own []kudov1beta1.OperatorVersion
	for _, ov := range versions {
		if ov.Spec.Operator.Name == operator {
			own = append(own, ov)
		}
	}
	var e Evolution
	for _, ov := range bySemver(own) {
		name := APIVersionOf(&ov)
		if n := len(e); n > 0 && e[n-1].Name == name {
			e[n-1].Versions = append(e[n-1].Versions, ov)
			continue
		}
		if i := e.index(name); i >= 0 {
			last := e[len(e)-1].Newest()
			return nil, fmt.Errorf("OperatorVersion %s serves the API version %s, which %s, an older version, left for %s: "+
				"a package's API version only moves on", ov.Name, name, last.Name, APIVersionOf(last))
		}
		e = append(e, APIVersion{Name: name, Versions: []kudov1beta1.OperatorVersion{ov}})
	}
	return e, nil
}

func (e Evolution) index(version string) int {
	return slices.IndexFunc(e, func(v APIVersion) bool { return v.Name == version })
}

// Storage is the version objects are stored in: the newest's.
func (e Evolution) Storage() string { return e[len(e)-1].Name }

// Compile checks the rules' expressions of every version, naming the
// OperatorVersion and parameter of one that cannot run.
func (e Evolution) Compile() error {
	for i := range e {
		for j := range e[i].Newest().Spec.Parameters {
			p := &e[i].Newest().Spec.Parameters[j]
			_, c := e[i].rule(p)
			for _, source := range []string{c.Expression, c.Reverse} {
				if _, err := compiled(e[i].Newest().Name, p.Name, source); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// expressions are the rules' expressions compiled, by where they are and
// their source: a conversion of a list converts each of its objects. At
// most maxCompiled are kept, all dropped when more are asked for.
var expressions = struct {
	sync.Mutex
	compiled map[[2]string]*healthrule.ValueExpression
}{compiled: map[[2]string]*healthrule.ValueExpression{}}

const maxCompiled = 256

// compiled is a rule's expression, named by where it is; nil for none.
func compiled(ov, param, source string) (*healthrule.ValueExpression, error) {
	if source == "" {
		return nil, nil
	}
	field := fmt.Sprintf("OperatorVersion %s: parameter %s: conversion", ov, param)
	key := [2]string{field, source}
	expressions.Lock()
	x := expressions.compiled[key]
	expressions.Unlock()
	if x != nil {
		return x, nil
	}
	x, err := healthrule.NewValueExpression(field, source)
	if err != nil {
		return nil, err
	}
	expressions.Lock()
	defer expressions.Unlock()
	if len(expressions.compiled) >= maxCompiled {
		clear(expressions.compiled)
	}
	expressions.compiled[key] = x
	return x, nil
}

// Conversion is an object converted to another API version of its kind.
type Conversion struct {
	// Object is the converted object: its spec and KeptFieldsAnnotation
	// change, and its apiVersion.
	Object map[string]any
	// Carried maps each field of the object's spec before the conversion to
	// the field that holds its value after; a field missing was carried
	// nowhere (kept in the annotation).
	Carried map[string]string
}

// Convert converts obj, a typed object of gv's group at the API version
// from, to the version to, a version at a time, by the rules each newer
// version states: obj is not changed.
func (e Evolution) Convert(ctx context.Context, obj map[string]any, group, from, to string) (*Conversion, error) {
	i, j := e.index(from), e.index(to)
	if i < 0 || j < 0 {
		return nil, fmt.Errorf("no conversion from %s to %s: the versions served are %s", from, to, strings.Join(e.names(), ", "))
	}
	out := runtime.DeepCopyJSON(obj)
	carried := map[string]string{}
	spec, _ := out["spec"].(map[string]any)
	for f := range spec {
		carried[f] = f
	}
	for i != j {
		next := i + 1
		if j < i {
			next = i - 1
		}
		step, err := e.step(ctx, out, i, next)
		if err != nil {
			return nil, err
		}
		for f, was := range carried {
			if now, ok := step[was]; ok {
				carried[f] = now
			} else {
				delete(carried, f)
			}
		}
		i = next
	}
	out["apiVersion"] = schema.GroupVersion{Group: group, Version: to}.String()
	return &Conversion{Object: out, Carried: carried}, nil
}

func (e Evolution) names() []string {
	names := make([]string, len(e))
	for i := range e {
		names[i] = e[i].Name
	}
	return names
}

// step converts obj, in place, from the version at index from to the one
// beside it, to: its spec's fields by the rules of the newer one, each
// field of the spec no rule carries kept in the annotation, and those the
// annotation kept of the version to restored where the conversion gave them
// no value. It returns where each field went.
func (e Evolution) step(ctx context.Context, obj map[string]any, from, to int) (map[string]string, error) {
	spec, _ := obj["spec"].(map[string]any)
	kept := keptFields(obj)
	var converted map[string]any
	var carried map[string]string
	var lossy map[string]bool
	var err error
	if to > from {
		converted, carried, lossy, err = e.up(ctx, obj, spec, to)
	} else {
		converted, carried, err = e.down(ctx, obj, spec, from, kept[e[to].Name])
	}
	if err != nil {
		return nil, err
	}
	for _, f := range reservedFields {
		if _, set := spec[f]; set {
			carried[f] = f
		}
	}
	dropped := map[string]any{}
	for f, v := range spec {
		if _, ok := carried[f]; !ok || lossy[f] {
			dropped[f] = v
		}
	}
	kept[e[from].Name] = dropped
	for f, v := range kept[e[to].Name] {
		if _, set := converted[f]; !set {
			converted[f] = v
		}
	}
	delete(kept, e[to].Name)
	if err := setKeptFields(obj, kept); err != nil {
		return nil, err
	}
	if spec != nil || len(converted) > 0 {
		obj["spec"] = converted
	}
	return carried, nil
}

// up converts spec to the version at index to from the one before, by
// the rules of to's parameters: an expression, else the source field's
// value, mapped by the rule's values and retyped; else the rule's
// default. It returns the spec and, for each source field, the field
// that carries it.
func (e Evolution) up(ctx context.Context, obj, spec map[string]any, to int) (
	converted map[string]any, carried map[string]string, lossy map[string]bool, err error) {
	before := e[to-1].fields()
	converted, carried, lossy = sharedFields(spec), map[string]string{}, map[string]bool{}
	newest := e[to].Newest()
	for k := range newest.Spec.Parameters {
		p := &newest.Spec.Parameters[k]
		field := FieldOf(p.Name)
		source, rule := e[to].rule(p)
		value, set := spec[source]
		if x, err := compiled(newest.Name, p.Name, rule.Expression); err != nil || x != nil {
			if err != nil {
				return nil, nil, nil, err
			}
			// An object's values are its writer's: an expression that fails
			// on them, or runs out of its bounds, gives no value, and the
			// annotation keeps the value it was given.
			if v, ok, err := x.Eval(ctx, obj); err == nil && ok && v != nil {
				converted[field] = v
				if set {
					carried[source], lossy[source] = field, rule.Reverse == ""
				}
				continue
			}
		} else if set {
			if v, err := retype(value, typeOf(before[source]), p.Type, rule.Values); err == nil {
				converted[field], carried[source], lossy[source] = v, field, !invertible(rule.Values, value, v, typeOf(before[source]), p.Type)
				continue
			}
		}
		if rule.Default != nil && converted[field] == nil {
			if v, err := Value(*rule.Default, p.Type); err == nil {
				converted[field] = v
			}
		}
	}
	return converted, carried, lossy, nil
}

// down converts spec to the version before the one at index from, by the
// rules of from's parameters, the other way: a reverse expression, else
// the field's value, mapped back by the inverse of the rule's values where
// it is one, and retyped. A field computed by an expression with no
// reverse is not carried back: the annotation keeps the value it had.
func (e Evolution) down(ctx context.Context, obj, spec map[string]any, from int, kept map[string]any) (
	converted map[string]any, carried map[string]string, err error) {
	before := e[from-1].fields()
	converted, carried = sharedFields(spec), map[string]string{}
	newest := e[from].Newest()
	for k := range newest.Spec.Parameters {
		p := &newest.Spec.Parameters[k]
		field := FieldOf(p.Name)
		source, rule := e[from].rule(p)
		target := before[source]
		if target == nil {
			continue
		}
		value, set := spec[field]
		if x, err := compiled(newest.Name, p.Name, rule.Reverse); err != nil || x != nil {
			if err != nil {
				return nil, nil, err
			}
			if v, ok, err := x.Eval(ctx, obj); err == nil && ok && v != nil {
				converted[source] = v
				if set {
					carried[field] = source
				}
			}
			continue
		}
		if !set || rule.Expression != "" {
			continue
		}
		if v, err := retype(value, p.Type, target.Type, inverseOf(rule.Values, kept[source], target.Type)); err == nil {
			converted[source], carried[field] = v, source
		}
	}
	return converted, carried, nil
}

// sharedFields are the fields of spec a typed object shares with an
// Instance's spec, which every version has.
func sharedFields(spec map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range reservedFields {
		if v, ok := spec[f]; ok {
			out[f] = v
		}
	}
	return out
}

func typeOf(p *kudov1beta1.Parameter) kudov1beta1.ParameterType {
	if p == nil {
		return ""
	}
	return p.Type
}

// retype is value, a field's of type from, as a field of type to holds
// it, through the string an Instance would hold it as, mapped by values.
func retype(value any, from, to kudov1beta1.ParameterType, values map[string]string) (any, error) {
	s, err := params.Wrap(value, from)
	if err != nil {
		return nil, err
	}
	if mapped, ok := values[s]; ok {
		s = mapped
	}
	return Value(s, to)
}

// inverseOf is the way back of a rule's values: their inverse, where two
// values map to one the value the annotation kept (was) when it maps to
// it, else the least.
func inverseOf(values map[string]string, was any, t kudov1beta1.ParameterType) map[string]string {
	inverse := make(map[string]string, len(values))
	for _, from := range slices.Sorted(maps.Keys(values)) {
		if _, taken := inverse[values[from]]; !taken {
			inverse[values[from]] = from
		}
	}
	if was != nil {
		if s, err := params.Wrap(was, t); err == nil {
			to, mapped := values[s]
			if !mapped {
				to = s
			}
			inverse[to] = s
		}
	}
	return inverse
}

// invertible says whether the way back (inverseOf) gives value, of type
// from, again from converted, the value of type to a rule's values gave
// it: not when two values map to one, nor when a value no rule maps is one
// another maps to, nor when a retyping loses what it was ("04" → 4).
func invertible(values map[string]string, value, converted any, from, to kudov1beta1.ParameterType) bool {
	back, err := retype(converted, to, from, inverseOf(values, nil, from))
	return err == nil && equalJSON(back, value)
}

func equalJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// keptFields are the fields the annotation keeps, by version. Its writer
// may write anything there: what is not such an object is dropped, since
// one object that does not convert fails a list of all.
func keptFields(obj map[string]any) map[string]map[string]any {
	kept := map[string]map[string]any{}
	metadata, _ := obj["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	if s, _ := annotations[KeptFieldsAnnotation].(string); s != "" {
		if err := json.Unmarshal([]byte(s), &kept); err != nil {
			return map[string]map[string]any{}
		}
	}
	return kept
}

func setKeptFields(obj map[string]any, kept map[string]map[string]any) error {
	maps.DeleteFunc(kept, func(_ string, fields map[string]any) bool { return len(fields) == 0 })
	metadata, _ := obj["metadata"].(map[string]any)
	if metadata == nil {
		metadata = map[string]any{}
		obj["metadata"] = metadata
	}
	annotations, _ := metadata["annotations"].(map[string]any)
	if len(kept) == 0 {
		delete(annotations, KeptFieldsAnnotation)
		if annotations != nil && len(annotations) == 0 {
			delete(metadata, "annotations")
		}
		return nil
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	if annotations == nil {
		annotations = map[string]any{}
		metadata["annotations"] = annotations
	}
	annotations[KeptFieldsAnnotation] = string(b)
	return nil
}
