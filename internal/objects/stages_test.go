package objects

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestStagesApplyWhatOthersNeedFirst(t *testing.T) {
	obj := func(apiVersion, kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName(name)
		return u
	}
	stages := Stages([]*unstructured.Unstructured{
		obj("example.com/v1", "Backup", "nightly"), obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "backups.example.com"),
		obj("v1", "ConfigMap", "settings"), obj("v1", "Namespace", "monitoring"),
	})
	var got [][]string
	for _, stage := range stages {
		var names []string
		for _, o := range stage {
			names = append(names, o.GetName())
		}
		got = append(got, names)
	}
	if len(got) != 2 || len(got[0]) != 2 || got[0][0] != "backups.example.com" || got[0][1] != "monitoring" ||
		len(got[1]) != 2 || got[1][0] != "nightly" || got[1][1] != "settings" {
		t.Errorf("stages %v", got)
	}
}
