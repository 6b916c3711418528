package typedapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// everyType is a parameter of each type, and one whose field is escaped.
var everyType = []kudov1beta1.Parameter{
	{Name: "S"}, {Name: "I", Type: "integer"}, {Name: "N", Type: "number"}, {Name: "B", Type: "boolean"},
	{Name: "A", Type: "array"}, {Name: "M", Type: "map"}, {Name: "log.level"},
}

// cmpSorted compares slices whatever their order: fields come from maps.
var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })

// TestAFieldIsReadAsItsParameterOrRefusedNamingTheField: the controller
// reads an object's fields into its Instance's parameters; a field that
// cannot hold its parameter's value is refused, named as the user wrote it.
func TestAFieldIsReadAsItsParameterOrRefusedNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec map[string]any
		// want is the parameters as JSON, or the error.
		want string
	}{
		{"scalars as text, null as empty", map[string]any{"S": nil, "I": int64(-2), "N": 0.5, "B": false},
			`{"B":"false","I":"-2","N":"0.5","S":""}`},
		{"an escaped field is its parameter's", map[string]any{"log_level": "debug", "log.level": "not a field"},
			`{"log.level":"debug"}`},
		{"an array or map kept as JSON, or as the JSON string it was", map[string]any{"A": "[1,2]", "M": map[string]any{"k": []any{true}}},
			`{"A":"[1,2]","M":"{\"k\":[true]}"}`},
		{"a map in a string's field", map[string]any{"S": map[string]any{"a": int64(1)}}, "spec.S: a string value cannot be a YAML map"},
		{"a list in an escaped field", map[string]any{"log_level": []any{"debug"}}, "spec.log_level: a string value cannot be a YAML array"},
		{"a map in an array's field", map[string]any{"A": map[string]any{}}, "spec.A: a YAML map is not an array value"},
		{"a list in a map's field", map[string]any{"M": []any{int64(1)}}, "spec.M: a YAML array is not a map value"},
		{"null in an array's field", map[string]any{"A": nil}, "spec.A: a YAML scalar is not an array value"},
		{"a string that is no array", map[string]any{"A": "x"}, `spec.A: "x" is not an array`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := typedapi.Parameters(tc.spec, everyType)
			if err != nil {
				if !strings.HasPrefix(err.Error(), tc.want) {
					t.Errorf("Parameters = %v, want %s…", err, tc.want)
				}
				return
			}
			if s := asJSON(t, got); s != tc.want {
				t.Errorf("Parameters = %s, want %s", s, tc.want)
			}
		})
	}
}

// TestAValueIsWrittenAsItsFieldHoldsItOrRefusedNamingTheParameter is what
// kubectl kudo update writes to a typed object: a value its field's type
// cannot hold is refused before the API server would.
func TestAValueIsWrittenAsItsFieldHoldsItOrRefusedNamingTheParameter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]string
		// want is the spec as JSON, or the error.
		want string
	}{
		{"numbers and booleans decoded, spaces trimmed", map[string]string{"I": " 7 ", "N": "1e3\n", "B": " FALSE"},
			`{"B":false,"I":7,"N":1000}`},
		{"a string kept as it is", map[string]string{"S": " x: 1 ", "log.level": ""}, `{"S":" x: 1 ","log_level":""}`},
		{"YAML flow collections decoded", map[string]string{"A": "[a, {b: c}]", "M": "{k: [1]}"}, `{"A":["a",{"b":"c"}],"M":{"k":[1]}}`},
		{"no values, no fields", nil, `{}`},
		{"an integer that is not", map[string]string{"I": "three"}, `parameter I: strconv.ParseInt: parsing "three": invalid syntax`},
		{"an integer past 64 bits", map[string]string{"I": "99999999999999999999"},
			`parameter I: strconv.ParseInt: parsing "99999999999999999999": value out of range`},
		{"a number that is not", map[string]string{"N": "1,5"}, `parameter N: strconv.ParseFloat: parsing "1,5": invalid syntax`},
		{"a boolean in YAML 1.1's words", map[string]string{"B": "yes"}, `parameter B: strconv.ParseBool: parsing "yes": invalid syntax`},
		{"a map for an array", map[string]string{"A": "{}"}, `parameter A: "{}" is not an array`},
		{"a list for a map", map[string]string{"M": "[1]"}, `parameter M: "[1]" is not a map`},
		{"a parameter of no field", map[string]string{"log_level": "debug"},
			"parameter log_level: the OperatorVersion has no such parameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := typedapi.SpecValues(tc.values, everyType)
			if err != nil {
				if !strings.HasPrefix(err.Error(), tc.want) {
					t.Errorf("SpecValues = %v, want %s…", err, tc.want)
				}
				return
			}
			if s := asJSON(t, got); s != tc.want {
				t.Errorf("SpecValues = %s, want %s", s, tc.want)
			}
		})
	}
}

