package main

import (
	"bytes"
	"os"
	"os/exec"
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

// A Helm task renders in processes of the manager's: their CPU is the
// manager's.
func TestAProcesssCPUIncludesItsChildren(t *testing.T) {
	before, err := cpuSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	after, err := cpuSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// USER_HZ ticks: the child's own time, less a tick of rounding.
	childCPU := (child.ProcessState.UserTime() + child.ProcessState.SystemTime()).Seconds()
	if after-before < childCPU-0.02 {
		t.Errorf("%.2f s between, the child alone used %.2f s", after-before, childCPU)
	}
}
