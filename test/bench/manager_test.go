package main

import (
	"bytes"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// The bench holds the manager to the soft memory limit of the deployed
// one: that of config/manager's memory limit.
func TestTheBenchsMemoryLimitIsTheDeployments(t *testing.T) {
	b, err := os.ReadFile("../../config/manager/manager.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		if d = (appsv1.Deployment{}); yaml.Unmarshal(doc, &d) == nil && d.Kind == "Deployment" {
			break
		}
	}
	if d.Kind != "Deployment" || len(d.Spec.Template.Spec.Containers) == 0 {
		t.Fatal("config/manager/manager.yaml has no Deployment")
	}
	limit := d.Spec.Template.Spec.Containers[0].Resources.Limits.Memory().Value()
	if limit != deployedMemoryLimit {
		t.Errorf("config/manager's memory limit is %d bytes, the bench's deployedMemoryLimit %d", limit, int64(deployedMemoryLimit))
	}
}
