package dashboard

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/trust"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func at(ago time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-ago)); return &t }

// instance is an Instance of operator zk whose plan ran with status and
// whose Ready condition is ready (reason), "" for none.
func instance(ns, name string, plan kudov1beta1.ExecutionStatus, ready metav1.ConditionStatus, reason string) kudov1beta1.Instance {
	i := kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{kudov1beta1.OperatorLabel: "zk"}},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "zk-0.1.0"}},
	}
	if plan != "" {
		i.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{"deploy": {Name: "deploy", Status: plan, LastUpdatedTimestamp: at(time.Minute),
			Message: "deploy " + string(plan)}}
		i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: plan}
	}
	if ready != "" {
		i.Status.Conditions = []metav1.Condition{{Type: kudov1beta1.ReadyCondition, Status: ready, Reason: reason, Message: "because " + reason}}
	}
	return i
}

func TestStateOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		i    kudov1beta1.Instance
		want State
	}{
		{"no plan yet", instance("a", "i", "", "", ""), StatePending},
		{"plan running", instance("a", "i", kudov1beta1.ExecutionInProgress, metav1.ConditionFalse, kudov1beta1.PlanInProgressReason), StateRunning},
		{"plan failing, retried", instance("a", "i", kudov1beta1.ExecutionError, metav1.ConditionFalse, kudov1beta1.PlanInProgressReason), StateRunning},
		{"plan failed", instance("a", "i", kudov1beta1.ExecutionFatalError, metav1.ConditionFalse, kudov1beta1.PlanFailedReason), StateFailed},
		{"ready", instance("a", "i", kudov1beta1.ExecutionComplete, metav1.ConditionTrue, kudov1beta1.ResourcesReadyReason), StateReady},
		{"drifted", instance("a", "i", kudov1beta1.ExecutionComplete, metav1.ConditionFalse, kudov1beta1.DriftedReason), StateDrifted},
		{"object gone", instance("a", "i", kudov1beta1.ExecutionComplete, metav1.ConditionFalse, kudov1beta1.MissingReason), StateDrifted},
		{"not ready", instance("a", "i", kudov1beta1.ExecutionComplete, metav1.ConditionFalse, kudov1beta1.ResourceNotReadyReason), StateNotReady},
		{"plan asked for", instance("a", "i", kudov1beta1.ExecutionComplete, metav1.ConditionFalse, kudov1beta1.PlanPendingReason), StatePending},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := StateOf(&tt.i); got != tt.want {
				t.Errorf("StateOf = %s, want %s", got, tt.want)
			}
		})
	}
}

func fleetSnapshot() *Snapshot {
	stuck := instance("b", "stuck", kudov1beta1.ExecutionInProgress, metav1.ConditionFalse, kudov1beta1.PlanInProgressReason)
	stuck.Status.PlanStatus["deploy"] = kudov1beta1.PlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionInProgress, LastUpdatedTimestamp: at(time.Second),
		Phases: []kudov1beta1.PhaseStatus{{Name: "main", Status: kudov1beta1.ExecutionInProgress, Steps: []kudov1beta1.StepStatus{{
			Name: "app", Status: kudov1beta1.ExecutionInProgress,
			WaitingOn: []kudov1beta1.ObjectHealth{{Kind: "Deployment", Name: "web", Message: "0 of 3 replicas available", Since: at(10 * time.Minute)}},
		}}}}}
	waiting := instance("b", "waiting", kudov1beta1.ExecutionInProgress, metav1.ConditionFalse, kudov1beta1.PlanInProgressReason)
	waiting.Status.PlanStatus["deploy"] = kudov1beta1.PlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionInProgress, LastUpdatedTimestamp: at(time.Second),
		Phases: []kudov1beta1.PhaseStatus{{Name: "main", Steps: []kudov1beta1.StepStatus{{Name: "app", Status: kudov1beta1.ExecutionInProgress,
			WaitingOn: []kudov1beta1.ObjectHealth{{Kind: "Deployment", Name: "web", Since: at(time.Minute)}}}}}}}
	unverified := kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "zk-0.2.0"},
		Spec:   kudov1beta1.OperatorVersionSpec{Operator: corev1.ObjectReference{Name: "zk"}, Version: "0.2.0"},
		Status: kudov1beta1.OperatorVersionStatus{Conditions: []metav1.Condition{{Type: trust.VerifiedCondition, Status: metav1.ConditionFalse, Reason: trust.UnsignedReason, Message: "no signature"}}}}
	stalled := kudov1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "zk-next"},
		Spec:   kudov1alpha1.RolloutSpec{Operator: "zk", OperatorVersion: "zk-0.2.0"},
		Status: kudov1alpha1.RolloutStatus{Message: "canary a/ok failed", Waves: make([]kudov1alpha1.WaveStatus, 3), Total: 4, Conditions: []metav1.Condition{{Type: kudov1beta1.StalledCondition, Status: metav1.ConditionTrue}}}}
	return &Snapshot{
		Now: now,
		Instances: []kudov1beta1.Instance{
			instance("a", "ok", kudov1beta1.ExecutionComplete, metav1.ConditionTrue, kudov1beta1.ResourcesReadyReason),
			instance("a", "broken", kudov1beta1.ExecutionFatalError, metav1.ConditionFalse, kudov1beta1.PlanFailedReason),
			instance("a", "drifted", kudov1beta1.ExecutionComplete, metav1.ConditionFalse, kudov1beta1.DriftedReason),
			stuck, waiting,
		},
		Operators: []kudov1beta1.Operator{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "zk"}}},
		OperatorVersions: []kudov1beta1.OperatorVersion{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "zk-0.1.0"}, Spec: kudov1beta1.OperatorVersionSpec{Operator: corev1.ObjectReference{Name: "zk"}, Version: "0.1.0"}},
			unverified,
		},
		Rollouts: []kudov1alpha1.Rollout{stalled},
		Events: []corev1.Event{
			{InvolvedObject: corev1.ObjectReference{Kind: "Instance", Namespace: "a", Name: "ok"}, Reason: "PlanStarted", Type: corev1.EventTypeNormal, LastTimestamp: *at(time.Hour)},
			{InvolvedObject: corev1.ObjectReference{Kind: "Instance", Namespace: "a", Name: "broken"}, Reason: "PlanFailed", Type: corev1.EventTypeWarning, LastTimestamp: *at(time.Minute), Message: "boom"},
		},
	}
}

