// Package chartimport turns a Helm chart's values into a KUDO package's
// parameters, and back into the values its Helm task passes the chart
// (kubectl kudo package import).
package chartimport

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/yamlbound"
)

// MaxValuesBytes bounds a chart's values.yaml and values.schema.json, as a
// package's file.
const MaxValuesBytes = packages.MaxFileSize

// Parameters are the parameters of a package that runs the chart: one for
// each top-level key of its values.yaml, in the file's order. Each takes
// its type from its value (a map, a list, a string, a whole number, a
// number, a boolean) and the value as its default; its description from the
// comment above the key (helm-docs' "# --" too). The chart's
// values.schema.json, when it has one (schema nil otherwise), says better:
// its type, description and enum of a key win. No parameter is required:
// the chart has a default for each.
func Parameters(values, schema []byte) ([]packages.Parameter, error) {
	if err := yamlbound.Check(values, yamlbound.Within(MaxValuesBytes)); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	props, err := schemaProperties(schema)
	if err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("values.yaml: not a map of values")
	}
	params := make([]packages.Parameter, 0, len(root.Content)/2)
	for k := 0; k+1 < len(root.Content); k += 2 {
		key, value := root.Content[k], root.Content[k+1]
		var v any
		if err := value.Decode(&v); err != nil {
			return nil, fmt.Errorf("values.yaml: %s: %w", key.Value, err)
		}
		p := packages.Parameter{Name: key.Value, Required: ptrFalse(), Type: typeOf(v), Description: commentOf(key)}
		if v != nil {
			p.Default = v
		}
		if prop, ok := props[key.Value]; ok {
			prop.apply(&p)
		}
		params = append(params, p)
	}
	return params, nil
}

func ptrFalse() *bool { f := false; return &f }

// typeOf is the parameter type of a value as YAML decoded it; a value with
// none (null) is a string parameter with no default.
func typeOf(v any) kudov1beta1.ParameterType {
	switch v.(type) {
	case map[string]any:
		return kudov1beta1.MapValueType
	case []any:
		return kudov1beta1.ArrayValueType
	case bool:
		return kudov1beta1.BooleanValueType
	case int:
		return kudov1beta1.IntegerValueType
	case float64:
		return kudov1beta1.NumberValueType
	}
	return kudov1beta1.StringValueType
}

// commentOf is the comment just above a key, without its #s: helm-docs'
// "# --" and "# @default" lines as text.
func commentOf(key *yaml.Node) string {
	var lines []string
	for _, line := range strings.Split(key.HeadComment, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
		line = strings.TrimSpace(strings.TrimPrefix(line, "--"))
		if line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, " ")
}

// property is what values.schema.json says of a top-level key.
type property struct {
	Type        any    `json:"type"`
	Description string `json:"description"`
	Enum        []any  `json:"enum"`
}

func (prop property) apply(p *packages.Parameter) {
	if t, ok := parameterType(prop.Type); ok {
		p.Type = t
	}
	if prop.Description != "" {
		p.Description = prop.Description
	}
	if len(prop.Enum) > 0 {
		enum := append([]any(nil), prop.Enum...)
		p.Enum = &enum
	}
}

// parameterType is the parameter type of a JSON schema type: one name, or
// a list of them with "null" beside one.
func parameterType(t any) (kudov1beta1.ParameterType, bool) {
	var names []string
	switch t := t.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, n := range t {
			if s, ok := n.(string); ok && s != "null" {
				names = append(names, s)
			}
		}
	}
	if len(names) != 1 {
		return "", false
	}
	switch names[0] {
	case "object":
		return kudov1beta1.MapValueType, true
	case "array":
		return kudov1beta1.ArrayValueType, true
	case "boolean":
		return kudov1beta1.BooleanValueType, true
	case "integer":
		return kudov1beta1.IntegerValueType, true
	case "number":
		return kudov1beta1.NumberValueType, true
	case "string":
		return kudov1beta1.StringValueType, true
	}
	return "", false
}

// schemaProperties are the top-level properties of values.schema.json.
func schemaProperties(schema []byte) (map[string]property, error) {
	if schema == nil {
		return nil, nil
	}
	if len(schema) > MaxValuesBytes {
		return nil, fmt.Errorf("values.schema.json: it has %d bytes, more than %d", len(schema), MaxValuesBytes)
	}
	var s struct {
		Properties map[string]property `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("values.schema.json: %w", err)
	}
	return s.Properties, nil
}

// ValuesTemplate is the template of the values the package's Helm task
// passes the chart: each parameter's value, as JSON, which YAML reads as it
// is.
func ValuesTemplate(params []packages.Parameter) string {
	var b strings.Builder
	b.WriteString("# The chart's values, one parameter each (kubectl kudo package import).\n")
	for _, p := range params {
		name, _ := json.Marshal(p.Name)
		fmt.Fprintf(&b, "%s: {{ toJson (index .Params %s) }}\n", yamlKey(p.Name), name)
	}
	return b.String()
}

// yamlKey is a key as YAML reads it back: quoted unless plain.
func yamlKey(name string) string {
	out, err := yaml.Marshal(name)
	if err != nil {
		return fmt.Sprintf("%q", name)
	}
	return strings.TrimSuffix(string(out), "\n")
}
