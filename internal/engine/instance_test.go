package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

const appVersion1 = "app-1.0.0"

// ov has deploy, update and backup plans, and parameters that trigger them.
func ov() *kudov1beta1.OperatorVersion {
	plan := kudov1beta1.Plan{Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{{Name: "s", Tasks: []string{"t"}}}}}}
	o := &kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{
		Plans: map[string]kudov1beta1.Plan{"deploy": plan, "update": plan, "backup": plan},
		Parameters: []kudov1beta1.Parameter{
			{Name: "SIZE"}, {Name: "BUCKET", Trigger: "backup"}, {Name: "REPLICAS", Default: ptr.To("1")},
		},
	}}
	o.Name = appVersion1
	return o
}

// instance is an Instance whose last run of plan ended, or runs, in status.
func instance(plan string, status kudov1beta1.ExecutionStatus, uid types.UID) *kudov1beta1.Instance {
	i := &kudov1beta1.Instance{}
	i.Spec.Parameters = map[string]string{"SIZE": "1"}
	if plan == "" {
		return i
	}
	i.Status.AppliedOperatorVersion = appVersion1
	i.Status.AppliedParameters = map[string]string{"SIZE": "1"}
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: plan, Status: status}
	i.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{plan: {Name: plan, Status: status, UID: uid}}
	return i
}

func withSpec(i *kudov1beta1.Instance, change func(*kudov1beta1.Instance)) *kudov1beta1.Instance {
	change(i)
	return i
}

func request(plan string, uid types.UID, status kudov1beta1.ExecutionStatus) func(*kudov1beta1.Instance) {
	return func(i *kudov1beta1.Instance) {
		i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: plan, UID: uid, Status: status}
	}
}

func TestActivePlan(t *testing.T) {
	tests := []struct {
		name        string
		instance    *kudov1beta1.Instance
		want        string
		wantRunning bool
	}{
		{"a new Instance has no active plan", instance("", "", ""), "", false},
		{"a plan in progress runs", instance("deploy", inProgress, "u1"), "deploy", true},
		{"a pending plan runs", instance("deploy", pending, "u1"), "deploy", true},
		{"a plan in error is retried, so it runs", instance("deploy", errored, "u1"), "deploy", true},
		{"a complete plan does not run", instance("deploy", complete, "u1"), "deploy", false},
		{"a plan with a fatal error does not run", instance("deploy", fatal, "u1"), "deploy", false},
		{"a plan the OperatorVersion no longer defines does not run", instance("gone", inProgress, "u1"), "gone", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, running := ActivePlan(tt.instance, ov().Spec.Plans)
			if got != tt.want || running != tt.wantRunning {
				t.Errorf("ActivePlan = %q, %t; want %q, %t", got, running, tt.want, tt.wantRunning)
			}
		})
	}
}

func TestNextPlan(t *testing.T) {
	newUID := func() types.UID { return "fresh" }
	upgraded := ov()
	upgraded.Name = "app-2.0.0"
	noDeploy := ov()
	delete(noDeploy.Spec.Plans, "deploy")
	tests := []struct {
		name     string
		instance *kudov1beta1.Instance
		ov       *kudov1beta1.OperatorVersion
		want     string
		wantUID  types.UID
		wantErr  string
	}{
		{"a new Instance deploys", instance("", "", ""), ov(), "deploy", "fresh", ""},
		{"a new Instance of an OperatorVersion without deploy cannot", instance("", "", ""), noDeploy, "", "", "has no deploy plan"},
		{"nothing changed, nothing runs", instance("deploy", complete, "u1"), ov(), "", "", ""},
		{"spec.planExecution with a new uid runs its plan with its uid",
			withSpec(instance("deploy", complete, "u1"), request("backup", "u2", "")), ov(), "backup", "u2", ""},
		{"spec.planExecution of the run that ended asks for nothing",
			withSpec(instance("deploy", complete, "u1"), request("deploy", "u1", "")), ov(), "", "", ""},
		{"spec.planExecution of an undefined plan is refused",
			withSpec(instance("deploy", complete, "u1"), request("restore", "u2", "")), ov(), "", "", `asks for plan "restore"`},
		{"a new OperatorVersion runs the upgrade plan, else update", instance("deploy", complete, "u1"), upgraded, "update", "fresh", ""},
		{"a changed parameter without trigger runs update",
			withSpec(instance("deploy", complete, "u1"), func(i *kudov1beta1.Instance) { i.Spec.Parameters["SIZE"] = "2" }), ov(), "update", "fresh", ""},
		{"a changed parameter runs its trigger",
			withSpec(instance("deploy", complete, "u1"), func(i *kudov1beta1.Instance) { i.Spec.Parameters["BUCKET"] = "b" }), ov(), "backup", "fresh", ""},
		{"parameters that trigger different plans are refused",
			withSpec(instance("deploy", complete, "u1"), func(i *kudov1beta1.Instance) {
				i.Spec.Parameters["BUCKET"], i.Spec.Parameters["SIZE"] = "b", "2"
			}), ov(), "", "", "trigger different plans"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, uid, err := NextPlan(tt.instance, tt.ov, tt.instance.Spec.Parameters, newUID)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || uid != tt.wantUID {
				t.Errorf("NextPlan = %q, %q, %v; want %q, %q", got, uid, err, tt.want, tt.wantUID)
			}
		})
	}
}

