package params

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		value   any
		typ     kudov1beta1.ParameterType
		want    string
		wantErr string
	}{
		{value: 3, want: "3"},
		{value: "3", typ: kudov1beta1.IntegerValueType, want: "3"},
		{value: 2.5, typ: kudov1beta1.NumberValueType, want: "2.5"},
		{value: true, typ: kudov1beta1.BooleanValueType, want: "true"},
		{value: nil, want: ""},
		{value: []any{"a", 1}, typ: kudov1beta1.ArrayValueType, want: `["a",1]`},
		{value: map[string]any{"k": map[any]any{1: "v"}}, typ: kudov1beta1.MapValueType, want: `{"k":{"1":"v"}}`},
		{value: `["a"]`, typ: kudov1beta1.ArrayValueType, want: `["a"]`},
		{value: "- a\n- b\n", typ: kudov1beta1.ArrayValueType, want: "- a\n- b\n"},
		{value: "a: [", typ: kudov1beta1.MapValueType, wantErr: `"a: [" is not a map: line 1: did not find expected node content`},
		{value: []any{"a"}, typ: kudov1beta1.StringValueType, wantErr: "a string value cannot be a YAML array"},
		{value: map[string]any{}, wantErr: "a string value cannot be a YAML map"},
		{value: []any{"a"}, typ: kudov1beta1.MapValueType, wantErr: "a YAML array is not a map value"},
		{value: "x", typ: kudov1beta1.ArrayValueType, wantErr: `"x" is not an array: line 1: cannot unmarshal !!str ` + "`x`" + ` into []interface {}`},
		{value: 7, typ: kudov1beta1.ArrayValueType, wantErr: "a YAML scalar is not an array value"},
	}
	for _, tt := range tests {
		got, err := Wrap(tt.value, tt.typ)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Wrap(%#v, %q) error = %v, want %q", tt.value, tt.typ, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Wrap(%#v, %q) = %q, %v; want %q", tt.value, tt.typ, got, err, tt.want)
		}
	}
}

func TestUnwrapAndValues(t *testing.T) {
	parameters := []kudov1beta1.Parameter{
		{Name: "COUNT", Default: ptr.To("3"), Type: kudov1beta1.IntegerValueType},
		{Name: "LIST", Default: ptr.To("- a\n- b\n"), Type: kudov1beta1.ArrayValueType},
		{Name: "MAP", Default: ptr.To(`{"k": 1}`), Type: kudov1beta1.MapValueType},
		{Name: "OPTIONAL"},
		{Name: "NAME", Default: ptr.To("zk")},
	}
	got, err := Values(parameters, map[string]string{"LIST": `["x"]`, "NAME": "other"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		// An unset parameter without default renders as empty, as in KUDO.
		"COUNT": "3", "LIST": []any{"x"}, "MAP": map[string]any{"k": 1}, "OPTIONAL": "", "NAME": "other",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Values = %#v, want %#v", got, want)
	}
	if _, err := Values(parameters, map[string]string{"MAP": "[1]"}); err == nil ||
		err.Error() != `parameter MAP: "[1]" is not a map: line 1: cannot unmarshal !!seq into map[string]interface {}` {
		t.Errorf("Values with a bad map: %v", err)
	}
}

func TestCheck(t *testing.T) {
	enum := []string{"fast", "safe"}
	tests := []struct {
		param   kudov1beta1.Parameter
		value   string
		wantErr string
	}{
		{param: kudov1beta1.Parameter{Name: "P"}, value: "anything"},
		{param: kudov1beta1.Parameter{Name: "P", Type: kudov1beta1.IntegerValueType}, value: "42"},
		{param: kudov1beta1.Parameter{Name: "P", Type: kudov1beta1.IntegerValueType}, value: "4.2", wantErr: `parameter P: "4.2" is not an integer`},
		{param: kudov1beta1.Parameter{Name: "P", Type: kudov1beta1.NumberValueType}, value: "4.2"},
		{param: kudov1beta1.Parameter{Name: "P", Type: kudov1beta1.NumberValueType}, value: "four", wantErr: `parameter P: "four" is not a number`},
		{param: kudov1beta1.Parameter{Name: "P", Type: kudov1beta1.BooleanValueType}, value: "true"},
		{param: kudov1beta1.Parameter{Name: "P", Type: kudov1beta1.BooleanValueType}, value: "yes", wantErr: `parameter P: "yes" is not a boolean (true or false)`},
		{param: kudov1beta1.Parameter{Name: "P", Type: kudov1beta1.ArrayValueType}, value: "[1, 2]"},
		{param: kudov1beta1.Parameter{Name: "P", Type: kudov1beta1.ArrayValueType}, value: "k: v", wantErr: `parameter P: "k: v" is not an array: line 1: cannot unmarshal !!map into []interface {}`},
		{param: kudov1beta1.Parameter{Name: "P", Type: kudov1beta1.MapValueType}, value: "{k: v}"},
		{param: kudov1beta1.Parameter{Name: "P", Type: "float"}, value: "1", wantErr: `parameter P: unknown value-type "float"`},
		{param: kudov1beta1.Parameter{Name: "P", Enum: &enum}, value: "safe"},
		{param: kudov1beta1.Parameter{Name: "P", Enum: &enum}, value: "slow", wantErr: `parameter P: "slow" is not one of fast, safe`},
	}
	for _, tt := range tests {
		err := Check(&tt.param, tt.value)
		if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
			t.Errorf("Check(%s %q) = %v, want %q", tt.param.Type, tt.value, err, tt.wantErr)
		}
	}
}

