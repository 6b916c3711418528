// Package engine is KUDO's plan state machine, pure: given a plan, its status
// tree and the results of the steps run on this pass, it decides the new
// status tree and which steps run next. It has no client and no clock of its
// own; the controller gathers, runs the tasks and writes what it returns.
package engine

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// StepRef names a step of a plan.
type StepRef struct {
	Phase string
	Step  string
}

func (s StepRef) String() string { return s.Phase + "/" + s.Step }

// StepResult is what running a step's tasks gave on this pass.
type StepResult struct {
	// Done: every task of the step finished.
	Done bool
	// Err, when set, failed the step: transiently (retried) unless Fatal.
	Err   error
	Fatal bool
	// Message says what the step waits for when it is not done, or notes
	// something about how it finished (an object whose health could not be
	// judged).
	Message string
	// WaitingOn are the verdicts on the objects a step that is not done
	// waits on.
	WaitingOn []kudov1beta1.ObjectHealth
}

// NewPlanStatus is the status tree of a plan that was never run: every
// phase and step NEVER_RUN.
func NewPlanStatus(name string, plan *kudov1beta1.Plan) kudov1beta1.PlanStatus {
	return tree(name, plan, kudov1beta1.ExecutionNeverRun, "", nil)
}

// Start resets a plan's status tree for a run with a new uid: every phase
// and step PENDING, the plan PENDING until its first step runs. A plan
// without phases (deploy: {}) has nothing to wait for: COMPLETE at once, as
// in KUDO.
func Start(name string, plan *kudov1beta1.Plan, uid types.UID, now time.Time) kudov1beta1.PlanStatus {
	t := metav1.NewTime(now)
	if len(plan.Phases) == 0 {
		return tree(name, plan, kudov1beta1.ExecutionComplete, uid, &t)
	}
	return tree(name, plan, kudov1beta1.ExecutionPending, uid, &t)
}

func tree(name string, plan *kudov1beta1.Plan, status kudov1beta1.ExecutionStatus, uid types.UID, now *metav1.Time) kudov1beta1.PlanStatus {
	ps := kudov1beta1.PlanStatus{Name: name, Status: status, UID: uid, LastUpdatedTimestamp: now, StartedAt: now}
	for _, phase := range plan.Phases {
		phs := kudov1beta1.PhaseStatus{Name: phase.Name, Status: status}
		for _, step := range phase.Steps {
			phs.Steps = append(phs.Steps, kudov1beta1.StepStatus{Name: step.Name, Status: status})
		}
		ps.Phases = append(ps.Phases, phs)
	}
	return ps
}

// Due lists the steps to run now, in order. A serial plan runs its first
// phase that is not COMPLETE, a parallel plan all of them; a serial phase
// runs its first step that is not COMPLETE, a parallel phase all of them.
// A plan that has ended (COMPLETE or FATAL_ERROR) has none.
func Due(plan *kudov1beta1.Plan, status *kudov1beta1.PlanStatus) []StepRef {
	if status.Status.IsTerminal() {
		return nil
	}
	var due []StepRef
	for i, phase := range plan.Phases {
		phaseStatus := phaseStatusOf(status, i, phase.Name)
		if phaseStatus == kudov1beta1.ExecutionComplete {
			continue
		}
		for j, step := range phase.Steps {
			if stepStatusOf(status, i, j, step.Name) == kudov1beta1.ExecutionComplete {
				continue
			}
			due = append(due, StepRef{Phase: phase.Name, Step: step.Name})
			if phase.Strategy != kudov1beta1.Parallel {
				break
			}
		}
		if plan.Strategy != kudov1beta1.Parallel {
			break
		}
	}
	return due
}

