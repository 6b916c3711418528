package v1beta1

import "iter"

// StepAt is where a step is in its plan: its phase, and the indices of both,
// which are also where the step's status is in a run of the plan.
// +kubebuilder:object:generate=false
type StepAt struct {
	Phase      *Phase
	PhaseIndex int
	StepIndex  int
}

// Steps yields the plan's steps in order, phase after phase, each with
// where it is. The receiver is a value so that a plan read from a map
// (ov.Spec.Plans[name].Steps()) can be walked; the steps yielded are the
// plan's own.
func (p Plan) Steps() iter.Seq2[StepAt, *Step] {
	return func(yield func(StepAt, *Step) bool) {
		for i := range p.Phases {
			phase := &p.Phases[i]
			for j := range phase.Steps {
				if !yield(StepAt{Phase: phase, PhaseIndex: i, StepIndex: j}, &phase.Steps[j]) {
					return
				}
			}
		}
	}
}

// StepStatusAt is where a step's status is in the status of a plan run.
// +kubebuilder:object:generate=false
type StepStatusAt struct {
	Phase      *PhaseStatus
	PhaseIndex int
	StepIndex  int
}

// Steps yields the statuses of the run's steps in order, phase after phase,
// each with where it is; they are the run's own, to read or change.
func (ps PlanStatus) Steps() iter.Seq2[StepStatusAt, *StepStatus] {
	return func(yield func(StepStatusAt, *StepStatus) bool) {
		for i := range ps.Phases {
			phase := &ps.Phases[i]
			for j := range phase.Steps {
				if !yield(StepStatusAt{Phase: phase, PhaseIndex: i, StepIndex: j}, &phase.Steps[j]) {
					return
				}
			}
		}
	}
}

// Step is the status of the step-th step of the phase-th phase of the run,
// or nil when the run has none there: a status from before the plan changed
// may be shorter than the plan.
func (ps PlanStatus) Step(phase, step int) *StepStatus {
	if phase < 0 || phase >= len(ps.Phases) || step < 0 || step >= len(ps.Phases[phase].Steps) {
		return nil
	}
	return &ps.Phases[phase].Steps[step]
}
