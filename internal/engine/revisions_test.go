package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// run starts and completes a deploy run with values.
func run(i *kudov1beta1.Instance, values map[string]string) {
	ov := &kudov1beta1.OperatorVersion{}
	ov.Name = "site-0.1.0"
	ov.Spec.Plans = map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{{Name: "a"}}}}}}
	if i.Status.PlanStatus == nil {
		i.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{}
	}
	n := len(i.Status.Revisions)
	StartPlan(i, ov, "deploy", types.UID(fmt.Sprint("uid-", n)), t0, values)
	ps := i.Status.PlanStatus["deploy"]
	ps.Status = kudov1beta1.ExecutionComplete
	UpdateRevision(i, &ps)
}

func TestRevisionsKeepOnlyHowTheirParametersDifferFromTheAppliedOnes(t *testing.T) {
	i := &kudov1beta1.Instance{}
	runs := []map[string]string{
		{"REPLICAS": "1", "IMAGE": "web:1"},
		{"REPLICAS": "3", "IMAGE": "web:1"},
		{"REPLICAS": "3", "IMAGE": "web:2", "DEBUG": "true"},
	}
	for _, values := range runs {
		run(i, maps.Clone(values))
	}
	stored := i.Status.Revisions
	want := []struct {
		changed map[string]string
		unset   []string
	}{
		{map[string]string{"REPLICAS": "1", "IMAGE": "web:1"}, []string{"DEBUG"}},
		{map[string]string{"IMAGE": "web:1"}, []string{"DEBUG"}},
		{nil, nil},
	}
	for k, w := range want {
		if r := stored[k]; r.Parameters != nil || !reflect.DeepEqual(r.ChangedParameters, w.changed) || !reflect.DeepEqual(r.UnsetParameters, w.unset) {
			t.Errorf("revision %d stored as %v, changed %v, unset %v; want changed %v, unset %v",
				r.Number, r.Parameters, r.ChangedParameters, r.UnsetParameters, w.changed, w.unset)
		}
	}
	for k, r := range Revisions(&i.Status) {
		if !reflect.DeepEqual(r.Parameters, runs[k]) {
			t.Errorf("revision %d ran with %v, Revisions says %v", r.Number, runs[k], r.Parameters)
		}
	}
}

func TestRevisionsRecordedWholeAreReadAndCompacted(t *testing.T) {
	i := &kudov1beta1.Instance{}
	i.Status.AppliedParameters = map[string]string{"REPLICAS": "3"}
	i.Status.Revisions = []kudov1beta1.Revision{
		{Number: 1, Plan: "deploy", Status: kudov1beta1.ExecutionComplete},
		{Number: 2, Plan: "update", Status: kudov1beta1.ExecutionComplete, Parameters: map[string]string{"REPLICAS": "3"}},
	}
	got := Revisions(&i.Status)
	if got[0].Parameters != nil || got[1].Parameters["REPLICAS"] != "3" {
		t.Fatalf("whole revisions read as %+v", got)
	}
	run(i, map[string]string{"REPLICAS": "5"})
	got = Revisions(&i.Status)
	if len(got) != 3 || got[0].Parameters != nil || got[1].Parameters["REPLICAS"] != "3" || got[2].Parameters["REPLICAS"] != "5" {
		t.Errorf("after a run, revisions read as %+v", got)
	}
	if i.Status.Revisions[0].Parameters != nil || !reflect.DeepEqual(i.Status.Revisions[0].UnsetParameters, []string{"REPLICAS"}) {
		t.Errorf("the first revision is stored as %+v", i.Status.Revisions[0])
	}
}

func TestRevisionsOfLargeParametersStayWithinTheirBudget(t *testing.T) {
	i := &kudov1beta1.Instance{}
	for n := range kudov1beta1.MaxRevisions {
		run(i, map[string]string{"CONFIG": strings.Repeat(fmt.Sprint(n), 30<<10), "REPLICAS": "3"})
	}
	stored := 0
	for _, r := range i.Status.Revisions {
		stored += differenceBytes(&r)
	}
	if stored > kudov1beta1.MaxRevisionBytes {
		t.Errorf("revisions keep %d bytes of parameters, more than %d", stored, kudov1beta1.MaxRevisionBytes)
	}
	if n := len(i.Status.Revisions); n != 3 {
		t.Errorf("%d revisions kept of 30 KiB changes each, want 3 (the newest, and two within 64 KiB)", n)
	}
	run(i, map[string]string{"CONFIG": strings.Repeat("x", 100<<10)})
	if last := i.Status.Revisions[len(i.Status.Revisions)-1]; last.Number != kudov1beta1.MaxRevisions+1 {
		t.Errorf("the newest revision is not kept past the budget: %d", last.Number)
	}
}

// TestAnInstanceOfAFullInventoryAndLargeParametersStaysUnderOneMebibyte
// measures the largest status: as many objects as the inventory holds
// (8,500), 100 KiB of parameters changed in each of ten runs.
func TestAnInstanceOfAFullInventoryAndLargeParametersStaysUnderOneMebibyte(t *testing.T) {
	i := &kudov1beta1.Instance{}
	i.Name, i.Namespace = "cassandra-production", "databases"
	for n := range kudov1beta1.MaxRevisions {
		values := map[string]string{"CONFIG": strings.Repeat(fmt.Sprint(n%10), 100<<10), "NODES": "8500"}
		i.Spec.Parameters = values
		run(i, maps.Clone(values))
	}
	objects := make([]kudov1beta1.InventoryObject, 8500)
	for n := range objects {
		objects[n] = kudov1beta1.InventoryObject{
			ObjectRef: kudov1beta1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: i.Namespace, Name: fmt.Sprintf("%s-node-%04d", i.Name, n)},
			Hash:      "0123456789abcdef",
		}
	}
	i.Status.Inventory = []kudov1beta1.TaskInventory{{Task: "nodes", Plan: "deploy", Phase: "main", Step: "a", PlanUID: "uid-9", Objects: objects}}
	b, err := json.Marshal(i)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= 1<<20 {
		t.Errorf("the Instance takes %d bytes, want under 1 MiB", len(b))
	}
	t.Logf("Instance of 8,500 objects and 100 KiB of parameters: %d bytes", len(b))
}