// TestAnIntegerFieldHoldsAnInt64: unstructured content, which the client
// copies and converts, holds integers as int64 only.
func TestAnIntegerFieldHoldsAnInt64(t *testing.T) {
	v, err := typedapi.Value("42", kudov1beta1.IntegerValueType)
	if n, ok := v.(int64); err != nil || !ok || n != 42 {
		t.Errorf("Value(42, integer) = %#v, %v; want int64(42)", v, err)
	}
	v, err = typedapi.Value("42", "")
	if s, ok := v.(string); err != nil || !ok || s != "42" {
		t.Errorf("Value(42, untyped) = %#v, %v; want the string 42", v, err)
	}
}

func TestParametersThatShareAFieldAreRefusedBothWays(t *testing.T) {
	twins := []kudov1beta1.Parameter{{Name: "zk-port"}, {Name: "zk.port"}}
	want := `parameters "zk-port" and "zk.port" would both be the field "zk_port" of the typed API: rename one`
	if _, err := typedapi.Parameters(map[string]any{"zk_port": "1"}, twins); err == nil || err.Error() != want {
		t.Errorf("Parameters = %v, want %q", err, want)
	}
	if _, err := typedapi.SpecValues(map[string]string{"zk-port": "1"}, twins); err == nil || err.Error() != want {
		t.Errorf("SpecValues = %v, want %q", err, want)
	}
	if _, err := typedapi.SpecSchema(twins); err == nil || err.Error() != want {
		t.Errorf("SpecSchema = %v, want %q", err, want)
	}
}

// TestAMissingOperatorVersionIsToldFromABadField: the controller waits for
// a missing OperatorVersion (NoOperatorVersionError) but reports a field
// the object's writer must fix, with the OperatorVersion that refused it.
func TestAMissingOperatorVersionIsToldFromABadField(t *testing.T) {
	ov := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: "1.0.0",
		Parameters: []kudov1beta1.Parameter{{Name: "NODES", Type: "array"}}}}
	ov.Name, ov.Spec.Operator.Name = "zookeeper-0.3.1", "zk"

	_, _, err := typedapi.InstanceOf(context.Background(), withSpec(map[string]any{"operatorVersion": "zk-9"}), "", "zk", []kudov1beta1.OperatorVersion{ov})
	var none *typedapi.NoOperatorVersionError
	if !errors.As(err, &none) || errors.Unwrap(err) != none.Err || err.Error() != none.Err.Error() {
		t.Fatalf("InstanceOf = %v, want a NoOperatorVersionError that unwraps to its cause", err)
	}
	if want := `OperatorVersion "zk-9" not found in the namespace: install it first (kubectl kudo install zk --skip-instance)`; err.Error() != want {
		t.Errorf("InstanceOf = %v, want %q", err, want)
	}

	i, got, err := typedapi.InstanceOf(context.Background(), withSpec(map[string]any{"NODES": "not a list"}), "", "zk", []kudov1beta1.OperatorVersion{ov})
	if errors.As(err, &none) || err == nil || !strings.HasPrefix(err.Error(), `spec.NODES: "not a list" is not an array`) {
		t.Errorf("InstanceOf = %v, want the field's error, not a missing OperatorVersion", err)
	}
	if i != nil || got == nil || got.Name != ov.Name {
		t.Errorf("InstanceOf = %v, %v; want no Instance and the OperatorVersion zk-1", i, got)
	}
}

