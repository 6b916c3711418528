package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Rule is a rule an OperatorVersion keeps so that its plans can run.
type Rule int

const (
	// UndefinedTask: a step names a task the OperatorVersion does not define.
	UndefinedTask Rule = iota + 1
	// TriggerWithoutPlan: a parameter's trigger names no plan.
	TriggerWithoutPlan
	// PlanTimeoutNotPositive: a plan's timeout would end a run before it starts.
	PlanTimeoutNotPositive
	// StepTimeoutNotPositive: a step's timeout would end it before it starts.
	StepTimeoutNotPositive
)

// Defect is a part of an OperatorVersion's spec that breaks a Rule, and
// where it is, for each caller to name in its own terms: admission as a
// field of the spec, package verify as a field of operator.yaml or
// params.yaml.
type Defect struct {
	Rule Rule
	// Value is what is wrong: the task, the trigger or the timeout.
	Value string
	// Plan names the plan of a timeout or task; Phase and Step index the
	// step of a step's timeout or task, Task the task in the step.
	Plan              string
	Phase, Step, Task int
	// Parameter indexes the parameter of a trigger.
	Parameter int
}

// Defects lists what in the spec can never run: a step naming an undefined
// task, a trigger naming no plan, a timeout that is not positive. Plans come
// by name, each's own timeout before its steps, then the parameters.
func Defects(spec *kudov1beta1.OperatorVersionSpec) []Defect {
	var defects []Defect
	tasks := spec.TasksByName()
	for _, name := range PlanNames(spec.Plans) {
		plan := spec.Plans[name]
		if notPositive(plan.Timeout) {
			defects = append(defects, Defect{Rule: PlanTimeoutNotPositive, Value: plan.Timeout.Duration.String(), Plan: name})
		}
		for at, step := range plan.Steps() {
			if notPositive(step.Timeout) {
				defects = append(defects, Defect{Rule: StepTimeoutNotPositive, Value: step.Timeout.Duration.String(),
					Plan: name, Phase: at.PhaseIndex, Step: at.StepIndex})
			}
			for k, task := range step.Tasks {
				if _, ok := tasks[task]; !ok {
					defects = append(defects, Defect{Rule: UndefinedTask, Value: task, Plan: name, Phase: at.PhaseIndex, Step: at.StepIndex, Task: k})
				}
			}
		}
	}
	for i, p := range spec.Parameters {
		if _, ok := spec.Plans[p.Trigger]; p.Trigger != "" && !ok {
			defects = append(defects, Defect{Rule: TriggerWithoutPlan, Value: p.Trigger, Parameter: i})
		}
	}
	return defects
}

func notPositive(timeout *metav1.Duration) bool { return timeout != nil && timeout.Duration <= 0 }