// TestPlanRequests: the questions the webhook (Requested), the CLI's --wait
// (Settled, AwaitedPlan) and the controller (CancelRequested) ask of
// spec.planExecution against the status.
func TestPlanRequests(t *testing.T) {
	tests := []struct {
		name                       string
		instance                   *kudov1beta1.Instance
		requested, settled, cancel bool
		awaited                    string
	}{
		{"a new Instance: nothing asked, deploy awaited", instance("", "", ""), false, false, false, "deploy"},
		{"a plan asked for that has not started yet", withSpec(instance("deploy", complete, "u1"), request("backup", "u2", "")),
			true, false, false, "backup"},
		{"a plan asked for that runs", withSpec(instance("backup", inProgress, "u2"), request("backup", "u2", "")),
			true, false, false, "backup"},
		{"a plan asked for that ended", withSpec(instance("backup", fatal, "u2"), request("backup", "u2", "")),
			false, true, false, "backup"},
		{"a cancel of the running plan", withSpec(instance("backup", inProgress, "u2"), request("backup", "u2", kudov1beta1.ExecutionCancelled)),
			false, false, true, "backup"},
		{"a cancel of an earlier run is not this run's", withSpec(instance("backup", inProgress, "u3"), request("backup", "u2", kudov1beta1.ExecutionCancelled)),
			false, false, false, "backup"},
		{"nothing asked, the active plan ended", instance("deploy", complete, "u1"), false, true, false, "deploy"},
		{"nothing asked since the request was emptied, its end not yet written: the plan before ended", withSpec(instance("deploy", complete, "u1"),
			func(i *kudov1beta1.Instance) { i.Generation, i.Status.ObservedGeneration = 3, 2 }), false, false, false, "deploy"},
		{"nothing asked, the active plan runs (started by a parameter change)", instance("update", inProgress, "u1"), false, false, false, "update"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Requested(tt.instance); got != tt.requested {
				t.Errorf("Requested = %t, want %t", got, tt.requested)
			}
			if got := Settled(tt.instance); got != tt.settled {
				t.Errorf("Settled = %t, want %t", got, tt.settled)
			}
			if got := CancelRequested(tt.instance, tt.awaited); got != tt.cancel {
				t.Errorf("CancelRequested = %t, want %t", got, tt.cancel)
			}
			if got := AwaitedPlan(tt.instance); got != tt.awaited {
				t.Errorf("AwaitedPlan = %q, want %q", got, tt.awaited)
			}
		})
	}
}