// Record writes the results of this pass into a copy of the status tree and
// rolls the step statuses up into the phases and the plan. A step that is
// not done stays IN_PROGRESS; an error makes it ERROR (retried on the next
// pass) or FATAL_ERROR, which ends the plan, and so does a step that is not
// done past its deadline (Deadline). Timestamps change only when a status
// or message does.
func Record(plan *kudov1beta1.Plan, status *kudov1beta1.PlanStatus, results map[StepRef]StepResult, now time.Time) kudov1beta1.PlanStatus {
	out := *status.DeepCopy()
	changed := false
	budget := MaxWaitingOnPlan
	for i, phase := range plan.Phases {
		if i >= len(out.Phases) {
			break
		}
		phs := &out.Phases[i]
		for j, step := range phase.Steps {
			if j >= len(phs.Steps) {
				break
			}
			r, ran := results[StepRef{Phase: phase.Name, Step: step.Name}]
			if !ran {
				continue
			}
			s := &phs.Steps[j]
			if s.StartedAt == nil {
				t := metav1.NewTime(now)
				s.StartedAt, changed = &t, true
			}
			next, msg := stepOutcome(r)
			if at, timeout, ok := Deadline(plan, &out, step, s); ok && !next.IsTerminal() && !now.Before(at) {
				next, msg = kudov1beta1.ExecutionFatalError, timedOut(timeout, msg)
			}
			attempts := int32(0)
			if next == kudov1beta1.ExecutionError {
				attempts = nextAttempt(status, s, now)
				msg = fmt.Sprintf("%s (attempt %d; next try in %s)", msg, attempts, RetryBackoff(attempts))
			}
			msg = TruncateMessage(msg, MaxStepMessage)
			if s.Status != next || s.Message != msg || s.Attempts != attempts {
				s.Status, s.Message, s.Attempts, changed = next, msg, attempts, true
			}
			var waitingOn []kudov1beta1.ObjectHealth
			if next == kudov1beta1.ExecutionInProgress {
				waitingOn = r.WaitingOn
			}
			if recordWaiting(s, waitingOn, &budget, now) {
				changed = true
			}
		}
		next, msg := rollUp(stepStatuses(phs.Steps))
		if phs.Status != next || phs.Message != msg {
			phs.Status, phs.Message, changed = next, msg, true
		}
	}
	next, msg := rollUp(phaseStatuses(out.Phases))
	if next == kudov1beta1.ExecutionComplete && len(plan.Phases) == 0 {
		msg = ""
	}
	if out.Status != next || out.Message != msg {
		out.Status, out.Message, changed = next, msg, true
	}
	if changed {
		t := metav1.NewTime(now)
		out.LastUpdatedTimestamp = &t
	}
	return out
}

// Backoffs between tries of a step that failed with an error that may heal:
// from a second, doubling, to at most five minutes.
const (
	firstRetry = time.Second
	maxRetry   = 5 * time.Minute
)

// RetryBackoff is how long a step waits after its attempts-th failed try.
func RetryBackoff(attempts int32) time.Duration {
	if attempts < 1 {
		return 0
	}
	if attempts > 20 {
		return maxRetry
	}
	return min(firstRetry<<(attempts-1), maxRetry)
}

// nextAttempt numbers a failed try of a step. A step in ERROR is tried
// again on every reconcile, and the changes of the objects a plan applied
// wake many; a try before the backoff of the last counted one has passed
// keeps its number, so that the backoff grows with time, not with events.
// The plan's last update is when the last attempt was counted, or later.
func nextAttempt(before *kudov1beta1.PlanStatus, s *kudov1beta1.StepStatus, now time.Time) int32 {
	if s.Status != kudov1beta1.ExecutionError {
		return 1
	}
	if last := before.LastUpdatedTimestamp; last != nil && now.Before(last.Add(RetryBackoff(s.Attempts))) {
		return s.Attempts
	}
	return s.Attempts + 1
}

// NextRetry is how long until the first step in ERROR is due to be tried
// again: its backoff after the last counted attempt (nextAttempt).
func NextRetry(ps *kudov1beta1.PlanStatus, now time.Time) (time.Duration, bool) {
	var first time.Duration
	found := false
	for _, s := range ps.Steps() {
		if s.Status != kudov1beta1.ExecutionError {
			continue
		}
		d := RetryBackoff(s.Attempts)
		if last := ps.LastUpdatedTimestamp; last != nil {
			d = max(last.Add(d).Sub(now), time.Millisecond)
		}
		if !found || d < first {
			first, found = d, true
		}
	}
	return first, found
}

// Deadline is when a started step must be done: its own timeout after it
// started, or the plan's after the run started, whichever comes first; the
// string says which, for the message.
func Deadline(plan *kudov1beta1.Plan, ps *kudov1beta1.PlanStatus, step kudov1beta1.Step,
	s *kudov1beta1.StepStatus) (time.Time, string, bool) {
	var at time.Time
	var which string
	if step.Timeout != nil && s.StartedAt != nil {
		at, which = s.StartedAt.Add(step.Timeout.Duration), fmt.Sprintf("step %s timed out after %s", step.Name, step.Timeout.Duration)
	}
	if plan.Timeout != nil && ps.StartedAt != nil {
		if planAt := ps.StartedAt.Add(plan.Timeout.Duration); at.IsZero() || planAt.Before(at) {
			at, which = planAt, fmt.Sprintf("plan %s timed out after %s", ps.Name, plan.Timeout.Duration)
		}
	}
	return at, which, !at.IsZero()
}

func timedOut(timeout, waiting string) string {
	if waiting == "" {
		return timeout
	}
	return timeout + ": " + waiting
}

