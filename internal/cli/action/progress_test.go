package action

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// asked is an Instance asked to run deploy with uid u2, whose status shows
// run uid of deploy with its steps main/config and main/app.
func asked(uid string, status kudov1beta1.ExecutionStatus, config, app kudov1beta1.StepStatus) *kudov1beta1.Instance {
	i := &kudov1beta1.Instance{}
	i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "deploy", UID: "u2"}
	config.Name, app.Name = "config", "app"
	i.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{"deploy": {Name: "deploy", UID: types.UID(uid), Status: status,
		Phases: []kudov1beta1.PhaseStatus{{Name: "main", Status: status, Steps: []kudov1beta1.StepStatus{config, app}}}}}
	return i
}

func withRetry(i *kudov1beta1.Instance) *kudov1beta1.Instance {
	i.Spec.PlanExecution.Status = kudov1beta1.ExecutionRetry
	return i
}

func TestProgressSaysWhatChangedInTheAwaitedRunOneLineAStep(t *testing.T) {
	const (
		pending    = kudov1beta1.ExecutionPending
		inProgress = kudov1beta1.ExecutionInProgress
		complete   = kudov1beta1.ExecutionComplete
		failed     = kudov1beta1.ExecutionError
		fatal      = kudov1beta1.ExecutionFatalError
	)
	step := func(s kudov1beta1.ExecutionStatus, m string) kudov1beta1.StepStatus {
		return kudov1beta1.StepStatus{Status: s, Message: m}
	}
	waiting := step(inProgress, "waiting for Deployment web: Available: 0/2")
	refused := step(failed, "task app: connection refused (attempt 2; next try in 2s)")
	tests := []struct {
		name      string
		last, cur *kudov1beta1.Instance
		want      []string
	}{
		{"the run before the one asked for says nothing", nil,
			asked("u1", complete, step(complete, ""), step(complete, "")), nil},
		{"the first read of the run names its status and its started steps", nil,
			asked("u2", inProgress, step(complete, ""), waiting),
			[]string{"Plan deploy [IN_PROGRESS]", "Step main/config [COMPLETE]",
				"Step main/app [IN_PROGRESS] (waiting for Deployment web: Available: 0/2)"}},
		{"a run that has not started a step names none", nil,
			asked("u2", pending, step(pending, ""), step(pending, "")), nil},
		{"nothing changed, nothing said", asked("u2", inProgress, step(complete, ""), waiting),
			asked("u2", inProgress, step(complete, ""), waiting), nil},
		{"a step in error says why", asked("u2", inProgress, step(complete, ""), waiting),
			asked("u2", inProgress, step(complete, ""), refused),
			[]string{"Step main/app [ERROR] (task app: connection refused (attempt 2; next try in 2s))"}},
		{"a new message of a step that waits is said", asked("u2", inProgress, step(complete, ""), waiting),
			asked("u2", inProgress, step(complete, ""), step(inProgress, "waiting for Deployment web: Available: 1/2")),
			[]string{"Step main/app [IN_PROGRESS] (waiting for Deployment web: Available: 1/2)"}},
		{"a failed run says which step failed and why", asked("u2", inProgress, step(complete, ""), refused),
			asked("u2", fatal, step(complete, ""), step(fatal, "task app: Job web-migrate failed: BackoffLimitExceeded")),
			[]string{"Step main/app [FATAL_ERROR] (task app: Job web-migrate failed: BackoffLimitExceeded)", "Plan deploy [FATAL_ERROR]"}},
		{"a failed run asked to resume says nothing until it does", nil,
			withRetry(asked("u2", fatal, step(complete, ""), step(fatal, "task app: boom"))), nil},
		{"the run asked for, after the run before, is new in full", asked("u1", complete, step(complete, ""), step(complete, "")),
			asked("u2", inProgress, step(inProgress, ""), step(pending, "")),
			[]string{"Plan deploy [IN_PROGRESS]", "Step main/config [IN_PROGRESS]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Progress(tt.last, tt.cur); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
