package v1beta1

import "iter"

// StepAt is where a step is in its plan, or its status in a run of the
// plan: its phase, or the phase's status, and the indices of both, which
// are the same in the plan and in its runs. It is no part of the API, and
// controller-gen can make no DeepCopy of a generic type.
// +kubebuilder:object:generate=false
type StepAt[P Phase | PhaseStatus] struct {
	Phase      *P
	PhaseIndex int
	StepIndex  int
}

// Steps yields the plan's steps in order, phase after phase, each with
// where it is. The receiver is a value so that a plan read from a map
// (ov.Spec.Plans[name].Steps()) can be walked; the steps yielded are the
// plan's own.
func (p Plan) Steps() iter.Seq2[StepAt[Phase], *Step] {
	return steps(p.Phases, func(phase *Phase) []Step { return phase.Steps })
}

// Steps yields the statuses of the run's steps in order, phase after phase,
// each with where it is; they are the run's own, to read or change.
func (ps PlanStatus) Steps() iter.Seq2[StepAt[PhaseStatus], *StepStatus] {
	return steps(ps.Phases, func(phase *PhaseStatus) []StepStatus { return phase.Steps })
}

func steps[P Phase | PhaseStatus, S any](phases []P, stepsOf func(*P) []S) iter.Seq2[StepAt[P], *S] {
	return func(yield func(StepAt[P], *S) bool) {
		for i := range phases {
			phase := &phases[i]
			steps := stepsOf(phase)
			for j := range steps {
				if !yield(StepAt[P]{Phase: phase, PhaseIndex: i, StepIndex: j}, &steps[j]) {
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
