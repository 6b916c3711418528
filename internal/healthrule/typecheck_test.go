package healthrule

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
`

func TestTypecheckAgainstAShippedCRD(t *testing.T) {
	schemas, err := CRDSchemas(object(t, widgetCRD), "templates/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	widget, ok := schemas[schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}]
	if !ok {
		t.Fatalf("CRDSchemas = %v, want example.com/v1 Widget", schemas)
	}
	tests := []struct {
		expr, want string
	}{
		{"status.phase == 'Running'", ""},
		{"status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')", ""},
		{"metadata.generation == 1 && spec.size > 2", ""},
		{"status.extra.anything == 'goes'", ""},
		{"has(status.phase) && status.?phase.orValue('') == 'Running'", ""},
		{"status.phasee == 'Running'", "healthChecks[0].current: undefined field 'phasee'"},
		{"status.conditions.exists(c, c.typo == 'Ready')", "undefined field 'typo'"},
		{"spec.size == 'three'", "no matching overload"},
		{"data.key == 'x'", "undeclared reference to 'data'"},
	}
	for _, tt := range tests {
		err := Typecheck("healthChecks[0].current", tt.expr, widget)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Typecheck(%s): %v", tt.expr, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "templates/crd.yaml")):
			t.Errorf("Typecheck(%s) = %v, want an error with %q naming templates/crd.yaml", tt.expr, err, tt.want)
		}
	}
}

// TestTypecheckAgainstACRDThatKeepsUnknownFields: a CRD whose objects are
// any content types their spec and status as any value, as the API server
// keeps them.
func TestTypecheckAgainstACRDThatKeepsUnknownFields(t *testing.T) {
	crd := strings.Replace(widgetCRD, `      openAPIV3Schema:
        type: object
        properties:`, `      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
        properties:
          unused:`, 1)
	crd = crd[:strings.Index(crd, "          unused:")] + "          unused: {type: string}\n"
	schemas, err := CRDSchemas(object(t, crd), "templates/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	widget := schemas[schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}]
	for expr, want := range map[string]string{
		"status.phase == 'Running'": "",
		"spec.size > 2":             "",
		"metadata.generation == 1":  "",
		"metadata.generationn == 1": "undefined field 'generationn'",
		"data.key == 'x'":           "undeclared reference to 'data'",
	} {
		err := Typecheck("healthChecks[0].current", expr, widget)
		switch {
		case want == "" && err != nil:
			t.Errorf("Typecheck(%s): %v", expr, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("Typecheck(%s) = %v, want an error with %q", expr, err, want)
		}
	}
}

func TestTypecheckAgainstABuiltinKind(t *testing.T) {
	deployment, ok := BuiltinSchema(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	if !ok {
		t.Fatal("no schema for apps/v1 Deployment")
	}
	for _, expr := range []string{
		"status.readyReplicas >= 2 && status.observedGeneration == metadata.generation",
		"status.conditions.filter(e, e.type == 'Available').all(e, e.status == 'True')",
		"spec.template.spec.containers.size() > 0 && spec.strategy.rollingUpdate.maxSurge == '25%'",
		"metadata.labels['app'] == 'web' && metadata.annotations.exists(k, k == 'x')",
	} {
		if err := Typecheck("readyWhen[0]", expr, deployment); err != nil {
			t.Errorf("Typecheck(%s): %v", expr, err)
		}
	}
	err := Typecheck("readyWhen[0]", "status.readyReplica >= 2", deployment)
	if err == nil || !strings.Contains(err.Error(), "undefined field 'readyReplica'") || !strings.Contains(err.Error(), "Kubernetes Deployment") {
		t.Errorf("Typecheck of a misspelled field = %v", err)
	}
	if _, ok := BuiltinSchema(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}); ok {
		t.Error("BuiltinSchema knows a custom kind")
	}
}