func TestStartPlan(t *testing.T) {
	i := instance("", "", "")
	i.Spec.Parameters = map[string]string{"SIZE": "3"}
	i.Generation = 7
	EnsurePlanStatuses(&i.Status, ov().Spec.Plans)
	if len(i.Status.PlanStatus) != 3 || i.Status.PlanStatus["backup"].Status != never {
		t.Fatalf("every plan gets a NEVER_RUN tree: %+v", i.Status.PlanStatus)
	}
	StartPlan(i, ov(), "deploy", "u1", t0, i.Spec.Parameters)
	ps := i.Status.PlanStatus["deploy"]
	if ps.Status != pending || ps.UID != "u1" || ps.Phases[0].Steps[0].Status != pending || !ps.LastUpdatedTimestamp.Time.Equal(t0) {
		t.Errorf("deploy starts PENDING with its uid: %+v", ps)
	}
	if a := i.Status.ActivePlan; a == nil || a.Name != "deploy" || a.Status != pending {
		t.Errorf("ActivePlan = %+v", a)
	}
	i.Spec.Parameters["SIZE"] = "4"
	if i.Status.AppliedOperatorVersion != appVersion1 || i.Status.AppliedParameters["SIZE"] != "3" || i.Status.AppliedGeneration != 7 {
		t.Errorf("the run records the spec it started from, as a copy: %q %v of generation %d",
			i.Status.AppliedOperatorVersion, i.Status.AppliedParameters, i.Status.AppliedGeneration)
	}
	EnsurePlanStatuses(&i.Status, ov().Spec.Plans)
	if i.Status.PlanStatus["deploy"].UID != "u1" {
		t.Error("EnsurePlanStatuses replaced a plan's run")
	}
}

