package engine

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

const (
	cancelled = kudov1beta1.ExecutionCancelled
	retry     = kudov1beta1.ExecutionRetry
)

func pe(plan string, uid types.UID, status kudov1beta1.ExecutionStatus) kudov1beta1.PlanExecution {
	return kudov1beta1.PlanExecution{PlanName: plan, UID: uid, Status: status}
}

// requestCase is an Instance, the request a user's tool makes of it, or
// the error that refuses one.
type requestCase struct {
	name     string
	instance *kudov1beta1.Instance
	want     kudov1beta1.PlanExecution
	wantErr  string
}

func testRequest(t *testing.T, write func(*kudov1beta1.Instance) (kudov1beta1.PlanExecution, error), tests []requestCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.instance.Name = "web"
			got, err := write(tt.instance)
			if errString(err) != tt.wantErr || got != tt.want {
				t.Errorf("got %+v, %q; want %+v, %q", got, errString(err), tt.want, tt.wantErr)
			}
		})
	}
}

func TestCancelAsksToStopTheRunAskedForWhileItRuns(t *testing.T) {
	testRequest(t, RequestCancel, []requestCase{
		{"the run asked for runs", withSpec(instance("backup", inProgress, "u2"), request("backup", "u2", "")),
			pe("backup", "u2", cancelled), ""},
		{"the run asked for has not started yet", withSpec(instance("deploy", complete, "u1"), request("backup", "u2", "")),
			pe("backup", "u2", cancelled), ""},
		{"a retry not yet taken up", withSpec(instance("backup", fatal, "u2"), request("backup", "u2", retry)),
			pe("backup", "u2", cancelled), ""},
		{"nothing asked", instance("deploy", inProgress, "u1"), pe("", "", ""), "no plan of Instance web is running"},
		{"the run asked for ended", withSpec(instance("backup", complete, "u2"), request("backup", "u2", "")),
			pe("backup", "u2", ""), "no plan of Instance web is running"},
	})
}

func TestRetryAsksToResumeTheLastRunOnceItFailed(t *testing.T) {
	testRequest(t, RequestRetry, []requestCase{
		{"the last run failed, its request cleared", instance("backup", fatal, "u2"), pe("backup", "u2", retry), ""},
		{"the last run failed, and a newer request waits", withSpec(instance("backup", fatal, "u2"), request("deploy", "u3", "")),
			pe("backup", "u2", retry), ""},
		{"no plan has run", instance("", "", ""), pe("", "", ""), "only a failed plan can be retried, and no plan has run"},
		{"the last run completed", instance("deploy", complete, "u1"), pe("", "", ""),
			"only a failed plan can be retried, and plan deploy is COMPLETE"},
		{"the last run runs", withSpec(instance("deploy", inProgress, "u1"), request("deploy", "u1", "")), pe("deploy", "u1", ""),
			"only a failed plan can be retried, and plan deploy is IN_PROGRESS"},
	})
}

func TestOnlyARunOfTheSamePlanTakesThePlaceOfARunAskedFor(t *testing.T) {
	tests := []struct {
		name     string
		instance *kudov1beta1.Instance
		want     bool
	}{
		{"nothing asked", instance("deploy", inProgress, "u1"), true},
		{"the run asked for ended", withSpec(instance("backup", complete, "u2"), request("backup", "u2", "")), true},
		{"the run asked for is being cancelled", withSpec(instance("backup", inProgress, "u2"), request("backup", "u2", cancelled)), true},
		{"the run asked for runs", withSpec(instance("backup", inProgress, "u2"), request("backup", "u2", "")), false},
		{"the run asked for has not started yet", withSpec(instance("deploy", complete, "u1"), request("backup", "u2", "")), false},
		{"the run asked for is of the same plan, which starts over",
			withSpec(instance("deploy", inProgress, "u1"), request("deploy", "u1", "")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MayRequest(tt.instance, "deploy"); got != tt.want {
				t.Errorf("MayRequest(deploy) = %t, want %t", got, tt.want)
			}
		})
	}
}

// answerCase is a request and what the manager's answer about the run u2
// leaves of it.
type answerCase struct {
	name          string
	request, want kudov1beta1.PlanExecution
}

func testAnswer(t *testing.T, answer func(kudov1beta1.PlanExecution, types.UID) kudov1beta1.PlanExecution, tests []answerCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := answer(tt.request, "u2"); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAcknowledgedRetryIsAPlainRequestForTheSameRun(t *testing.T) {
	testAnswer(t, AcknowledgeRetry, []answerCase{
		{"the retry of the run resumed", pe("backup", "u2", retry), pe("backup", "u2", "")},
		{"a newer request is kept", pe("deploy", "u3", ""), pe("deploy", "u3", "")},
		{"a cancel of the run resumed is kept", pe("backup", "u2", cancelled), pe("backup", "u2", cancelled)},
	})
}

func TestClearKeepsANewerRequest(t *testing.T) {
	testAnswer(t, ClearRequest, []answerCase{
		{"the request of the run that ended is cleared", pe("backup", "u2", ""), pe("", "", "")},
		{"the cancel of the run that ended is cleared", pe("backup", "u2", cancelled), pe("", "", "")},
		{"a newer request of the same plan is kept", pe("backup", "u3", ""), pe("backup", "u3", "")},
		{"a newer request of another plan is kept", pe("deploy", "u3", ""), pe("deploy", "u3", "")},
		{"no request stays none", pe("", "", ""), pe("", "", "")},
	})
}

// TestEachRequestIsReadAsWhatItAsks follows one run through the protocol:
// what the writers write, the readers take for what it asks.
func TestEachRequestIsReadAsWhatItAsks(t *testing.T) {
	i := instance("deploy", complete, "u1")
	i.Spec.PlanExecution = RequestRun("backup", "u2")
	if plan, uid, err := NextPlan(i, ov(), i.Status.AppliedParameters, nil); plan != "backup" || uid != "u2" || err != nil {
		t.Fatalf("after RequestRun, NextPlan = %q, %q, %v; want backup, u2", plan, uid, err)
	}

	StartPlan(i, ov(), "backup", "u2", t0, i.Status.AppliedParameters)
	i.Status.PlanStatus["backup"] = kudov1beta1.PlanStatus{Name: "backup", UID: "u2", Status: fatal}
	i.Status.ActivePlan.Status = fatal
	i.Spec.PlanExecution = ClearRequest(i.Spec.PlanExecution, "u2")
	if Requested(i) {
		t.Fatalf("after ClearRequest, Requested = true")
	}

	var err error
	if i.Spec.PlanExecution, err = RequestRetry(i); err != nil || !RetryRequested(i, "backup") || Settled(i) {
		t.Fatalf("after RequestRetry (%v), RetryRequested = %t, Settled = %t; want true, false",
			err, RetryRequested(i, "backup"), Settled(i))
	}

	i.Status.PlanStatus["backup"] = kudov1beta1.PlanStatus{Name: "backup", UID: "u2", Status: inProgress}
	i.Spec.PlanExecution = AcknowledgeRetry(i.Spec.PlanExecution, "u2")
	if _, rerun := RerunRequested(i, "backup"); RetryRequested(i, "backup") || rerun || !Requested(i) {
		t.Fatalf("after AcknowledgeRetry, RetryRequested = %t, RerunRequested = %t, Requested = %t; want false, false, true",
			RetryRequested(i, "backup"), rerun, Requested(i))
	}

	if i.Spec.PlanExecution, err = RequestCancel(i); err != nil || !CancelRequested(i, "backup") {
		t.Fatalf("after RequestCancel (%v), CancelRequested = false", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
