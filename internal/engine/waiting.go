package engine

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Bounds of the records of what a running plan's steps wait on: a step
// lists at most MaxWaitingOnStep objects, a plan MaxWaitingOnPlan, and each
// record's message and rule hold at most MaxWaitingText bytes (its observed
// values are bounded by healthrule): about 50 KB at most, whatever the
// package.
const (
	MaxWaitingOnStep = 8
	MaxWaitingOnPlan = 32
	MaxWaitingText   = 512
)

// recordWaiting sets what step s waits on from the verdicts of this pass,
// within what is left of the plan's budget, keeping when each object was
// first found waiting. It reports whether the record changed.
func recordWaiting(s *kudov1beta1.StepStatus, verdicts []kudov1beta1.ObjectHealth, budget *int, now time.Time) bool {
	keep := min(len(verdicts), MaxWaitingOnStep, max(*budget, 0))
	*budget -= keep
	waiting := make([]kudov1beta1.ObjectHealth, 0, keep)
	for _, v := range verdicts[:keep] {
		v.Message, v.Rule = TruncateMessage(v.Message, MaxWaitingText), TruncateMessage(v.Rule, MaxWaitingText)
		v.Since = sinceOf(s.WaitingOn, &v, now)
		waiting = append(waiting, v)
	}
	more := int32(len(verdicts) - keep)
	if equality.Semantic.DeepEqual(s.WaitingOn, waiting) && s.MoreWaitingOn == more {
		return false
	}
	if keep == 0 {
		waiting = nil
	}
	s.WaitingOn, s.MoreWaitingOn = waiting, more
	return true
}

// sinceOf is when the object of v was first found waiting in this step:
// as recorded before, or now.
func sinceOf(before []kudov1beta1.ObjectHealth, v *kudov1beta1.ObjectHealth, now time.Time) *metav1.Time {
	for _, b := range before {
		if b.APIVersion == v.APIVersion && b.Kind == v.Kind && b.Namespace == v.Namespace && b.Name == v.Name && b.Since != nil {
			return b.Since
		}
	}
	t := metav1.NewTime(now)
	return &t
}
