package engine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// kudoPlan is a plan status as KUDO v0.19 wrote it.
func kudoPlan(name string, status kudov1beta1.ExecutionStatus, updated int, steps ...kudov1beta1.ExecutionStatus) kudov1beta1.PlanStatus {
	ps := kudov1beta1.PlanStatus{Name: name, Status: status, UID: types.UID("uid-" + name)}
	if updated > 0 {
		ps.LastUpdatedTimestamp = &metav1.Time{Time: time.Date(2021, 3, 1, 12, updated, 0, 0, time.UTC)}
	}
	phase := kudov1beta1.PhaseStatus{Name: "main", Status: status}
	for n, s := range steps {
		phase.Steps = append(phase.Steps, kudov1beta1.StepStatus{Name: string(rune('a' + n)), Status: s})
	}
	ps.Phases = []kudov1beta1.PhaseStatus{phase}
	return ps
}

func TestAKUDOInstanceIsTakenOverAsItIs(t *testing.T) {
	const (
		complete   = kudov1beta1.ExecutionComplete
		fatal      = kudov1beta1.ExecutionFatalError
		inProgress = kudov1beta1.ExecutionInProgress
		neverRun   = kudov1beta1.ExecutionNeverRun
	)
	tests := []struct {
		name       string
		plans      []kudov1beta1.PlanStatus
		wantActive string
		wantStatus kudov1beta1.ExecutionStatus
	}{
		{"deploy completed", []kudov1beta1.PlanStatus{kudoPlan("deploy", complete, 1), kudoPlan("update", neverRun, 0)},
			"deploy", complete},
		{"the plan that ended last", []kudov1beta1.PlanStatus{kudoPlan("deploy", complete, 1), kudoPlan("update", complete, 7),
			kudoPlan("backup", complete, 3)}, "update", complete},
		{"a failed plan stays failed", []kudov1beta1.PlanStatus{kudoPlan("deploy", fatal, 2, complete, fatal)}, "deploy", fatal},
		{"a running plan goes on", []kudov1beta1.PlanStatus{kudoPlan("deploy", complete, 9), kudoPlan("update", inProgress, 4, complete, inProgress)},
			"update", inProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := &kudov1beta1.Instance{Status: kudov1beta1.InstanceStatus{PlanStatus: map[string]kudov1beta1.PlanStatus{}}}
			i.Generation = 4
			for _, ps := range tt.plans {
				i.Status.PlanStatus[ps.Name] = ps
			}
			before := i.Status.DeepCopy().PlanStatus
			if !RanByKUDO(i) {
				t.Fatal("RanByKUDO = false for an Instance KUDO ran")
			}
			ov := &kudov1beta1.OperatorVersion{}
			ov.Name = "kafka-1.3.0-0.1.0"
			parameters := map[string]string{"BROKERS": "3"}
			if got := AdoptFromKUDO(i, ov, parameters); got != tt.wantActive {
				t.Errorf("active plan = %q, want %q", got, tt.wantActive)
			}
			if a := i.Status.ActivePlan; a == nil || a.Name != tt.wantActive || a.Status != tt.wantStatus {
				t.Errorf("status.activePlan = %+v, want %s %s", a, tt.wantActive, tt.wantStatus)
			}
			if RanByKUDO(i) {
				t.Error("RanByKUDO = true once taken over")
			}
			for name, ps := range before {
				if got := i.Status.PlanStatus[name]; got.Status != ps.Status || len(got.Phases[0].Steps) != len(ps.Phases[0].Steps) {
					t.Errorf("plan %s changed: %+v, was %+v", name, got, ps)
				}
			}
			next, _, err := NextPlan(i, ov, map[string]string{"BROKERS": "3"}, nil)
			if err != nil || next != "" {
				t.Errorf("NextPlan after the takeover = %q, %v; want none", next, err)
			}
			if r := i.Status.Revisions; len(r) != 1 || r[0].Plan != tt.wantActive || r[0].Status != tt.wantStatus ||
				r[0].OperatorVersion != ov.Name || r[0].Parameters["BROKERS"] != "3" {
				t.Errorf("revisions = %+v", r)
			}
			if i.Status.AppliedGeneration != 4 {
				t.Errorf("appliedGeneration = %d, want the Instance's 4", i.Status.AppliedGeneration)
			}
		})
	}
}

func TestOnlyInstancesKUDORanAreTakenOver(t *testing.T) {
	fresh := &kudov1beta1.Instance{}
	planned := &kudov1beta1.Instance{Status: kudov1beta1.InstanceStatus{PlanStatus: map[string]kudov1beta1.PlanStatus{
		"deploy": kudoPlan("deploy", kudov1beta1.ExecutionNeverRun, 0)}}}
	ours := &kudov1beta1.Instance{Status: kudov1beta1.InstanceStatus{AppliedOperatorVersion: "kafka-1.3.0-0.1.0",
		PlanStatus: map[string]kudov1beta1.PlanStatus{"deploy": kudoPlan("deploy", kudov1beta1.ExecutionComplete, 1)}}}
	for name, i := range map[string]*kudov1beta1.Instance{"new": fresh, "no plan run yet": planned, "kudo-ng's": ours} {
		if RanByKUDO(i) {
			t.Errorf("RanByKUDO(%s Instance) = true", name)
		}
	}
}
