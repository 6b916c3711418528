package engine

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// The protocol of spec.planExecution: how users, the CLI and the admission
// webhook ask the manager for plan runs, and how the manager answers. Every
// party writes what the functions below return, and reads it with them.
//
// A request is in one of four states:
//
//	{}                      nothing asked: the manager runs what the spec calls for (NextPlan)
//	{plan, uid}             run plan; a uid its status has not seen yet starts a new run (RequestRun)
//	{plan, uid, CANCELLED}  cancel the run uid of plan, which runs (RequestCancel)
//	{plan, uid, RETRY}      resume the run uid of plan, which failed (RequestRetry)
//
// Users and their tools write a new request at any time, but while a run
// asked for has not ended, only a run of the same plan may take its place
// (MayRequest; the admission webhook refuses the others). The manager
// answers a request for a run and no other:
//
//	{plan, uid, RETRY} → {plan, uid}   it resumed the run (AcknowledgeRetry)
//	{plan, uid, …}     → {}            the run ended, or was cancelled (ClearRequest)
//
// A request written in the meantime names another uid and is kept. The
// manager writes each answer before the status it goes with, so a reader
// may see the answer while the status still shows the run as it was: after
// a clear, AwaitedRun waits for a status that observed it.

// RequestRun asks for a run of the plan; uid must be fresh, to start a new
// run.
func RequestRun(plan string, uid types.UID) kudov1beta1.PlanExecution {
	return kudov1beta1.PlanExecution{PlanName: plan, UID: uid}
}

// RequestCancel asks to cancel the run the Instance's request asks for, so
// long as it has not ended; on a deleted Instance, the cleanup plan's run,
// which no request started, and whose end lets the Instance go.
func RequestCancel(i *kudov1beta1.Instance) (kudov1beta1.PlanExecution, error) {
	if a := i.Status.ActivePlan; !i.DeletionTimestamp.IsZero() && a != nil && !a.Status.IsTerminal() {
		return kudov1beta1.PlanExecution{PlanName: a.Name, UID: i.Status.PlanStatus[a.Name].UID, Status: kudov1beta1.ExecutionCancelled}, nil
	}
	pe := i.Spec.PlanExecution
	if pe.PlanName == "" || Settled(i) {
		return pe, fmt.Errorf("no plan of Instance %s is running", i.Name)
	}
	pe.Status = kudov1beta1.ExecutionCancelled
	return pe, nil
}

// RequestRetry asks to resume the last plan run of the Instance, which must
// have failed, from its failed steps.
func RequestRetry(i *kudov1beta1.Instance) (kudov1beta1.PlanExecution, error) {
	active := i.Status.ActivePlan
	if active == nil || active.Status != kudov1beta1.ExecutionFatalError {
		last := "no plan has run"
		if active != nil {
			last = fmt.Sprintf("plan %s is %s", active.Name, active.Status)
		}
		return i.Spec.PlanExecution, fmt.Errorf("only a failed plan can be retried, and %s", last)
	}
	uid := i.Status.PlanStatus[active.Name].UID
	return kudov1beta1.PlanExecution{PlanName: active.Name, UID: uid, Status: kudov1beta1.ExecutionRetry}, nil
}

// MayRequest reports whether a request to run the plan may take the place
// of the Instance's: that asks for no run still to end (Requested), or for
// one of the same plan, which then starts over, as in KUDO.
func MayRequest(i *kudov1beta1.Instance, plan string) bool {
	return !Requested(i) || plan == i.Spec.PlanExecution.PlanName
}

// AcknowledgeRetry is the manager's answer to a retry of the run resumed,
// once it resumed it: the retry becomes a plain request for the same run, so
// that the run, if it fails again, is not retried again. Any other request
// is kept.
func AcknowledgeRetry(pe kudov1beta1.PlanExecution, resumed types.UID) kudov1beta1.PlanExecution {
	if pe.UID != resumed || pe.Status != kudov1beta1.ExecutionRetry {
		return pe
	}
	return RequestRun(pe.PlanName, pe.UID)
}

