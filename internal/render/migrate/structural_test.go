package migrate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// crd is a v1beta1 CustomResourceDefinition of group with schema (YAML, may
// be empty) and annotations (YAML flow map, may be empty).
func crd(group, annotations, schema string) string {
	out := "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n"
	if annotations != "" {
		out += "  annotations: " + annotations + "\n"
	}
	out += "spec:\n  group: " + group + "\n  names: {kind: X, plural: xs}\n  version: v1\n  preserveUnknownFields: false\n"
	if schema != "" {
		out += "  validation:\n    openAPIV3Schema:\n" + indent(schema, "      ")
	}
	return out
}

func indent(text, prefix string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

// parseMap reads YAML as objects are read, with integers as int64.
func parseMap(t *testing.T, text string) map[string]any {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := utiljson.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// structuralErrors are what Kubernetes' own validation finds non-structural
// in an apiextensions.k8s.io/v1 openAPIV3Schema.
func structuralErrors(t *testing.T, schema map[string]any) field.ErrorList {
	t.Helper()
	data, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var v1 apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(data, &v1); err != nil {
		t.Fatal(err)
	}
	var internal apiextensionsinternal.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("openAPIV3Schema"), nil, err.Error())}
	}
	return structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), s)
}

// TestCustomResourceDefinitionSchemasBecomeStructural: apiextensions.k8s.io/v1
// requires structural schemas, which v1beta1 did not; the migration makes a
// v1beta1 schema structural the way Kubernetes' guidance does, says what it
// changed, and Kubernetes' own validation finds the result structural (and
// the input not).
func TestCustomResourceDefinitionSchemasBecomeStructural(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		changes []string
	}{
		{
			name: "prometheus-operator ServiceMonitor: anyOf integer or string, and no types",
			in: `
type: object
properties:
  spec:
    properties:
      endpoints:
        items:
          properties:
            port: {type: string}
            targetPort:
              anyOf:
              - type: integer
              - type: string
          type: object
        type: array
    required: [endpoints]
`,
			want: `
type: object
properties:
  spec:
    type: object
    properties:
      endpoints:
        items:
          properties:
            port: {type: string}
            targetPort:
              anyOf:
              - type: integer
              - type: string
              x-kubernetes-int-or-string: true
          type: object
        type: array
    required: [endpoints]
`,
			changes: []string{
				"schema .spec.endpoints[*].targetPort: anyOf integer or string is now x-kubernetes-int-or-string",
				"schema .spec: type object added",
			},
		},
		{
			name: "oneOf, and anyOf with string first",
			in: `
type: object
properties:
  a: {oneOf: [{type: string}, {type: integer}]}
  b: {anyOf: [{type: string}, {type: integer}], x-kubernetes-int-or-string: true}
`,
			want: `
type: object
properties:
  a: {anyOf: [{type: integer}, {type: string}], x-kubernetes-int-or-string: true}
  b: {anyOf: [{type: integer}, {type: string}], x-kubernetes-int-or-string: true}
`,
			changes: []string{
				"schema .a: oneOf integer or string is now x-kubernetes-int-or-string",
				"schema .b: anyOf integer or string is now x-kubernetes-int-or-string",
			},
		},
		{
			name: "junctor branches agreeing on a type: the type moves out, their descriptions go",
			in: `
type: object
properties:
  size:
    anyOf:
    - {type: string, pattern: '^[0-9]+Gi$', description: gibibytes}
    - {type: string, pattern: '^[0-9]+Mi$'}
`,
			want: `
type: object
properties:
  size:
    type: string
    anyOf:
    - {pattern: '^[0-9]+Gi$'}
    - {pattern: '^[0-9]+Mi$'}
`,
			changes: []string{
				"schema .size: type string moved out of its junctors",
				"schema .size: titles and descriptions inside its junctors dropped",
			},
		},
		{
			name: "junctor branches of different types cannot be structural: dropped, unknown fields preserved",
			in: `
type: object
properties:
  value:
    oneOf:
    - {type: string}
    - {type: object, properties: {ref: {type: string}}}
`,
			want: `
type: object
properties:
  value: {x-kubernetes-preserve-unknown-fields: true}
`,
			changes: []string{"schema .value: oneOf dropped, which cannot be made structural, and x-kubernetes-preserve-unknown-fields added"},
		},
		{
			name: "a junctor of the root naming a field the root does not declare",
			in: `
type: object
properties: {url: {type: string}}
oneOf: [{required: [url]}, {properties: {path: {}}, required: [path]}]
`,
			want: `
type: object
properties: {url: {type: string}}
x-kubernetes-preserve-unknown-fields: true
`,
			changes: []string{"schema (root): oneOf dropped, which cannot be made structural, and x-kubernetes-preserve-unknown-fields added"},
		},
		{
			name: "nodes without a type, items as a list, an array without items, the root's metadata",
			in: `
properties:
  metadata: {type: object, description: standard metadata, properties: {labels: {type: object}}}
  kind: {}
  spec:
    properties:
      anything: {description: any value}
      ports: {items: [{type: integer}]}
      pairs: {items: [{type: string}, {type: integer}]}
      tags: {type: array}
      labels: {additionalProperties: {type: string}}
`,
			want: `
type: object
properties:
  metadata: {type: object}
  kind: {type: string}
  spec:
    type: object
    properties:
      anything: {description: any value, x-kubernetes-preserve-unknown-fields: true}
      ports: {type: array, items: {type: integer}}
      pairs: {type: array, items: {x-kubernetes-preserve-unknown-fields: true}}
      tags: {type: array, items: {x-kubernetes-preserve-unknown-fields: true}}
      labels: {type: object, additionalProperties: {type: string}}
`,
			changes: []string{
				"schema .kind: type string added",
				"schema .metadata: all but its type and name dropped, as v1 allows no more for metadata",
				"schema .spec.anything: no type can be told, x-kubernetes-preserve-unknown-fields added",
				"schema .spec.labels: type object added",
				"schema .spec.pairs: items, a list of 2 schemas, is now any item with x-kubernetes-preserve-unknown-fields",
				"schema .spec.pairs: type array added",
				"schema .spec.ports: items is the single schema of the list it was",
				"schema .spec.ports: type array added",
				"schema .spec.tags: items with x-kubernetes-preserve-unknown-fields added to the array",
				"schema .spec: type object added",
				"schema (root): type object added",
			},
		},
		{
			name: "a structural schema is left alone",
			in: `
type: object
properties:
  metadata: {type: object, properties: {name: {type: string, maxLength: 20}}}
  spec:
    type: object
    properties:
      port: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
      mode: {type: string, oneOf: [{pattern: '^a'}, {pattern: '^b'}]}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := parse(t, crd("example.com", "", tt.in))
			in := parseMap(t, tt.in)
			if tt.want != "" && len(structuralErrors(t, in)) == 0 {
				t.Errorf("the input is structural already: the case tests nothing")
			}

			migrated, err := Object(obj, servedBy(t, "1.34"))
			if err != nil {
				t.Fatal(err)
			}

			got := nested(maps(nested(obj.Object, "spec")["versions"])[0], "schema", "openAPIV3Schema")
			want := in
			if tt.want != "" {
				want = parseMap(t, tt.want)
			}
			if !reflect.DeepEqual(got, want) {
				b, _ := yaml.Marshal(got)
				t.Errorf("schema:\n%s\nwant:\n%s", b, tt.want)
			}
			if errs := structuralErrors(t, got); len(errs) > 0 {
				t.Errorf("Kubernetes finds the schema not structural: %v", errs)
			}
			if !reflect.DeepEqual(migrated.Changes, tt.changes) {
				t.Errorf("changes:\n %q\nwant\n %q", migrated.Changes, tt.changes)
			}
			for _, change := range tt.changes {
				if !strings.Contains(migrated.String(), change) {
					t.Errorf("the migration's text %q does not say %q", migrated, change)
				}
			}
		})
	}
}

// TestCustomResourceDefinitionsOfKubernetesGroupsAreApproved:
// apiextensions.k8s.io/v1 refuses a CustomResourceDefinition of a *.k8s.io or
// *.kubernetes.io group without the annotation api-approved.kubernetes.io,
// which v1beta1 did not check; the migration adds it, as unapproved with a
// link, only when it is absent, and says so.
func TestCustomResourceDefinitionsOfKubernetesGroupsAreApproved(t *testing.T) {
	added := fmt.Sprintf("added annotation api-approved.kubernetes.io %q, which apiextensions.k8s.io/v1 requires for group ", Unapproved)
	tests := []struct {
		group, annotations string
		want               string // the annotation's value after; "" for none
		change             string
	}{
		{group: "snapshot.storage.k8s.io", want: Unapproved, change: added + "snapshot.storage.k8s.io"},
		{group: "k8s.io", want: Unapproved, change: added + "k8s.io"},
		{group: "metrics.kubernetes.io", annotations: "{note: kept}", want: Unapproved, change: added + "metrics.kubernetes.io"},
		{group: "kubernetes.io", annotations: `{api-approved.kubernetes.io: ""}`, want: Unapproved, change: added + "kubernetes.io"},
		{group: "x.k8s.io", annotations: "{api-approved.kubernetes.io: https://github.com/kubernetes/enhancements/pull/1111}",
			want: "https://github.com/kubernetes/enhancements/pull/1111"},
		{group: "x.k8s.io", annotations: `{api-approved.kubernetes.io: "unapproved, experimental"}`, want: "unapproved, experimental"},
		{group: "example.com"},
		{group: "k8s.io.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.group+" "+tt.annotations, func(t *testing.T) {
			obj := parse(t, crd(tt.group, tt.annotations, "type: object"))

			migrated, err := Object(obj, servedBy(t, "1.34"))
			if err != nil {
				t.Fatal(err)
			}

			annotations := obj.GetAnnotations()
			if got := annotations[APIApprovedAnnotation]; got != tt.want {
				t.Errorf("annotation %q, want %q", got, tt.want)
			}
			if tt.annotations == "{note: kept}" && annotations["note"] != "kept" {
				t.Errorf("other annotations lost: %v", annotations)
			}
			if apihelpers.IsProtectedCommunityGroup(tt.group) {
				if state, reason := apihelpers.GetAPIApprovalState(annotations); state != apihelpers.APIApprovalBypassed &&
					state != apihelpers.APIApproved {
					t.Errorf("Kubernetes refuses the annotation: %s", reason)
				}
			}
			var changes []string
			if tt.change != "" {
				changes = []string{tt.change}
			}
			if !reflect.DeepEqual(migrated.Changes, changes) {
				t.Errorf("changes %q, want %q", migrated.Changes, changes)
			}
			if tt.change != "" && !strings.Contains(migrated.String(), tt.change) {
				t.Errorf("the migration's text %q does not say %q", migrated, tt.change)
			}
		})
	}
}
