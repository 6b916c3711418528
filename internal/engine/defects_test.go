package engine

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestDefects(t *testing.T) {
	timeout := func(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
	// spec has a task app, a plan deploy whose one step runs it and a
	// parameter that triggers deploy; change breaks it.
	spec := func(change func(*kudov1beta1.OperatorVersionSpec)) *kudov1beta1.OperatorVersionSpec {
		s := &kudov1beta1.OperatorVersionSpec{
			Tasks: []kudov1beta1.Task{{Name: "app", Kind: kudov1beta1.DummyTaskKind}},
			Plans: map[string]kudov1beta1.Plan{"deploy": {Timeout: timeout(time.Minute), Phases: []kudov1beta1.Phase{
				{Name: "main", Steps: []kudov1beta1.Step{{Name: "a", Tasks: []string{"app"}, Timeout: timeout(time.Second)}}},
			}}},
			Parameters: []kudov1beta1.Parameter{{Name: "SIZE", Trigger: "deploy"}, {Name: "COLOUR"}},
		}
		change(s)
		return s
	}
	tests := []struct {
		name string
		spec *kudov1beta1.OperatorVersionSpec
		want []Defect
	}{
		{
			name: "none in a spec that keeps the rules",
			spec: spec(func(*kudov1beta1.OperatorVersionSpec) {}),
		},
		{
			name: "none in an empty deploy plan without tasks, as KUDO accepted",
			spec: &kudov1beta1.OperatorVersionSpec{Plans: map[string]kudov1beta1.Plan{"deploy": {}}},
		},
		{
			name: "a step naming an undefined task",
			spec: spec(func(s *kudov1beta1.OperatorVersionSpec) {
				s.Plans["deploy"].Phases[0].Steps = append(s.Plans["deploy"].Phases[0].Steps, kudov1beta1.Step{Name: "b", Tasks: []string{"app", "ghost"}})
			}),
			want: []Defect{{Rule: UndefinedTask, Value: "ghost", Plan: "deploy", Phase: 0, Step: 1, Task: 1}},
		},
		{
			name: "a trigger naming no plan",
			spec: spec(func(s *kudov1beta1.OperatorVersionSpec) { s.Parameters[1].Trigger = "scale" }),
			want: []Defect{{Rule: TriggerWithoutPlan, Value: "scale", Parameter: 1}},
		},
		{
			name: "a plan's timeout of zero",
			spec: spec(func(s *kudov1beta1.OperatorVersionSpec) {
				deploy := s.Plans["deploy"]
				deploy.Timeout = timeout(0)
				s.Plans["deploy"] = deploy
			}),
			want: []Defect{{Rule: PlanTimeoutNotPositive, Value: "0s", Plan: "deploy"}},
		},
		{
			name: "a step's negative timeout",
			spec: spec(func(s *kudov1beta1.OperatorVersionSpec) {
				s.Plans["deploy"].Phases[0].Steps[0].Timeout = timeout(-30 * time.Second)
			}),
			want: []Defect{{Rule: StepTimeoutNotPositive, Value: "-30s", Plan: "deploy", Phase: 0, Step: 0}},
		},
		{
			name: "every defect: plans by name, each's timeout before its steps, then the parameters",
			spec: spec(func(s *kudov1beta1.OperatorVersionSpec) {
				s.Parameters[0].Trigger = "scale"
				s.Plans["update"] = kudov1beta1.Plan{Phases: []kudov1beta1.Phase{
					{Name: "one", Steps: []kudov1beta1.Step{{Name: "a", Tasks: []string{"app"}}}},
					{Name: "two", Steps: []kudov1beta1.Step{{Name: "a", Tasks: []string{"u"}, Timeout: timeout(0)}}},
				}}
				s.Plans["deploy"] = kudov1beta1.Plan{Timeout: timeout(-time.Minute), Phases: []kudov1beta1.Phase{
					{Name: "main", Steps: []kudov1beta1.Step{{Name: "a", Tasks: []string{"d"}}}},
				}}
			}),
			want: []Defect{
				{Rule: PlanTimeoutNotPositive, Value: "-1m0s", Plan: "deploy"},
				{Rule: UndefinedTask, Value: "d", Plan: "deploy"},
				{Rule: StepTimeoutNotPositive, Value: "0s", Plan: "update", Phase: 1},
				{Rule: UndefinedTask, Value: "u", Plan: "update", Phase: 1},
				{Rule: TriggerWithoutPlan, Value: "scale"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Defects(tt.spec); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Defects() =\n  %+v\nwant\n  %+v", got, tt.want)
			}
		})
	}
}