// ClearRequest is the manager's answer when the run ended (its uid) is over, as
// KUDO's: no request, if it still asks for that run; a newer one is kept.
func ClearRequest(pe kudov1beta1.PlanExecution, ended types.UID) kudov1beta1.PlanExecution {
	if pe.UID != ended {
		return pe
	}
	return kudov1beta1.PlanExecution{}
}

// CancelRequested reports whether spec.planExecution asks to cancel the
// current run of the plan.
func CancelRequested(i *kudov1beta1.Instance, plan string) bool {
	pe := i.Spec.PlanExecution
	return pe.Status == kudov1beta1.ExecutionCancelled && pe.PlanName == plan && pe.UID == i.Status.PlanStatus[plan].UID
}

// RetryRequested reports whether spec.planExecution asks to resume the run
// of the plan that failed.
func RetryRequested(i *kudov1beta1.Instance, plan string) bool {
	pe := i.Spec.PlanExecution
	ps := i.Status.PlanStatus[plan]
	return pe.Status == kudov1beta1.ExecutionRetry && pe.PlanName == plan && pe.UID == ps.UID && ps.Status == kudov1beta1.ExecutionFatalError
}

// RerunRequested reports whether spec.planExecution asks for a new run of
// the plan that runs, with the uid it asks for: the plan was triggered again,
// by hand or by a change of the parameters that trigger it. As KUDO, the plan
// then starts over with the new values.
func RerunRequested(i *kudov1beta1.Instance, plan string) (types.UID, bool) {
	pe := i.Spec.PlanExecution
	if pe.PlanName != plan || pe.UID == "" || pe.Status != "" {
		return "", false
	}
	return pe.UID, pe.UID != i.Status.PlanStatus[plan].UID
}

// Requested reports whether spec.planExecution asks for a plan run that has
// not ended and is not cancelled. The controller clears it when the run ends.
func Requested(i *kudov1beta1.Instance) bool {
	pe := i.Spec.PlanExecution
	if pe.PlanName == "" || pe.Status == kudov1beta1.ExecutionCancelled {
		return false
	}
	ps, ok := i.Status.PlanStatus[pe.PlanName]
	return !ok || ps.UID != pe.UID || !ps.Status.IsTerminal()
}

// Settled reports whether the plan run an Instance was last asked for has
// ended, and no retry of it is asked for: the run AwaitedRun names. It
// relies on the protocol's order of writes: the manager writes ClearRequest
// before the status that ends the run, so an empty request may come before
// that status, and only a status that observed the clear tells the run's end.
func Settled(i *kudov1beta1.Instance) bool {
	plan, run, ok := AwaitedRun(i)
	return ok && run.Status.IsTerminal() && !RetryRequested(i, plan)
}

// AwaitedRun is the status of the plan run Settled waits for, once the
// status shows that run: the one spec.planExecution asks for, or, with no
// request, the active one, once the status has observed the spec. The
// manager clears a request (ClearRequest) before it writes the status that
// ends its run: until that status is written, the one read holds the run
// unfinished, or the run before, and ok is false.
func AwaitedRun(i *kudov1beta1.Instance) (plan string, run kudov1beta1.PlanStatus, ok bool) {
	if pe := i.Spec.PlanExecution; pe.PlanName != "" {
		run, ok = i.Status.PlanStatus[pe.PlanName]
		return pe.PlanName, run, ok && run.UID == pe.UID
	}
	a := i.Status.ActivePlan
	if a == nil || i.Status.ObservedGeneration != i.Generation {
		return "", run, false
	}
	run, ok = i.Status.PlanStatus[a.Name]
	return a.Name, run, ok
}

// AwaitedPlan names the plan Settled waits for: the one spec.planExecution
// asks for, else the active one, else deploy, which a new Instance runs.
func AwaitedPlan(i *kudov1beta1.Instance) string {
	if pe := i.Spec.PlanExecution; pe.PlanName != "" {
		return pe.PlanName
	}
	if i.Status.ActivePlan != nil {
		return i.Status.ActivePlan.Name
	}
	return kudov1beta1.DeployPlanName
}
