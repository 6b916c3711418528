package crd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func TestDefinedBy(t *testing.T) {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backups.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Backup, plural: backups}
  versions: [{name: v1, served: true}, {name: v1alpha1, served: false}, {name: v2, served: true}]`), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if !Is(obj) {
		t.Error("a CustomResourceDefinition is not one")
	}
	want := Defined{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Backup"}, Plural: "backups", Served: []string{"v1", "v2"}}
	if diff := cmp.Diff(want, DefinedBy(obj)); diff != "" {
		t.Errorf("defined (-want +got):\n%s", diff)
	}
	if got := DefinedBy(obj).Resource(); got != (schema.GroupResource{Group: "example.com", Resource: "backups"}) {
		t.Errorf("resource %v", got)
	}
	obj.SetKind("ConfigMap")
	if Is(obj) {
		t.Error("a ConfigMap is a CustomResourceDefinition")
	}
}