// NextDeadline is the first deadline of the steps that run, when one has
// one: when the plan must be judged again though nothing else changed.
func NextDeadline(plan *kudov1beta1.Plan, ps *kudov1beta1.PlanStatus) (time.Time, bool) {
	var first time.Time
	if ps.Status.IsTerminal() {
		return first, false
	}
	for where, step := range plan.Steps() {
		s := ps.Step(where.PhaseIndex, where.StepIndex)
		if s == nil || s.StartedAt == nil || s.Status.IsTerminal() {
			continue
		}
		if at, _, ok := Deadline(plan, ps, *step, s); ok && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first, !first.IsZero()
}

// Retry resumes a run that failed: its failed steps are PENDING again, with
// their clocks reset, and so is the plan's timeout; the steps it completed
// stay COMPLETE and do not run again.
func Retry(status *kudov1beta1.PlanStatus, now time.Time) kudov1beta1.PlanStatus {
	out := *status.DeepCopy()
	for i := range out.Phases {
		phase := &out.Phases[i]
		for j := range phase.Steps {
			if s := &phase.Steps[j]; s.Status == kudov1beta1.ExecutionFatalError || s.Status == kudov1beta1.ExecutionError {
				s.Status, s.Message, s.StartedAt, s.Attempts = kudov1beta1.ExecutionPending, "", nil, 0
			}
		}
		phase.Status, phase.Message = rollUp(stepStatuses(phase.Steps))
	}
	out.Status, out.Message = rollUp(phaseStatuses(out.Phases))
	t := metav1.NewTime(now)
	out.StartedAt, out.LastUpdatedTimestamp = &t, &t
	return out
}

func stepOutcome(r StepResult) (kudov1beta1.ExecutionStatus, string) {
	switch {
	case r.Err != nil && r.Fatal:
		return kudov1beta1.ExecutionFatalError, r.Err.Error()
	case r.Err != nil:
		return kudov1beta1.ExecutionError, r.Err.Error()
	case r.Done:
		return kudov1beta1.ExecutionComplete, r.Message
	default:
		return kudov1beta1.ExecutionInProgress, r.Message
	}
}

type named struct {
	name    string
	status  kudov1beta1.ExecutionStatus
	message string
}

func stepStatuses(steps []kudov1beta1.StepStatus) []named {
	out := make([]named, len(steps))
	for i, s := range steps {
		out[i] = named{"step " + s.Name, s.Status, s.Message}
	}
	return out
}

func phaseStatuses(phases []kudov1beta1.PhaseStatus) []named {
	out := make([]named, len(phases))
	for i, p := range phases {
		out[i] = named{"phase " + p.Name, p.Status, p.Message}
	}
	return out
}

// rollUp derives a parent's status from its children: FATAL_ERROR if one
// is, else ERROR if one is, COMPLETE when all are, IN_PROGRESS once one has
// started, PENDING before. The message is the first failing child's.
func rollUp(children []named) (kudov1beta1.ExecutionStatus, string) {
	complete, started := 0, false
	var errChild *named
	for i := range children {
		c := &children[i]
		switch c.status {
		case kudov1beta1.ExecutionFatalError:
			return kudov1beta1.ExecutionFatalError, fmt.Sprintf("%s failed: %s", c.name, c.message)
		case kudov1beta1.ExecutionError:
			if errChild == nil {
				errChild = c
			}
		case kudov1beta1.ExecutionComplete:
			complete++
			started = true
		case kudov1beta1.ExecutionInProgress:
			started = true
		}
	}
	switch {
	case errChild != nil:
		return kudov1beta1.ExecutionError, fmt.Sprintf("%s: %s", errChild.name, errChild.message)
	case complete == len(children):
		return kudov1beta1.ExecutionComplete, ""
	case started:
		return kudov1beta1.ExecutionInProgress, ""
	default:
		return kudov1beta1.ExecutionPending, ""
	}
}

func phaseStatusOf(status *kudov1beta1.PlanStatus, i int, name string) kudov1beta1.ExecutionStatus {
	if i < len(status.Phases) && status.Phases[i].Name == name {
		return status.Phases[i].Status
	}
	return kudov1beta1.ExecutionPending
}

func stepStatusOf(status *kudov1beta1.PlanStatus, i, j int, name string) kudov1beta1.ExecutionStatus {
	if s := status.Step(i, j); s != nil && s.Name == name {
		return s.Status
	}
	return kudov1beta1.ExecutionPending
}

// Cancel ends a plan run: the plan and every phase and step that had not
// finished become CANCELLED.
func Cancel(status *kudov1beta1.PlanStatus, now time.Time) kudov1beta1.PlanStatus {
	out := *status.DeepCopy()
	for i := range out.Phases {
		phase := &out.Phases[i]
		for j := range phase.Steps {
			if !phase.Steps[j].Status.IsTerminal() {
				phase.Steps[j].Status = kudov1beta1.ExecutionCancelled
			}
		}
		if !phase.Status.IsTerminal() {
			phase.Status = kudov1beta1.ExecutionCancelled
		}
	}
	out.Status, out.Message = kudov1beta1.ExecutionCancelled, "cancelled by spec.planExecution.status"
	t := metav1.NewTime(now)
	out.LastUpdatedTimestamp = &t
	return out
}

// StepTasks names the tasks of a step of a plan.
func StepTasks(plan kudov1beta1.Plan, ref StepRef) []string {
	for at, step := range plan.Steps() {
		if at.Phase.Name == ref.Phase && step.Name == ref.Step {
			return step.Tasks
		}
	}
	return nil
}
