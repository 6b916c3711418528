package engine

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Problem is why an object of a completed plan keeps its Instance from
// being Ready: a Reason of the Instance's, and a message naming the object.
type Problem struct {
	Reason  string
	Message string
}

// Readiness is the kstatus trio an object shows: Ready with this status,
// Stalled while Stalled holds, Reconciling while Ready is Unknown and it is
// not stalled.
type Readiness struct {
	Ready   metav1.ConditionStatus
	Stalled bool
	Reason  string
	Message string
}

// InstanceReadiness derives an Instance's conditions from its plans and,
// once the last plan completed, from what it applied (problems, as KUDO
// judged its workloads): Ready while nothing runs, the last plan completed
// and every object is there, as applied and healthy; Reconciling, naming
// what the running plan waits for; Stalled after a fatal error, a spec that
// selects no valid plan (selectionErr) or a fight over an object.
func InstanceReadiness(i *kudov1beta1.Instance, selectionErr error, problems []Problem) Readiness {
	if selectionErr != nil {
		return Readiness{metav1.ConditionFalse, true, kudov1beta1.InvalidRequestReason, selectionErr.Error()}
	}
	a := i.Status.ActivePlan
	if a == nil {
		return Readiness{metav1.ConditionUnknown, false, kudov1beta1.PlanPendingReason, "No plan has run yet"}
	}
	ps := i.Status.PlanStatus[a.Name]
	switch ps.Status {
	case kudov1beta1.ExecutionComplete:
		if len(problems) > 0 {
			return notReady(problems)
		}
		return Readiness{metav1.ConditionTrue, false, kudov1beta1.ResourcesReadyReason, fmt.Sprintf("Plan %s is complete", a.Name)}
	case kudov1beta1.ExecutionCancelled:
		return Readiness{metav1.ConditionFalse, false, kudov1beta1.PlanCancelledReason, fmt.Sprintf("Plan %s was cancelled", a.Name)}
	case kudov1beta1.ExecutionFatalError:
		// KUDO leaves Ready Unknown after a fatal error; Stalled says why.
		return Readiness{metav1.ConditionUnknown, true, kudov1beta1.PlanFailedReason, fmt.Sprintf("Plan %s failed: %s", a.Name, ps.Message)}
	default:
		return Readiness{metav1.ConditionUnknown, false, kudov1beta1.PlanInProgressReason,
			fmt.Sprintf("Plan %s is %s: %s", a.Name, ps.Status, blocking(&ps))}
	}
}

// notReady: Ready False for the gravest problem, the gravest first in the
// message, as many as MaxProblemsMessage holds and a count of the others.
func notReady(problems []Problem) Readiness {
	problems = slices.Clone(problems)
	slices.SortStableFunc(problems, func(a, b Problem) int { return severity[a.Reason] - severity[b.Reason] })
	messages := make([]string, len(problems))
	for n, p := range problems {
		messages[n] = p.Message
	}
	reason := problems[0].Reason
	return Readiness{metav1.ConditionFalse, reason == kudov1beta1.DriftFightReason, reason, JoinAtMost(messages, MaxProblemsMessage)}
}

// blocking names what a running plan waits for: the first unfinished step
// and its message.
func blocking(ps *kudov1beta1.PlanStatus) string {
	for at, step := range ps.Steps() {
		if step.Status == kudov1beta1.ExecutionInProgress || step.Status == kudov1beta1.ExecutionError {
			if step.Message == "" {
				return fmt.Sprintf("step %s/%s is %s", at.Phase.Name, step.Name, step.Status)
			}
			return fmt.Sprintf("step %s/%s: %s", at.Phase.Name, step.Name, step.Message)
		}
	}
	return "starting"
}

// severity orders the reasons of problems: the Ready condition carries the
// gravest.
var severity = map[string]int{
	kudov1beta1.DriftFightReason: 0, kudov1beta1.MissingReason: 1, kudov1beta1.ResourceNotReadyReason: 2, kudov1beta1.DriftedReason: 3,
}