func TestInstanceReadiness(t *testing.T) {
	running := instance("deploy", inProgress, "u1")
	running.Status.PlanStatus["deploy"] = kudov1beta1.PlanStatus{Status: inProgress, Phases: []kudov1beta1.PhaseStatus{{
		Name: "main", Status: inProgress, Steps: []kudov1beta1.StepStatus{
			{Name: "config", Status: complete}, {Name: "app", Status: inProgress, Message: "waiting for Deployment web"},
		}}}}
	starting := instance("deploy", pending, "u1")
	failed := instance("deploy", fatal, "u1")
	failed.Status.PlanStatus["deploy"] = kudov1beta1.PlanStatus{Status: fatal, Message: "step main/app failed: boom"}
	tests := []struct {
		name         string
		instance     *kudov1beta1.Instance
		selectionErr error
		problems     []Problem
		want         Readiness
	}{
		{"no plan has run yet", instance("", "", ""), nil, nil,
			Readiness{metav1.ConditionUnknown, false, kudov1beta1.PlanPendingReason, "No plan has run yet"}},
		{"a running plan names the step it waits for", running, nil, []Problem{{kudov1beta1.ResourceNotReadyReason, "waiting for Deployment web"}},
			Readiness{metav1.ConditionUnknown, false, kudov1beta1.PlanInProgressReason, "Plan deploy is IN_PROGRESS: step main/app: waiting for Deployment web"}},
		{"a plan that has not started a step yet", starting, nil, nil,
			Readiness{metav1.ConditionUnknown, false, kudov1beta1.PlanInProgressReason, "Plan deploy is PENDING: starting"}},
		{"a complete plan whose workloads are ready is Ready, as KUDO's ResourcesReady", instance("deploy", complete, "u1"), nil, nil,
			Readiness{metav1.ConditionTrue, false, kudov1beta1.ResourcesReadyReason, "Plan deploy is complete"}},
		{"a complete plan with a workload not ready is not Ready, as KUDO's ResourceNotReady", instance("deploy", complete, "u1"), nil,
			[]Problem{{kudov1beta1.ResourceNotReadyReason, "waiting for Deployment web: Available: 0/2"}, {kudov1beta1.ResourceNotReadyReason, "waiting for Pod web-1: not ready"}},
			Readiness{metav1.ConditionFalse, false, kudov1beta1.ResourceNotReadyReason,
				"waiting for Deployment web: Available: 0/2, waiting for Pod web-1: not ready"}},
		{"a complete plan with an object gone is not Ready, Missing naming it first", instance("deploy", complete, "u1"), nil,
			[]Problem{{kudov1beta1.ResourceNotReadyReason, "waiting for Deployment web: Available: 0/2"}, {kudov1beta1.MissingReason, "ConfigMap conf was deleted"}},
			Readiness{metav1.ConditionFalse, false, kudov1beta1.MissingReason, "ConfigMap conf was deleted, waiting for Deployment web: Available: 0/2"}},
		{"a complete plan with an object someone else changed is not Ready: Drifted", instance("deploy", complete, "u1"), nil,
			[]Problem{{kudov1beta1.DriftedReason, "Deployment web was changed"}},
			Readiness{metav1.ConditionFalse, false, kudov1beta1.DriftedReason, "Deployment web was changed"}},
		{"a fight over an object stalls the Instance", instance("deploy", complete, "u1"), nil,
			[]Problem{{kudov1beta1.DriftedReason, "ConfigMap a was changed"}, {kudov1beta1.DriftFightReason, "ConfigMap b is changed again after each correction"}},
			Readiness{metav1.ConditionFalse, true, kudov1beta1.DriftFightReason, "ConfigMap b is changed again after each correction, ConfigMap a was changed"}},
		{"a cancelled plan is not Ready", instance("deploy", kudov1beta1.ExecutionCancelled, "u1"), nil, nil,
			Readiness{metav1.ConditionFalse, false, kudov1beta1.PlanCancelledReason, "Plan deploy was cancelled"}},
		{"a fatal error stalls, leaving Ready Unknown as KUDO does", failed, nil, nil,
			Readiness{metav1.ConditionUnknown, true, kudov1beta1.PlanFailedReason, "Plan deploy failed: step main/app failed: boom"}},
		{"a spec that selects no valid plan stalls", instance("deploy", complete, "u1"), errors.New("parameters that trigger different plans"), nil,
			Readiness{metav1.ConditionFalse, true, kudov1beta1.InvalidRequestReason, "parameters that trigger different plans"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InstanceReadiness(tt.instance, tt.selectionErr, tt.problems); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestRerunRequested(t *testing.T) {
	tests := []struct {
		name     string
		instance *kudov1beta1.Instance
		wantUID  types.UID
		want     bool
	}{
		{"the running plan asked for again with a new uid starts over",
			withSpec(instance("deploy", inProgress, "u1"), request("deploy", "u2", "")), "u2", true},
		{"the run that is running is not a new one", withSpec(instance("deploy", inProgress, "u1"), request("deploy", "u1", "")), "u1", false},
		{"a cancel is not a new run", withSpec(instance("deploy", inProgress, "u1"), request("deploy", "u2", kudov1beta1.ExecutionCancelled)), "", false},
		{"another plan is not a new run of this one", withSpec(instance("deploy", inProgress, "u1"), request("backup", "u2", "")), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if uid, got := RerunRequested(tt.instance, "deploy"); got != tt.want || uid != tt.wantUID {
				t.Errorf("RerunRequested = %q, %t; want %q, %t", uid, got, tt.wantUID, tt.want)
			}
		})
	}
}

func TestRevisionsRecordEachRunAndKeepTheLastOnes(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{}
	ov.Name = "web-0.1.0"
	ov.Spec.Plans = map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{{Name: "a"}}}}}}
	i := &kudov1beta1.Instance{}
	i.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{}
	for run := 1; run <= kudov1beta1.MaxRevisions+2; run++ {
		i.Spec.Parameters = map[string]string{"RUN": fmt.Sprint(run)}
		uid := types.UID(fmt.Sprint("uid-", run))
		StartPlan(i, ov, "deploy", uid, t0, i.Spec.Parameters)
		ps := i.Status.PlanStatus["deploy"]
		ps.Status = kudov1beta1.ExecutionComplete
		UpdateRevision(i, &ps)
	}
	revisions := Revisions(&i.Status)
	if len(revisions) != kudov1beta1.MaxRevisions {
		t.Fatalf("%d revisions kept, want %d", len(revisions), kudov1beta1.MaxRevisions)
	}
	first, last := revisions[0], revisions[len(revisions)-1]
	if first.Number != 3 || last.Number != int64(kudov1beta1.MaxRevisions+2) {
		t.Errorf("revisions %d to %d, want 3 to %d", first.Number, last.Number, kudov1beta1.MaxRevisions+2)
	}
	if last.Parameters["RUN"] != fmt.Sprint(kudov1beta1.MaxRevisions+2) || last.Status != kudov1beta1.ExecutionComplete ||
		last.OperatorVersion != "web-0.1.0" || last.UID != types.UID(fmt.Sprint("uid-", kudov1beta1.MaxRevisions+2)) {
		t.Errorf("last revision = %+v", last)
	}
	i.Spec.Parameters["RUN"] = "changed"
	if r, err := RollbackTarget(i, 0, nil); err != nil || r.Number != last.Number {
		t.Errorf("RollbackTarget = %v, %v; want the last revision, whose parameters differ now", r, err)
	}
}

