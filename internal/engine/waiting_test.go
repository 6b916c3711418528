package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func waitingOn(names ...string) []kudov1beta1.ObjectHealth {
	out := make([]kudov1beta1.ObjectHealth, len(names))
	for n, name := range names {
		out[n] = kudov1beta1.ObjectHealth{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "ns", Name: name, Status: "InProgress",
			Rule: "healthChecks[0].current: status.phase == 'Ready'", Message: "waiting for Widget " + name}
	}
	return out
}

func TestAWaitingStepRecordsWhatItWaitsOnAndSinceWhen(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Parallel, kudov1beta1.Parallel)
	status := Start("deploy", plan, "uid-1", t0)
	status = Record(plan, &status, map[StepRef]StepResult{{"one", "a"}: {Message: "waiting", WaitingOn: waitingOn("w1")}}, t0)
	step := &status.Phases[0].Steps[0]
	if len(step.WaitingOn) != 1 || !step.WaitingOn[0].Since.Time.Equal(t0) {
		t.Fatalf("first pass: waiting on %+v, want w1 since t0", step.WaitingOn)
	}

	later := t0.Add(time.Minute)
	status = Record(plan, &status, map[StepRef]StepResult{{"one", "a"}: {Message: "waiting", WaitingOn: waitingOn("w1", "w2")}}, later)
	step = &status.Phases[0].Steps[0]
	if len(step.WaitingOn) != 2 || !step.WaitingOn[0].Since.Time.Equal(t0) || !step.WaitingOn[1].Since.Time.Equal(later) {
		t.Errorf("second pass: waiting on %+v, want w1 since t0 and w2 since a minute later", step.WaitingOn)
	}
	if !status.LastUpdatedTimestamp.Time.Equal(later) {
		t.Error("a new object waited on is a change of the status")
	}

	status = Record(plan, &status, map[StepRef]StepResult{{"one", "a"}: {Done: true}}, later)
	if step = &status.Phases[0].Steps[0]; len(step.WaitingOn) != 0 {
		t.Errorf("a step done waits on nothing: %+v", step.WaitingOn)
	}
}

func TestWhatStepsWaitOnIsBounded(t *testing.T) {
	plan := twoByTwo(kudov1beta1.Parallel, kudov1beta1.Parallel)
	status := Start("deploy", plan, "uid-1", t0)
	many := func(step string, count int) []kudov1beta1.ObjectHealth {
		names := make([]string, count)
		for n := range names {
			names[n] = fmt.Sprintf("%s-%d", step, n)
		}
		objs := waitingOn(names...)
		objs[0].Message = strings.Repeat("x", 10_000)
		return objs
	}
	results := map[StepRef]StepResult{}
	for _, ref := range []StepRef{{"one", "a"}, {"one", "b"}, {"two", "a"}, {"two", "b"}, {"three", "a"}} {
		results[ref] = StepResult{Message: "waiting", WaitingOn: many(ref.String(), 20)}
	}
	got := Record(plan, &status, results, t0)
	listed, more := 0, int32(0)
	for _, s := range got.Steps() {
		if len(s.WaitingOn) > MaxWaitingOnStep {
			t.Errorf("step %s lists %d objects", s.Name, len(s.WaitingOn))
		}
		for _, w := range s.WaitingOn {
			if len(w.Message) > MaxWaitingText {
				t.Errorf("a message of %d bytes", len(w.Message))
			}
		}
		listed, more = listed+len(s.WaitingOn), more+s.MoreWaitingOn
	}
	if listed != MaxWaitingOnPlan || int(more) != 4*20-MaxWaitingOnPlan {
		t.Errorf("the plan lists %d objects and counts %d more; want %d and %d", listed, more, MaxWaitingOnPlan, 4*20-MaxWaitingOnPlan)
	}
}
