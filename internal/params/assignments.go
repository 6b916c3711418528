package params

import (
	"fmt"
	"os"
	"strings"
)

// ParseAssignment parses one command-line parameter, KUDO's syntax: K=V, with
// arrays written K=[a,b] and maps K={k1:v1,k2:v2}. The value is returned as
// typed; callers wrap it for the parameter's type with Wrap.
func ParseAssignment(arg string) (string, any, error) {
	name, value, ok := strings.Cut(arg, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", nil, fmt.Errorf("parameter %q: expected NAME=VALUE", arg)
	}
	switch {
	case strings.HasPrefix(value, "[") && strings.HasSuffix(value, "]"),
		strings.HasPrefix(value, "{") && strings.HasSuffix(value, "}"):
		v, err := parseFlow(value)
		if err != nil {
			return "", nil, fmt.Errorf("parameter %s: %w", name, err)
		}
		return name, v, nil
	default:
		return name, value, nil
	}
}

// parseFlow reads a YAML flow collection. KUDO's map syntax {k1:v1} has no
// space after the colon, which YAML reads as a key "k1:v1" without a value;
// such keys are split at their first colon.
func parseFlow(s string) (any, error) {
	var v any
	if err := unmarshal(s, &v); err != nil {
		return nil, fmt.Errorf("%s is neither [a,b] nor {k1:v1,k2:v2}: %s", quoteShort(s), yamlError(err))
	}
	return splitBareKeys(v), nil
}

func splitBareKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, val := range t {
			if key, bare, ok := strings.Cut(k, ":"); ok && val == nil {
				m[key] = bare
				continue
			}
			m[k] = splitBareKeys(val)
		}
		return m
	case []any:
		for i := range t {
			t[i] = splitBareKeys(t[i])
		}
		return t
	default:
		return v
	}
}

// ReadValuesFile reads a YAML file of parameter names to values, for -P.
func ReadValuesFile(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	if err := unmarshal(string(data), &values); err != nil {
		return nil, fmt.Errorf("%s: %s", path, yamlError(err))
	}
	return values, nil
}