func TestParseAssignment(t *testing.T) {
	tests := []struct {
		arg       string
		wantName  string
		wantValue any
		wantErr   string
	}{
		{arg: "NODE_COUNT=5", wantName: "NODE_COUNT", wantValue: "5"},
		{arg: "URL=http://a?b=c", wantName: "URL", wantValue: "http://a?b=c"},
		{arg: "EMPTY=", wantName: "EMPTY", wantValue: ""},
		{arg: "LIST=[a,b]", wantName: "LIST", wantValue: []any{"a", "b"}},
		{arg: "LIST=[1, two]", wantName: "LIST", wantValue: []any{1, "two"}},
		{arg: "MAP={k1:v1,k2:v2}", wantName: "MAP", wantValue: map[string]any{"k1": "v1", "k2": "v2"}},
		{arg: "MAP={k1: v1, k2: [a]}", wantName: "MAP", wantValue: map[string]any{"k1": "v1", "k2": []any{"a"}}},
		{arg: "BAD=[a,", wantName: "BAD", wantValue: "[a,"},
		{arg: "BAD={a: [}", wantErr: `parameter BAD: "{a: [}" is neither [a,b] nor {k1:v1,k2:v2}: did not find expected node content`},
		{arg: "NOVALUE", wantErr: `parameter "NOVALUE": expected NAME=VALUE`},
		{arg: "=v", wantErr: `parameter "=v": expected NAME=VALUE`},
	}
	for _, tt := range tests {
		name, value, err := ParseAssignment(tt.arg)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseAssignment(%q) error = %v, want %q", tt.arg, err, tt.wantErr)
			}
			continue
		}
		if err != nil || name != tt.wantName || !reflect.DeepEqual(value, tt.wantValue) {
			t.Errorf("ParseAssignment(%q) = %q, %#v, %v; want %q, %#v", tt.arg, name, value, err, tt.wantName, tt.wantValue)
		}
	}
}

func FuzzParseAssignment(f *testing.F) {
	for _, seed := range []string{"K=V", "LIST=[a,b]", "MAP={k1:v1,k2:v2}", "M={a: {b: [1, {c:d}]}}", "=", "K=[", "K={:}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		name, value, err := ParseAssignment(arg)
		if err != nil {
			return
		}
		if name == "" {
			t.Fatalf("ParseAssignment(%q) accepted an empty name", arg)
		}
		// Whatever parses must serialize for an Instance and read back.
		for _, typ := range []kudov1beta1.ParameterType{kudov1beta1.ArrayValueType, kudov1beta1.MapValueType, kudov1beta1.StringValueType} {
			s, err := Wrap(value, typ)
			if err != nil {
				continue
			}
			if _, err := Unwrap(s, typ); err != nil {
				t.Fatalf("Wrap(%#v, %s) = %q does not unwrap: %v", value, typ, s, err)
			}
		}
	})
}

// TestRequiredAtTheAPILevel: in an OperatorVersion a parameter needs a
// value only when required is true and it has no default; an empty value is
// no value, and is not checked against the type or the enum (KUDO's
// Parameter.ValidateValue).
func TestRequiredAtTheAPILevel(t *testing.T) {
	tests := []struct {
		name  string
		param kudov1beta1.Parameter
		needs bool
	}{
		{"required unset means optional", kudov1beta1.Parameter{Name: "P"}, false},
		{"required false is optional", kudov1beta1.Parameter{Name: "P", Required: ptr.To(false)}, false},
		{"required true without default needs a value", kudov1beta1.Parameter{Name: "P", Required: ptr.To(true)}, true},
		{"required true with a default does not", kudov1beta1.Parameter{Name: "P", Required: ptr.To(true), Default: ptr.To("x")}, false},
	}
	for _, tt := range tests {
		if got := NeedsValue(&tt.param); got != tt.needs {
			t.Errorf("%s: NeedsValue = %t", tt.name, got)
		}
	}
	enum := []string{"a", "b"}
	for _, p := range []kudov1beta1.Parameter{
		{Name: "N", Type: kudov1beta1.IntegerValueType}, {Name: "B", Type: kudov1beta1.BooleanValueType},
		{Name: "L", Type: kudov1beta1.ArrayValueType}, {Name: "E", Enum: &enum},
	} {
		if err := Check(&p, ""); err != nil {
			t.Errorf("an empty value of %s is refused: %v", p.Name, err)
		}
	}
}

// TestAnAliasBombValueIsRefusedBeforeItExpands: an array, map or -p value
// whose aliases expand it past what spec.parameters may hold is refused.
func TestAnAliasBombValueIsRefusedBeforeItExpands(t *testing.T) {
	bomb := "[&a " + strings.Repeat("x", 40000) + ", " + strings.Repeat("*a, ", 9999) + "*a]"
	want := `"[&a xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"... is `
	if _, err := Unwrap(bomb, kudov1beta1.ArrayValueType); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Unwrap: %v, want an error with %q", err, want)
	}
	if _, _, err := ParseAssignment("LIST=" + bomb); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseAssignment: %v, want an error with %q", err, want)
	}
	if _, _, err := ParseAssignment("LIST=" + bomb); err == nil || !strings.HasSuffix(err.Error(), "its aliases (*name) expand it to more than 160010 bytes") {
		t.Errorf("ParseAssignment: %v, want it to say the value expands past its bound", err)
	}
	if got, err := Unwrap("[&a x, *a]", kudov1beta1.ArrayValueType); err != nil || !reflect.DeepEqual(got, []any{"x", "x"}) {
		t.Errorf("a small alias: %v, %v", got, err)
	}
}
