package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestProgressWait(t *testing.T) {
	written := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	instance := func(status kudov1beta1.ExecutionStatus, uid types.UID, generation int64) *kudov1beta1.Instance {
		ts := metav1.NewTime(written)
		return &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Generation: generation},
			Status: kudov1beta1.InstanceStatus{
				ObservedGeneration: generation,
				ActivePlan:         &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: status},
				PlanStatus: map[string]kudov1beta1.PlanStatus{
					"deploy": {Name: "deploy", Status: status, UID: uid, LastUpdatedTimestamp: &ts},
				},
			},
		}
	}
	running := instance(kudov1beta1.ExecutionInProgress, "run-1", 1)
	withSteps := func(i *kudov1beta1.Instance, first kudov1beta1.ExecutionStatus, message string) *kudov1beta1.Instance {
		i = i.DeepCopy()
		ps := i.Status.PlanStatus["deploy"]
		ps.Phases = []kudov1beta1.PhaseStatus{{Name: "main", Status: kudov1beta1.ExecutionInProgress, Steps: []kudov1beta1.StepStatus{
			{Name: "validation", Status: first, Message: message}, {Name: "cleanup", Status: kudov1beta1.ExecutionPending},
		}}}
		i.Status.PlanStatus["deploy"] = ps
		return i
	}
	validating := withSteps(running, kudov1beta1.ExecutionInProgress, "waiting for Job validation")
	tests := []struct {
		name    string
		before  *kudov1beta1.Instance
		after   *kudov1beta1.Instance
		elapsed time.Duration
		want    time.Duration
	}{
		{"progress of the same run, just written", running, running, 500 * time.Millisecond, 1500 * time.Millisecond},
		{"progress of the same run, written long enough ago", running, running, 3 * time.Second, 0},
		{"the run completes", running, instance(kudov1beta1.ExecutionComplete, "run-1", 1), 0, 0},
		{"the run fails", running, instance(kudov1beta1.ExecutionFatalError, "run-1", 1), 0, 0},
		{"a step errs", running, instance(kudov1beta1.ExecutionError, "run-1", 1), 0, 0},
		{"a new run starts", running, instance(kudov1beta1.ExecutionInProgress, "run-2", 1), 0, 0},
		{"the first write of a run", instance(kudov1beta1.ExecutionPending, "run-1", 1), running, 0, 0},
		{"a new spec", running, instance(kudov1beta1.ExecutionInProgress, "run-1", 2), 0, 0},
		{"no plan ran yet", &kudov1beta1.Instance{}, running, 0, 0},
		{"only what a step waits for changes", validating, withSteps(running, kudov1beta1.ExecutionInProgress, "waiting for Job validation: 1 active"),
			500 * time.Millisecond, 1500 * time.Millisecond},
		{"a step completes: written at once, so that it never runs again", validating,
			withSteps(running, kudov1beta1.ExecutionComplete, ""), 500 * time.Millisecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := progressWait(tt.before, tt.after, written.Add(tt.elapsed)); got != tt.want {
				t.Errorf("progressWait = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestSooner: a status held back as progress never puts off a requeue the
// reconcile asked for sooner.
func TestSooner(t *testing.T) {
	for _, tc := range []struct{ asked, held, want time.Duration }{
		{0, 0, 0},
		{0, time.Second, time.Second},
		{time.Second, 0, time.Second},
		{100 * time.Millisecond, 2 * time.Second, 100 * time.Millisecond},
		{5 * time.Second, 2 * time.Second, 2 * time.Second},
	} {
		if got := sooner(tc.asked, tc.held); got != tc.want {
			t.Errorf("sooner(%s, %s) = %s, want %s", tc.asked, tc.held, got, tc.want)
		}
	}
}