func TestARunStartingEndsTheRevisionsOfRunsThatHadNotEnded(t *testing.T) {
	tests := []struct {
		name   string
		before kudov1beta1.ExecutionStatus
		want   kudov1beta1.ExecutionStatus
	}{
		{"a run in progress, triggered again with new values, is superseded", inProgress, kudov1beta1.ExecutionSuperseded},
		{"a retried run that has not ended is superseded", pending, kudov1beta1.ExecutionSuperseded},
		{"a completed run keeps its end", complete, complete},
		{"a failed run keeps its end", fatal, fatal},
		{"a cancelled run keeps its end", kudov1beta1.ExecutionCancelled, kudov1beta1.ExecutionCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := instance("update", inProgress, "u1")
			i.Status.Revisions = []kudov1beta1.Revision{
				{Number: 1, Plan: "deploy", UID: "u0", Status: complete},
				{Number: 2, Plan: "update", UID: "u1", Status: tt.before},
			}
			StartPlan(i, ov(), "update", "u2", t0, i.Spec.Parameters)
			got := i.Status.Revisions
			if len(got) != 3 || got[0].Status != complete || got[1].Status != tt.want || got[2].Status != inProgress || got[2].UID != "u2" {
				t.Errorf("revisions = %+v; want 1 COMPLETE, 2 %s, 3 IN_PROGRESS with uid u2", got, tt.want)
			}
		})
	}
}

// TestAReadyMessageOfManyProblemsStaysInItsCondition: 700 missing objects
// once made a 41,298-character message, past the 32,768 a condition holds,
// and the status patch failed as a whole.
func TestAReadyMessageOfManyProblemsStaysInItsCondition(t *testing.T) {
	i := instance("deploy", complete, "u1")
	var problems []Problem
	for n := range 700 {
		problems = append(problems, Problem{Reason: kudov1beta1.MissingReason,
			Message: fmt.Sprintf("Not ready: ConfigMap default/config-of-a-long-name-%04d is missing", n)})
	}
	got := InstanceReadiness(i, nil, problems)
	if len(got.Message) > MaxProblemsMessage+len(" … and 700 more") {
		t.Fatalf("the message is %d bytes", len(got.Message))
	}
	shown := strings.Count(got.Message, "is missing")
	if want := fmt.Sprintf(" … and %d more", 700-shown); !strings.HasSuffix(got.Message, want) {
		t.Errorf("the message ends %q, want %q", got.Message[len(got.Message)-40:], want)
	}
	if !strings.HasPrefix(got.Message, problems[0].Message+", ") || got.Reason != kudov1beta1.MissingReason {
		t.Errorf("the message starts %q (%s)", got.Message[:80], got.Reason)
	}
}

func TestJoinAtMost(t *testing.T) {
	for _, tc := range []struct {
		name     string
		messages []string
		limit    int
		want     string
	}{
		{"all fit", []string{"a", "b", "c"}, 100, "a, b, c"},
		{"the others are counted", []string{"aaaa", "bbbb", "cccc"}, 20, "aaaa … and 2 more"},
		{"one alone, too long, is cut", []string{strings.Repeat("x", 30)}, 20, "xxxxxxxxxx … (cut)"},
		{"a cut never splits a rune", []string{strings.Repeat("é", 15)}, 19, "éééé … (cut)"},
		{"none", nil, 20, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := JoinAtMost(tc.messages, tc.limit); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
