package v1beta1

import (
	"fmt"
	"reflect"
	"testing"
)

// A plan and a run of it yield their steps at the same places.
func TestStepsYieldEveryStepInOrderWithWhereItIs(t *testing.T) {
	tests := []struct {
		name string
		plan Plan
		want []string // phase[phaseIndex]/step[stepIndex]
	}{
		{"no phases", Plan{}, nil},
		{"a phase without steps", Plan{Phases: []Phase{{Name: "empty"}}}, nil},
		{"one phase", Plan{Phases: []Phase{{Name: "main", Steps: []Step{{Name: "a"}, {Name: "b"}}}}},
			[]string{"main[0]/a[0]", "main[0]/b[1]"}},
		{"phases, one of them empty", Plan{Phases: []Phase{
			{Name: "one", Steps: []Step{{Name: "a"}}},
			{Name: "empty"},
			{Name: "three", Steps: []Step{{Name: "a"}, {Name: "b"}}},
		}}, []string{"one[0]/a[0]", "three[2]/a[0]", "three[2]/b[1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for at, step := range tt.plan.Steps() {
				got = append(got, fmt.Sprintf("%s[%d]/%s[%d]", at.Phase.Name, at.PhaseIndex, step.Name, at.StepIndex))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Plan.Steps() = %q, want %q", got, tt.want)
			}
			got = nil
			for at, s := range runOf(&tt.plan).Steps() {
				got = append(got, fmt.Sprintf("%s[%d]/%s[%d]", at.Phase.Name, at.PhaseIndex, s.Name, at.StepIndex))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PlanStatus.Steps() = %q, want %q", got, tt.want)
			}
		})
	}
}

// runOf is a status tree of the plan's shape.
func runOf(plan *Plan) PlanStatus {
	var run PlanStatus
	for _, phase := range plan.Phases {
		ps := PhaseStatus{Name: phase.Name}
		for _, step := range phase.Steps {
			ps.Steps = append(ps.Steps, StepStatus{Name: step.Name})
		}
		run.Phases = append(run.Phases, ps)
	}
	return run
}

// The steps yielded are the plan's and the run's own, and a loop may stop
// early.
func TestStepsYieldTheTreesOwnStepsUntilTheLoopStops(t *testing.T) {
	plan := Plan{Phases: []Phase{{Name: "main", Steps: []Step{{Name: "a"}, {Name: "b"}}}}}
	for _, step := range plan.Steps() {
		step.Tasks = []string{"changed"}
		break
	}
	if got := plan.Phases[0].Steps; got[0].Tasks == nil || got[1].Tasks != nil {
		t.Errorf("steps after changing the first = %+v, want only the first changed", got)
	}
	run := PlanStatus{Phases: []PhaseStatus{{Name: "main", Steps: []StepStatus{{Name: "a"}, {Name: "b"}}}}}
	for _, s := range run.Steps() {
		s.Message = "changed"
		break
	}
	if got := run.Phases[0].Steps; got[0].Message != "changed" || got[1].Message != "" {
		t.Errorf("statuses after changing the first = %+v, want only the first changed", got)
	}
}

func TestPlanStatusStepIsNilWhereTheRunHasNone(t *testing.T) {
	run := PlanStatus{Phases: []PhaseStatus{{Name: "one", Steps: []StepStatus{{Name: "a"}}}, {Name: "empty"}}}
	tests := []struct {
		phase, step int
		want        string // the step's name; "" for nil
	}{
		{0, 0, "a"},
		{0, 1, ""},
		{1, 0, ""},
		{2, 0, ""},
		{-1, 0, ""},
		{0, -1, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("phase %d step %d", tt.phase, tt.step), func(t *testing.T) {
			got := ""
			if s := run.Step(tt.phase, tt.step); s != nil {
				got = s.Name
			}
			if got != tt.want {
				t.Errorf("Step(%d, %d) = %q, want %q", tt.phase, tt.step, got, tt.want)
			}
		})
	}
}
