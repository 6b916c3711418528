package typedapi_test

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// TestEachBreakingChangeIsFoundAndItsNearCasePasses: each rule with a
// change it must refuse and a near one that must pass.
func TestEachBreakingChangeIsFoundAndItsNearCasePasses(t *testing.T) {
	nodeCount := kudov1beta1.Parameter{Name: "NODE_COUNT", Type: "integer", Default: ptr.To("3")}
	mode := kudov1beta1.Parameter{Name: "MODE", Enum: &[]string{"a", "b"}, Default: ptr.To("a")}
	tests := []struct {
		name      string
		installed []kudov1beta1.OperatorVersion
		next      kudov1beta1.OperatorVersion
		// want is the break, as it reads, or "" for none.
		want string
	}{
		{"a field removed with no rule", []kudov1beta1.OperatorVersion{ov("0.2.0", "v2", nodeCount)}, ov("0.3.0", "v3"),
			"v2 → v3: spec.NODE_COUNT: removed in v3, and no rule carries its value (oldName, or conversion.expression) (removed)"},
		{"near: renamed with oldName", []kudov1beta1.OperatorVersion{ov("0.2.0", "v2", nodeCount)},
			ov("0.3.0", "v3", kudov1beta1.Parameter{Name: "nodes", Type: "integer", OldName: "NODE_COUNT"}), ""},
		{"a field removed in place", []kudov1beta1.OperatorVersion{ov("0.2.0", "v2", nodeCount)}, ov("0.2.1", "v2"),
			"v2: spec.NODE_COUNT: removed, while objects that set it would lose its value at their upgrade"},
		{"near: a field added in place", []kudov1beta1.OperatorVersion{ov("0.2.0", "v2", nodeCount)},
			ov("0.2.1", "v2", nodeCount, kudov1beta1.Parameter{Name: "ZONE", Default: ptr.To("a")}), ""},
		{"a type changed", []kudov1beta1.OperatorVersion{ov("0.1.0", "v1", kudov1beta1.Parameter{Name: "SIZE"})},
			ov("0.2.0", "v2", kudov1beta1.Parameter{Name: "SIZE", Type: "integer"}),
			"v1 → v2: spec.SIZE: from string to integer (SIZE), and no rule converts it (conversion.values or expression) (type changed)"},
		{"near: a type widened (integer to number)", []kudov1beta1.OperatorVersion{ov("0.1.0", "v1", nodeCount)},
			ov("0.2.0", "v2", kudov1beta1.Parameter{Name: "NODE_COUNT", Type: "number"}), ""},
		{"a type changed in place", []kudov1beta1.OperatorVersion{ov("0.1.0", "", nodeCount)},
			ov("0.1.1", "", kudov1beta1.Parameter{Name: "NODE_COUNT"}), "v1: spec.NODE_COUNT: from integer to string"},
		{"near: a type widened in place", []kudov1beta1.OperatorVersion{ov("0.1.0", "", nodeCount)},
			ov("0.1.1", "", kudov1beta1.Parameter{Name: "NODE_COUNT", Type: "number"}), ""},
		{"a new required field with no default", []kudov1beta1.OperatorVersion{ov("0.1.0", "v1")},
			ov("0.2.0", "v2", kudov1beta1.Parameter{Name: "ZONE", Required: ptr.To(true)}),
			"v1 → v2: spec.ZONE: required, with no default, and no rule gives the objects of v1 a value (conversion.default) (new required field)"},
		{"near: a new required field a rule gives a value", []kudov1beta1.OperatorVersion{ov("0.1.0", "v1")},
			ov("0.2.0", "v2", kudov1beta1.Parameter{Name: "ZONE", Required: ptr.To(true),
				Conversion: &kudov1beta1.ParameterConversion{Default: ptr.To("a")}}), ""},
		{"an enum narrowed", []kudov1beta1.OperatorVersion{ov("0.1.0", "v1", mode)},
			ov("0.2.0", "v2", kudov1beta1.Parameter{Name: "MODE", Enum: &[]string{"a"}}),
			"v1 → v2: spec.MODE: b no longer allowed (MODE) (enum narrowed)"},
		{"near: an enum narrowed with a value map", []kudov1beta1.OperatorVersion{ov("0.1.0", "v1", mode)},
			ov("0.2.0", "v2", kudov1beta1.Parameter{Name: "MODE", Enum: &[]string{"a"},
				Conversion: &kudov1beta1.ParameterConversion{Values: map[string]string{"b": "a"}}}), ""},
		{"a rule in place", []kudov1beta1.OperatorVersion{ov("0.1.0", "", nodeCount)},
			ov("0.1.1", "", kudov1beta1.Parameter{Name: "nodes", Type: "integer", OldName: "NODE_COUNT"}),
			"v1: spec.nodes: a conversion rule converts from the API version before: name a new API version"},
		{"an API version left", []kudov1beta1.OperatorVersion{ov("0.1.0", "v1"), ov("0.2.0", "v2")}, ov("0.3.0", "v1"),
			"OperatorVersion hello-0.3.0 serves the API version v1, which hello-0.2.0, an older version, left for v2"},
		{"near: the first version", nil, ov("0.1.0", "v1", nodeCount), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			breaks, err := typedapi.Breaks(tt.installed, &tt.next)
			var got []string
			for _, b := range breaks {
				got = append(got, b.String())
			}
			if err != nil {
				got = append(got, err.Error())
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("Breaks = %q, want none", got)
			case tt.want != "" && (len(got) == 0 || !strings.HasPrefix(got[0], tt.want)):
				t.Errorf("Breaks = %q\nwant %s…", got, tt.want)
			}
		})
	}
}

func TestOnlyTheBreaksObjectsHoldValuesForAreRefused(t *testing.T) {
	breaks := []typedapi.Break{
		{From: "v2", To: "v3", Field: "NODE_COUNT", Rule: typedapi.FieldRemoved, Why: "removed"},
		{From: "v2", To: "v3", Field: "LEGACY", Rule: typedapi.FieldRemoved, Why: "removed"},
	}
	objects := map[string][]map[string]any{"v2": {
		{"metadata": map[string]any{"namespace": "a", "name": "h2"}, "spec": map[string]any{"NODE_COUNT": int64(4)}},
		{"metadata": map[string]any{"namespace": "b", "name": "h3"}, "spec": map[string]any{}},
	}}
	objects["v2"] = append(objects["v2"], map[string]any{"metadata": map[string]any{"namespace": "b", "name": "h4"},
		"spec": map[string]any{"NODE_COUNT": int64(1)}})
	got := typedapi.Affected(breaks, objects, "a")
	if len(got) != 1 || !strings.HasSuffix(got[0], "spec.NODE_COUNT: removed (removed): 2 object(s) hold a value it breaks (h2 of this namespace)") {
		t.Errorf("Affected = %q, want NODE_COUNT's, set by h2 and one of another namespace, not named", got)
	}
}
