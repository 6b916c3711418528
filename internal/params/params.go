// Package params types parameter values as KUDO does. An Instance stores every
// value as a string; templates see scalars as those strings and arrays and
// maps as decoded values. Values come from params.yaml defaults (any YAML),
// from the command line (K=V, K=[a,b], K={k1:v1,k2:v2}) and from values files.
package params

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/yamlbound"
)

// TypeOf is a parameter's value type; untyped parameters are strings.
func TypeOf(t kudov1beta1.ParameterType) kudov1beta1.ParameterType {
	if t == "" {
		return kudov1beta1.StringValueType
	}
	return t
}

// Wrap serializes a decoded value (a params.yaml default, a values-file entry)
// as the string an Instance stores: arrays and maps as JSON, scalars as text.
func Wrap(value any, t kudov1beta1.ParameterType) (string, error) {
	switch TypeOf(t) {
	case kudov1beta1.ArrayValueType, kudov1beta1.MapValueType:
		if s, ok := value.(string); ok {
			// Already serialized, as in an OperatorVersion's default.
			if _, err := Unwrap(s, t); err != nil {
				return "", err
			}
			return s, nil
		}
		value = jsonCompatible(value)
		if _, isList := value.([]any); isList != (TypeOf(t) == kudov1beta1.ArrayValueType) {
			return "", fmt.Errorf("a YAML %s is not a%s %s value", yamlKind(value), article(t), t)
		}
		b, err := json.Marshal(value)
		if err != nil {
			return "", fmt.Errorf("cannot serialize %s value: %w", t, err)
		}
		return string(b), nil
	default:
		switch v := value.(type) {
		case nil:
			return "", nil
		case map[string]any, []any:
			return "", fmt.Errorf("a %s value cannot be a YAML %s", TypeOf(t), yamlKind(v))
		default:
			return fmt.Sprint(v), nil
		}
	}
}

// Unwrap decodes a stored value for templates: arrays and maps are decoded,
// scalars stay strings.
func Unwrap(s string, t kudov1beta1.ParameterType) (any, error) {
	switch TypeOf(t) {
	case kudov1beta1.ArrayValueType:
		var v []any
		if err := unmarshal(s, &v); err != nil {
			return nil, fmt.Errorf("%s is not an array: %s", quoteShort(s), yamlError(err))
		}
		return v, nil
	case kudov1beta1.MapValueType:
		var v map[string]any
		if err := unmarshal(s, &v); err != nil {
			return nil, fmt.Errorf("%s is not a map: %s", quoteShort(s), yamlError(err))
		}
		return v, nil
	default:
		return s, nil
	}
}

// MaxBytes bounds an Instance's spec.parameters, names and values: the
// status holds them again, and the Instance must stay storable. A value's
// YAML aliases may expand it to MaxBytes too, no more.
const MaxBytes = 128 << 10

// quoteShort quotes a value for an error, cut to its first 64 characters:
// an error must not repeat a value as large as spec.parameters may hold.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 64 {
		return strconv.Quote(string(r[:64])) + "..."
	}
	return strconv.Quote(s)
}

// unmarshal parses a value a user wrote, refusing aliases that would expand
// it past MaxBytes before they do.
func unmarshal(s string, v any) error {
	if err := yamlbound.Check([]byte(s), yamlbound.Within(MaxBytes)); err != nil {
		return err
	}
	return yaml.Unmarshal([]byte(s), v)
}

// Check reports whether a stored value fits a parameter's type and enum.
func Check(p *kudov1beta1.Parameter, value string) error {
	if value == "" {
		// As KUDO: an empty value is no value, whatever the type.
		return nil
	}
	shown := strconv.Quote(value)
	if p.IsSensitive() {
		shown = "its value"
	}
	switch TypeOf(p.Type) {
	case kudov1beta1.IntegerValueType:
		if _, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err != nil {
			return fmt.Errorf("parameter %s: %s is not an integer", p.Name, shown)
		}
	case kudov1beta1.NumberValueType:
		if _, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err != nil {
			return fmt.Errorf("parameter %s: %s is not a number", p.Name, shown)
		}
	case kudov1beta1.BooleanValueType:
		if _, err := strconv.ParseBool(strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("parameter %s: %s is not a boolean (true or false)", p.Name, shown)
		}
	case kudov1beta1.ArrayValueType, kudov1beta1.MapValueType:
		if _, err := Unwrap(value, p.Type); err != nil {
			return unwrapError(p, err)
		}
	case kudov1beta1.StringValueType:
	default:
		return fmt.Errorf("parameter %s: unknown value-type %q", p.Name, p.Type)
	}
	if p.Enum != nil && !slices.Contains(*p.Enum, value) {
		return fmt.Errorf("parameter %s: %s is not one of %s", p.Name, shown, strings.Join(*p.Enum, ", "))
	}
	return nil
}

// unwrapError says that a value does not decode as its parameter's type;
// Unwrap's message quotes the value, which a sensitive parameter's must not.
func unwrapError(p *kudov1beta1.Parameter, err error) error {
	if p.IsSensitive() {
		return fmt.Errorf("parameter %s: its value is not a%s %s", p.Name, article(p.Type), p.Type)
	}
	return fmt.Errorf("parameter %s: %w", p.Name, err)
}

// NeedsValue reports whether a parameter must be given a non-empty value:
// it is required and has no default. In an OperatorVersion an unset
// required means optional (params.yaml's default of true is applied when a
// package is read).
func NeedsValue(p *kudov1beta1.Parameter) bool {
	return p.Required != nil && *p.Required && p.Default == nil
}

// Values returns what templates see as .Params: every parameter of the
// OperatorVersion, with the Instance's value or the default, decoded by
// type; as KUDO, one with neither is empty.
func Values(parameters []kudov1beta1.Parameter, instance map[string]string) (map[string]any, error) {
	values := make(map[string]any, len(parameters))
	for i := range parameters {
		p := &parameters[i]
		raw, ok := instance[p.Name]
		if !ok && p.Default != nil {
			raw = *p.Default
		}
		v, err := Unwrap(raw, p.Type)
		if err != nil {
			return nil, unwrapError(p, err)
		}
		values[p.Name] = v
	}
	return values, nil
}

// WithDefaults are an Instance's values and, for each parameter it does not
// set, the default: the values its templates render with, as stored.
func WithDefaults(parameters []kudov1beta1.Parameter, values map[string]string) map[string]string {
	out := maps.Clone(values)
	if out == nil {
		out = map[string]string{}
	}
	for _, p := range parameters {
		if _, set := out[p.Name]; !set && p.Default != nil {
			out[p.Name] = *p.Default
		}
	}
	return out
}

// jsonCompatible turns the map[any]any a YAML decoder may produce into
// map[string]any, which encoding/json can serialize.
func jsonCompatible(v any) any {
	switch t := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, val := range t {
			m[fmt.Sprint(k)] = jsonCompatible(val)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, val := range t {
			m[k] = jsonCompatible(val)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, val := range t {
			l[i] = jsonCompatible(val)
		}
		return l
	default:
		return v
	}
}

func yamlKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case map[string]any:
		return "map"
	default:
		return "scalar"
	}
}

func article(t kudov1beta1.ParameterType) string {
	if t == kudov1beta1.ArrayValueType {
		return "n"
	}
	return ""
}

// yamlError drops the library's "yaml: " prefix and folds its multi-line
// type errors into one line; callers say what was parsed.
func yamlError(err error) string {
	var typeErr *yaml.TypeError
	if errors.As(err, &typeErr) {
		return strings.Join(typeErr.Errors, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}
