package typedapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// ov is an OperatorVersion of hello at version, serving apiVersion, with
// the parameters.
func ov(version, apiVersion string, parameters ...kudov1beta1.Parameter) kudov1beta1.OperatorVersion {
	o := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: version, Parameters: parameters}}
	o.Name, o.Spec.Operator.Name = "hello-"+version, "hello"
	if apiVersion != "" {
		o.Spec.TypedAPI = &kudov1beta1.TypedAPI{Version: apiVersion}
	}
	return o
}

func evolution(t *testing.T, versions ...kudov1beta1.OperatorVersion) typedapi.Evolution {
	t.Helper()
	e, err := typedapi.EvolutionOf("hello", versions)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Compile(); err != nil {
		t.Fatal(err)
	}
	return e
}

// object is a typed object with spec, given as JSON.
func object(t *testing.T, apiVersion, spec string) map[string]any {
	t.Helper()
	obj := map[string]any{}
	if err := json.Unmarshal([]byte(`{"apiVersion":"packages.kudo.dev/`+apiVersion+`","kind":"Hello",`+
		`"metadata":{"name":"h2","namespace":"a"},"spec":`+spec+`}`), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// specAndKept is the object's spec and kept fields as JSON.
func specAndKept(t *testing.T, obj map[string]any) (spec, kept string) {
	t.Helper()
	b, err := json.Marshal(obj["spec"])
	if err != nil {
		t.Fatal(err)
	}
	metadata, _ := obj["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	kept, _ = annotations[typedapi.KeptFieldsAnnotation].(string)
	return string(b), kept
}

func convert(t *testing.T, e typedapi.Evolution, obj map[string]any, from, to string) *typedapi.Conversion {
	t.Helper()
	c, err := e.Convert(context.Background(), obj, "packages.kudo.dev", from, to)
	if err != nil {
		t.Fatalf("Convert %s → %s: %v", from, to, err)
	}
	if got := c.Object["apiVersion"]; got != "packages.kudo.dev/"+to {
		t.Errorf("apiVersion %v, want packages.kudo.dev/%s", got, to)
	}
	return c
}

var (
	replicas = kudov1beta1.Parameter{Name: "replicas", Type: "integer", Default: ptr.To("1")}
	count    = kudov1beta1.Parameter{Name: "count", Type: "integer", Default: ptr.To("2"), OldName: "replicas"}
	size     = kudov1beta1.Parameter{Name: "size", Enum: &[]string{"small", "large"}}
)

// TestEachConversionRuleBothWaysAndTheRoundTrip: a rule converts the
// previous version's field up, and back down; the round trip keeps every
// field, those the other version lacks in the annotation.
func TestEachConversionRuleBothWaysAndTheRoundTrip(t *testing.T) {
	tests := []struct {
		name       string
		v1, v2     []kudov1beta1.Parameter
		spec       string
		wantUp     string
		wantKeptUp string
	}{
		{"rename (oldName, KEP-33)", []kudov1beta1.Parameter{replicas}, []kudov1beta1.Parameter{count},
			`{"operatorVersion":"hello-0.1.0","replicas":4}`, `{"count":4,"operatorVersion":"hello-0.1.0"}`, ``},
		{"a parameter kept as it was", []kudov1beta1.Parameter{replicas, size}, []kudov1beta1.Parameter{count, size},
			`{"replicas":4,"size":"large"}`, `{"count":4,"size":"large"}`, ``},
		{"a value map, inverted back", []kudov1beta1.Parameter{size}, []kudov1beta1.Parameter{{Name: "tier", OldName: "size",
			Conversion: &kudov1beta1.ParameterConversion{Values: map[string]string{"small": "bronze", "large": "gold"}}}},
			`{"size":"large"}`, `{"tier":"gold"}`, ``},
		{"a value map with no inverse: the old value kept", []kudov1beta1.Parameter{size}, []kudov1beta1.Parameter{{Name: "tier", OldName: "size",
			Conversion: &kudov1beta1.ParameterConversion{Values: map[string]string{"small": "gold", "large": "gold"}}}},
			`{"size":"small"}`, `{"tier":"gold"}`, `{"v1":{"size":"small"}}`},
		{"a type changed, through the value an Instance holds", []kudov1beta1.Parameter{replicas}, []kudov1beta1.Parameter{{Name: "replicas"}},
			`{"replicas":4}`, `{"replicas":"4"}`, ``},
		{"an expression and its reverse", []kudov1beta1.Parameter{{Name: "memory"}}, []kudov1beta1.Parameter{{Name: "memoryMiB", Type: "integer",
			OldName: "memory", Conversion: &kudov1beta1.ParameterConversion{
				Expression: "int(spec.memory.replace('Mi', ''))", Reverse: "string(spec.memoryMiB) + 'Mi'"}}},
			`{"memory":"512Mi"}`, `{"memoryMiB":512}`, ``},
		{"an expression with no reverse: the old value kept", []kudov1beta1.Parameter{{Name: "memory"}}, []kudov1beta1.Parameter{{Name: "memoryMiB",
			Type: "integer", OldName: "memory", Conversion: &kudov1beta1.ParameterConversion{Expression: "int(spec.memory.replace('Mi', ''))"}}},
			`{"memory":"512Mi"}`, `{"memoryMiB":512}`, `{"v1":{"memory":"512Mi"}}`},
		{"a move out of a map, by an expression", []kudov1beta1.Parameter{{Name: "config", Type: "map"}},
			[]kudov1beta1.Parameter{{Name: "config", Type: "map"}, {Name: "level", Conversion: &kudov1beta1.ParameterConversion{
				Expression: "spec.config.level"}}},
			`{"config":{"level":"debug"}}`, `{"config":{"level":"debug"},"level":"debug"}`, ``},
		{"a default for a field the old version lacked", []kudov1beta1.Parameter{replicas},
			[]kudov1beta1.Parameter{replicas, {Name: "zone", Conversion: &kudov1beta1.ParameterConversion{Default: ptr.To("eu-1")}}},
			`{"replicas":4}`, `{"replicas":4,"zone":"eu-1"}`, ``},
		{"a field the new version lacks, kept in the annotation", []kudov1beta1.Parameter{replicas, {Name: "legacy"}}, []kudov1beta1.Parameter{replicas},
			`{"replicas":4,"legacy":"yes"}`, `{"replicas":4}`, `{"v1":{"legacy":"yes"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := evolution(t, ov("0.1.0", "v1", tt.v1...), ov("0.2.0", "v2", tt.v2...))
			obj := object(t, "v1", tt.spec)
			up := convert(t, e, obj, "v1", "v2")
			if spec, kept := specAndKept(t, up.Object); spec != tt.wantUp || kept != tt.wantKeptUp {
				t.Errorf("v1 → v2: spec %s, kept %q\nwant spec %s, kept %q", spec, kept, tt.wantUp, tt.wantKeptUp)
			}
			back := convert(t, e, up.Object, "v2", "v1")
			before, _ := specAndKept(t, object(t, "v1", tt.spec))
			if spec, kept := specAndKept(t, back.Object); spec != before || strings.Contains(kept, `"v1"`) {
				t.Errorf("v1 → v2 → v1: spec %s, kept %q\nwant spec %s, nothing of v1 kept", spec, kept, before)
			}
			if spec, kept := specAndKept(t, obj); spec != before || kept != "" {
				t.Errorf("the object converted changed: spec %s, kept %q", spec, kept)
			}
		})
	}
}

// TestAValueSetAtTheNewVersionConvertsBack: what a user writes at v2 is
// what v1 reads, not the value the annotation kept from before.
func TestAValueSetAtTheNewVersionConvertsBack(t *testing.T) {
	e := evolution(t, ov("0.1.0", "v1", replicas, size), ov("0.2.0", "v2", count, kudov1beta1.Parameter{Name: "tier", OldName: "size",
		Conversion: &kudov1beta1.ParameterConversion{Values: map[string]string{"small": "bronze", "large": "gold"}}}))
	up := convert(t, e, object(t, "v1", `{"replicas":4,"size":"small"}`), "v1", "v2")
	spec := up.Object["spec"].(map[string]any)
	spec["count"], spec["tier"] = int64(7), "gold"
	back := convert(t, e, up.Object, "v2", "v1")
	if got, _ := specAndKept(t, back.Object); got != `{"replicas":7,"size":"large"}` {
		t.Errorf("v1 reads %s, want replicas 7, size large", got)
	}
}

// TestConversionsChainAVersionAtATime: v1 → v3 applies v2's rules, then
// v3's; and back.
func TestConversionsChainAVersionAtATime(t *testing.T) {
	e := evolution(t, ov("0.1.0", "v1", replicas), ov("0.2.0", "v2", count), ov("0.2.1", "v2", count),
		ov("0.3.0", "v3", kudov1beta1.Parameter{Name: "NODE_COUNT", Type: "integer", OldName: "count"}))
	if e.Storage() != "v3" || len(e) != 3 || len(e[1].Versions) != 2 {
		t.Fatalf("versions %v, storage %s: want v1, v2 (two OperatorVersions), v3", e, e.Storage())
	}
	up := convert(t, e, object(t, "v1", `{"replicas":4}`), "v1", "v3")
	if spec, _ := specAndKept(t, up.Object); spec != `{"NODE_COUNT":4}` {
		t.Errorf("v3 reads %s", spec)
	}
	if up.Carried["replicas"] != "NODE_COUNT" {
		t.Errorf("replicas carried to %q, want NODE_COUNT", up.Carried["replicas"])
	}
	back := convert(t, e, up.Object, "v3", "v1")
	if spec, _ := specAndKept(t, back.Object); spec != `{"replicas":4}` {
		t.Errorf("v1 reads %s", spec)
	}
}

func TestAnAPIVersionOnlyMovesOn(t *testing.T) {
	_, err := typedapi.EvolutionOf("hello", []kudov1beta1.OperatorVersion{ov("0.1.0", "v1"), ov("0.2.0", "v2"), ov("0.3.0", "v1")})
	want := "OperatorVersion hello-0.3.0 serves the API version v1, which hello-0.2.0, an older version, left for v2"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("EvolutionOf = %v, want %s…", err, want)
	}
	e, err := typedapi.EvolutionOf("hello", []kudov1beta1.OperatorVersion{ov("0.1.0", ""), ov("0.2.0", "")})
	if err != nil || len(e) != 1 || e.Storage() != typedapi.DefaultVersion {
		t.Errorf("a package that names no version: %v, %v; want one version, v1", e, err)
	}
}

func TestAConversionExpressionIsBounded(t *testing.T) {
	e, err := typedapi.EvolutionOf("hello", []kudov1beta1.OperatorVersion{ov("0.1.0", "v1", replicas), ov("0.2.0", "v2",
		kudov1beta1.Parameter{Name: "x", Conversion: &kudov1beta1.ParameterConversion{
			Expression: "spec.replicas.map(a, spec.replicas.map(b, spec.replicas.map(c, 'x'.repeat(1000))))"}})})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Compile()
	if err == nil || !strings.Contains(err.Error(), "OperatorVersion hello-0.2.0: parameter x: conversion") {
		t.Errorf("Compile = %v, want a refusal naming the OperatorVersion and parameter", err)
	}
}

// TestAnUpgradeCarriesEachValueByTheRules: moving h2 from 0.1.0 (v1,
// replicas) to 0.2.0 (v2, count) runs count at the value replicas had,
// whichever version the object is written at; with no rule it is refused.
func TestAnUpgradeCarriesEachValueByTheRules(t *testing.T) {
	renamed := []kudov1beta1.OperatorVersion{ov("0.1.0", "v1", replicas), ov("0.2.0", "v2", count)}
	unruled := []kudov1beta1.OperatorVersion{ov("0.1.0", "v1", replicas), ov("0.2.0", "v2", kudov1beta1.Parameter{Name: "count", Type: "integer"})}
	tests := []struct {
		name       string
		versions   []kudov1beta1.OperatorVersion
		apiVersion string
		spec       string
		want       string
	}{
		{"written at v1", renamed, "v1", `{"operatorVersion":"hello-0.2.0","replicas":4}`, `map[count:4]`},
		{"written at v2", renamed, "v2", `{"operatorVersion":"hello-0.2.0","count":4}`, `map[count:4]`},
		{"no rule carries replicas", unruled, "v1", `{"operatorVersion":"hello-0.2.0","replicas":4}`,
			"the upgrade from hello-0.1.0 to hello-0.2.0 would lose the value of spec.replicas (parameter replicas)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: object(t, tt.apiVersion, tt.spec)}
			i, _, err := typedapi.InstanceOf(context.Background(), u, "hello-0.1.0", "hello", tt.versions)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = fmt.Sprint(i.Spec.Parameters)
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("InstanceOf = %s\nwant %s", got, tt.want)
			}
		})
	}
}

// FuzzARoundTripKeepsEveryField: whatever a tenant's object sets at v1 (a
// field of any name, a string or a number) and however v2 renames and maps
// a parameter, converting it to v2 and back never panics and gives the
// object's spec again.
func FuzzARoundTripKeepsEveryField(f *testing.F) {
	f.Add("TIER", "size", "TIER", "large", "large", "L", int64(3))
	f.Add("TIER", "size", "TIER", "S", "small", "S", int64(0))
	f.Add("a", "n", "operatorVersion", "x", "x", "x", int64(-1))
	f.Add("n", "a", "n", "04", "4", "4", int64(1))
	f.Fuzz(func(t *testing.T, before, after, field, value, from, to string, number int64) {
		for _, s := range []string{before, after, from, to} {
			if !utf8.ValidString(s) {
				t.Skip("an OperatorVersion, JSON at the API server, holds valid UTF-8 only")
			}
		}
		v1 := ov("0.1.0", "v1", kudov1beta1.Parameter{Name: before}, kudov1beta1.Parameter{Name: "n", Type: "integer"})
		v2 := ov("0.2.0", "v2", kudov1beta1.Parameter{Name: after, OldName: before,
			Conversion: &kudov1beta1.ParameterConversion{Values: map[string]string{from: to}}}, kudov1beta1.Parameter{Name: "n", Type: "integer"})
		for _, v := range []kudov1beta1.OperatorVersion{v1, v2} {
			if _, err := typedapi.Fields(v.Spec.Parameters); err != nil {
				t.Skip("two parameters of one field: no typed API is served") // ServedCRD refuses it
			}
		}
		e, err := typedapi.EvolutionOf("hello", []kudov1beta1.OperatorVersion{v1, v2})
		if err != nil {
			t.Fatal(err)
		}
		// The object as the API server sends it: JSON, valid UTF-8.
		sent, err := json.Marshal(map[string]any{"apiVersion": "packages.kudo.dev/v1", "kind": "Hello", "metadata": map[string]any{"name": "h"},
			"spec": map[string]any{field: value, "n": number}})
		if err != nil {
			t.Fatal(err)
		}
		obj := map[string]any{}
		if err := json.Unmarshal(sent, &obj); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		up, err := e.Convert(ctx, obj, "packages.kudo.dev", "v1", "v2")
		if err != nil {
			t.Fatal(err)
		}
		back, err := e.Convert(ctx, up.Object, "packages.kudo.dev", "v2", "v1")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(obj["spec"])
		got, _ := json.Marshal(back.Object["spec"])
		if string(got) != string(want) {
			t.Errorf("v1 → v2 → v1 gives %s, want %s (v2: %v)", got, want, up.Object)
		}
	})
}

// TestATenantsObjectAlwaysConverts: one object that fails to convert fails
// the list of all the kind's objects, everyone's: what its writer puts in
// it — a value an expression cannot read, an annotation that is not the
// kept fields — converts, the value kept.
func TestATenantsObjectAlwaysConverts(t *testing.T) {
	e := evolution(t, ov("0.1.0", "v1", kudov1beta1.Parameter{Name: "memory"}), ov("0.2.0", "v2", kudov1beta1.Parameter{Name: "memoryMiB",
		Type: "integer", OldName: "memory", Conversion: &kudov1beta1.ParameterConversion{Expression: "int(spec.memory.replace('Mi', ''))"}}))
	obj := object(t, "v1", `{"memory":"lots"}`)
	obj["metadata"].(map[string]any)["annotations"] = map[string]any{typedapi.KeptFieldsAnnotation: "{not json"}
	up := convert(t, e, obj, "v1", "v2")
	if spec, kept := specAndKept(t, up.Object); spec != `{}` || kept != `{"v1":{"memory":"lots"}}` {
		t.Errorf("v2: spec %s, kept %q; want no value, memory kept", spec, kept)
	}
	if spec, _ := specAndKept(t, convert(t, e, up.Object, "v2", "v1").Object); spec != `{"memory":"lots"}` {
		t.Errorf("back at v1: %s", spec)
	}
}
