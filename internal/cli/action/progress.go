package action

import (
	"fmt"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
)

// Progress lists, one line each, what changed in the awaited plan run
// between two reads of an Instance (last is nil before the first): the
// run's status, and each step whose status or message changed, with its
// message, which says what it waits for or why it failed. Pending steps are
// left out: they have nothing to say yet.
func Progress(last, cur *kudov1beta1.Instance) []string {
	name, run, ok := engine.AwaitedRun(cur)
	if !ok || engine.RetryRequested(cur, name) {
		// The status still shows the run before, or the failure being retried.
		return nil
	}
	var before kudov1beta1.PlanStatus
	if last != nil {
		if lastName, lastRun, ok := engine.AwaitedRun(last); ok && lastName == name && lastRun.UID == run.UID {
			before = lastRun
		}
	}
	var lines []string
	planLine := ""
	if run.Status != before.Status && shows(run.Status) {
		planLine = fmt.Sprintf("Plan %s [%s]", name, run.Status)
	}
	// A run's start comes before its steps, its end after them.
	if planLine != "" && !run.Status.IsTerminal() {
		lines = append(lines, planLine)
	}
	for at, step := range run.Steps() {
		status, msg := StepStatus(&before, at.Phase.Name, step.Name)
		if shows(step.Status) && (step.Status != status || step.Message != msg) {
			lines = append(lines, fmt.Sprintf("Step %s/%s [%s]%s", at.Phase.Name, step.Name, step.Status, InParentheses(step.Message)))
		}
	}
	if planLine != "" && run.Status.IsTerminal() {
		lines = append(lines, planLine)
	}
	return lines
}

// shows reports whether a plan or step in this state has started.
func shows(s kudov1beta1.ExecutionStatus) bool {
	return s != "" && s != kudov1beta1.ExecutionPending && s != kudov1beta1.ExecutionNeverRun
}

// StepStatus is the status and message of a step of the plan status, or
// NEVER_RUN.
func StepStatus(ps *kudov1beta1.PlanStatus, phase, step string) (kudov1beta1.ExecutionStatus, string) {
	for at, s := range ps.Steps() {
		if at.Phase.Name == phase && s.Name == step {
			return s.Status, s.Message
		}
	}
	return kudov1beta1.ExecutionNeverRun, ""
}

// ObjectName names the object of a verdict as kubectl does: Kind
// namespace/name.
func ObjectName(w *kudov1beta1.ObjectHealth) string {
	if w.Namespace == "" {
		return w.Kind + " " + w.Name
	}
	return w.Kind + " " + w.Namespace + "/" + w.Name
}

// Observed lists the values a health rule read: status.phase="Pending", ...
func Observed(w *kudov1beta1.ObjectHealth) string {
	parts := make([]string, len(w.Observed))
	for n, o := range w.Observed {
		parts[n] = o.Field + "=" + o.Value
	}
	return strings.Join(parts, ", ")
}

// InParentheses is a message after what it is of, in parentheses; nothing
// when empty.
func InParentheses(m string) string {
	if m == "" {
		return ""
	}
	return " (" + m + ")"
}