func TestFleetNeedsAttentionSaysWhy(t *testing.T) {
	f := FleetOf(fleetSnapshot(), Filter{})
	got := map[string]string{}
	for _, a := range f.Attention {
		got[a.Kind+" "+a.Namespace+"/"+a.Name] = a.Problem + ": " + a.Reason
	}
	want := map[string]string{
		"Instance a/broken":          "plan deploy failed: deploy FATAL_ERROR",
		"Instance a/drifted":         "drift being corrected: Drifted: because Drifted",
		"Instance b/stuck":           "plan deploy stuck: step main/app waits on Deployment web since 10m: 0 of 3 replicas available",
		"OperatorVersion a/zk-0.2.0": "package not verified: no signature",
		"Rollout a/zk-next":          "rollout stopped: canary a/ok failed",
	}
	if len(got) != len(want) {
		t.Errorf("attention = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attention[%s] = %q, want %q", k, got[k], v)
		}
	}
	if f.Health != NeedsAttention || f.Headline != "1 of 5 Instances Ready · 5 need attention" {
		t.Errorf("banner = %s %q", f.Health, f.Headline)
	}
	counts := map[State]int{}
	for _, c := range f.Counts {
		counts[c.State] = c.N
	}
	if counts[StateReady] != 1 || counts[StateRunning] != 2 || counts[StateFailed] != 1 || counts[StateDrifted] != 1 {
		t.Errorf("counts = %v", counts)
	}
	if len(f.Operators) != 1 || len(f.Operators[0].Versions) != 2 || f.Operators[0].Instances != 3 {
		t.Errorf("operators = %+v", f.Operators)
	}
}

func TestFleetFilter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"all, by namespace then name", Filter{}, []string{"a/broken", "a/drifted", "a/ok", "b/stuck", "b/waiting"}},
		{"needing attention", Filter{State: NeedsAttention}, []string{"a/broken", "a/drifted", "b/stuck"}},
		{"one state", Filter{State: string(StateRunning)}, []string{"b/stuck", "b/waiting"}},
		{"search", Filter{Query: "B/ST"}, []string{"b/stuck"}},
		{"search the OperatorVersion", Filter{Query: "zk-0.1"}, []string{"a/broken", "a/drifted", "a/ok", "b/stuck", "b/waiting"}},
		{"nothing", Filter{Query: "kafka"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := FleetOf(fleetSnapshot(), tt.filter)
			var got []string
			for _, g := range f.Groups {
				for _, row := range g.Instances {
					got = append(got, row.Namespace+"/"+row.Name)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || f.Shown != len(tt.want) || f.Total != 5 {
				t.Errorf("shown %v (%d of %d), want %v", got, f.Shown, f.Total, tt.want)
			}
		})
	}
}

func TestFleetGroupsTheInstancesOfEachClusterApart(t *testing.T) {
	s := fleetSnapshot()
	for _, name := range []string{"prod-db", "prod-cache"} {
		i := instance("a", name, kudov1beta1.ExecutionComplete, metav1.ConditionTrue, kudov1beta1.ResourcesReadyReason)
		i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "prod"}}
		s.Instances = append(s.Instances, i)
	}
	var got []string
	for _, g := range FleetOf(s, Filter{}).Groups {
		got = append(got, fmt.Sprintf("%s %s %d", g.Cluster, g.Namespace, len(g.Instances)))
	}
	want := []string{" a 3", " b 2", "prod:value a 2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("groups %q, want %q (the manager's own cluster first)", got, want)
	}
	f := FleetOf(s, Filter{Query: "prod:value"})
	if f.Shown != 2 || len(f.Groups) != 1 || f.Groups[0].Instances[0].Name != "prod-cache" {
		t.Errorf("searching the cluster shows %d in %+v", f.Shown, f.Groups)
	}
}

func TestActivityIsNewestFirstAndFiltered(t *testing.T) {
	s := fleetSnapshot()
	all := FleetOf(s, Filter{}).Activity
	if len(all) != 2 || all[0].Reason != "PlanFailed" || all[0].Ago != "60s" || all[1].Ago != "60m" {
		t.Errorf("activity = %+v", all)
	}
	warnings := FleetOf(s, Filter{EventType: corev1.EventTypeWarning}).Activity
	if len(warnings) != 1 || warnings[0].Link != "/instances/a/broken" {
		t.Errorf("warnings = %+v", warnings)
	}
	if got := activity(s.Events, now, Filter{}, 1); len(got) != 1 || got[0].Reason != "PlanFailed" {
		t.Errorf("at most one: %+v", got)
	}
}