func TestTheSchemaRefusesAnEnumOrDefaultOfTheWrongType(t *testing.T) {
	for _, tc := range []struct {
		param kudov1beta1.Parameter
		want  string
	}{
		{kudov1beta1.Parameter{Name: "E", Type: "integer", Enum: &[]string{"1", "two"}}, `parameter E: enum: strconv.ParseInt: parsing "two"`},
		{kudov1beta1.Parameter{Name: "F", Type: "boolean", Default: ptr.To("on")}, `parameter F: default: strconv.ParseBool: parsing "on"`},
		{kudov1beta1.Parameter{Name: "A", Type: "array", Default: ptr.To("{}")}, `parameter A: default: "{}" is not an array`},
	} {
		if _, err := typedapi.SpecSchema([]kudov1beta1.Parameter{tc.param}); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("SpecSchema(%s) = %v, want %s…", tc.param.Name, err, tc.want)
		}
	}
}

// TestTheSchemaShowsAShortDefault: a default's JSON is described up to 80
// bytes; a longer one, a configuration file's, is for the package's docs.
func TestTheSchemaShowsAShortDefault(t *testing.T) {
	fits := strings.Repeat("x", 78) // 80 bytes quoted
	spec, err := typedapi.SpecSchema([]kudov1beta1.Parameter{
		{Name: "FITS", Description: "Fits", Default: ptr.To(fits)},
		{Name: "LONG", Description: "Long", Default: ptr.To(fits + "x")},
		{Name: "EMPTY", Description: "Empty", Default: ptr.To("")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"FITS":  `Fits. Default of the newest version: "` + fits + `".`,
		"LONG":  "Long.",
		"EMPTY": "Empty.",
	}
	for field, description := range want {
		if got := spec.Properties[field].Description; got != description {
			t.Errorf("%s's description %q, want %q", field, got, description)
		}
	}
}

// TestAnImmutableListOrMapIsLeftToTheWebhook: CEL cannot compare values of
// any type, so only scalars get transition rules.
func TestAnImmutableListOrMapIsLeftToTheWebhook(t *testing.T) {
	spec := schemaOf(t, kudov1beta1.Parameter{Name: "A", Type: "array", Immutable: ptr.To(true)},
		kudov1beta1.Parameter{Name: "M", Type: "map", Immutable: ptr.To(true)},
		kudov1beta1.Parameter{Name: "N", Type: "number", Immutable: ptr.To(false)})
	for _, field := range []string{"A", "M", "N"} {
		if rules := spec.Properties[field].XValidations; len(rules) > 0 {
			t.Errorf("%s has the rules %s, want none", field, asJSON(t, rules))
		}
	}
	if len(spec.XValidations) > 0 {
		t.Errorf("spec has the rules %s, want none", asJSON(t, spec.XValidations))
	}
}

func TestTheSchemaKeepsAnOlderVersionsEscapedField(t *testing.T) {
	spec, err := typedapi.SpecSchema([]kudov1beta1.Parameter{{Name: "NEW"}}, []kudov1beta1.Parameter{{Name: "log.level"}},
		[]kudov1beta1.Parameter{{Name: "2FA", Type: "boolean"}})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for field, prop := range spec.Properties {
		if prop.XPreserveUnknownFields != nil && *prop.XPreserveUnknownFields {
			kept = append(kept, field+": "+prop.Description)
		}
	}
	want := []string{"_2FA: Parameter 2FA of an older version of the package.", "log_level: Parameter log.level of an older version of the package."}
	if diff := cmp.Diff(want, kept, cmpSorted); diff != "" {
		t.Errorf("the older versions' fields (-want +got):\n%s", diff)
	}
}
