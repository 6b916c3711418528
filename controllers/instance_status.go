package controllers

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Condition reasons of an Instance.
const (
	planInProgressReason = "PlanInProgress"
	planFailedReason     = "PlanFailed"
	planCompleteReason   = "PlanComplete"
	planCancelledReason  = "PlanCancelled"
	invalidRequestReason = "InvalidPlanRequest"
)

// setConditions derives the Instance's conditions from its plans: Ready
// while nothing runs and the last plan completed; Reconciling, naming what
// the running plan waits for; Stalled after a fatal error or a spec that
// selects no valid plan.
func setConditions(i *kudov1beta1.Instance, selectionErr error) {
	if selectionErr != nil {
		setReadiness(i, metav1.ConditionFalse, true, invalidRequestReason, selectionErr.Error())
		return
	}
	a := i.Status.ActivePlan
	if a == nil {
		setReadiness(i, metav1.ConditionUnknown, false, kudov1beta1.PlanPendingReason, "No plan has run yet")
		return
	}
	ps := i.Status.PlanStatus[a.Name]
	switch ps.Status {
	case kudov1beta1.ExecutionComplete:
		setReadiness(i, metav1.ConditionTrue, false, planCompleteReason, fmt.Sprintf("Plan %s is complete", a.Name))
	case kudov1beta1.ExecutionCancelled:
		setReadiness(i, metav1.ConditionFalse, false, planCancelledReason, fmt.Sprintf("Plan %s was cancelled", a.Name))
	case kudov1beta1.ExecutionFatalError:
		// KUDO leaves Ready Unknown after a fatal error; Stalled says why.
		setReadiness(i, metav1.ConditionUnknown, true, planFailedReason, fmt.Sprintf("Plan %s failed: %s", a.Name, ps.Message))
	default:
		setReadiness(i, metav1.ConditionUnknown, false, planInProgressReason, fmt.Sprintf("Plan %s is %s: %s", a.Name, ps.Status, blocking(&ps)))
	}
}

// blocking names what a running plan waits for: the first unfinished step
// and its message.
func blocking(ps *kudov1beta1.PlanStatus) string {
	for _, phase := range ps.Phases {
		for _, step := range phase.Steps {
			if step.Status == kudov1beta1.ExecutionInProgress || step.Status == kudov1beta1.ExecutionError {
				if step.Message == "" {
					return fmt.Sprintf("step %s/%s is %s", phase.Name, step.Name, step.Status)
				}
				return fmt.Sprintf("step %s/%s: %s", phase.Name, step.Name, step.Message)
			}
		}
	}
	return "starting"
}
