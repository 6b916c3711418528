package controllers

import (
	"fmt"
	"time"

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

// progressInterval is how often, at most, the progress of a running plan is
// written. The start of a run, its end, its errors and a new spec are written
// at once; in between, the messages of the steps change with every status
// change of the objects they wait for, and writing each costs more API
// requests than the plan's own applies.
const progressInterval = 2 * time.Second

// progressWait tells how long to hold back the status of i when, against the
// stored status before, all that changed is the progress of the same running
// plan, last written less than progressInterval ago. Held back, the status is
// written by the reconcile due after the wait, if the plan has not moved on.
func progressWait(before, i *kudov1beta1.Instance, now time.Time) time.Duration {
	stored, current := before.Status.ActivePlan, i.Status.ActivePlan
	if stored == nil || current == nil || stored.Name != current.Name ||
		stored.Status != kudov1beta1.ExecutionInProgress || current.Status != kudov1beta1.ExecutionInProgress ||
		before.Status.ObservedGeneration != i.Generation {
		return 0
	}
	storedRun, run := before.Status.PlanStatus[stored.Name], i.Status.PlanStatus[current.Name]
	if storedRun.UID != run.UID || storedRun.LastUpdatedTimestamp == nil {
		return 0
	}
	return max(0, storedRun.LastUpdatedTimestamp.Add(progressInterval).Sub(now))
}

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
