package dashboard

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func operatorVersion() *kudov1beta1.OperatorVersion {
	return &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "zk-0.1.0"},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator: corev1.ObjectReference{Name: "zk"},
			Parameters: []kudov1beta1.Parameter{
				{Name: "REPLICAS", Default: ptr.To("3"), Trigger: "update", Description: "how many"},
				{Name: "PASSWORD", Sensitive: ptr.To(true)},
				{Name: "TOKEN", Sensitive: ptr.To(true), Default: ptr.To("t0k3n")},
				{Name: "CERT"},
			},
			Plans: map[string]kudov1beta1.Plan{
				"deploy": {Phases: []kudov1beta1.Phase{{Name: "main", Strategy: kudov1beta1.Serial, Steps: []kudov1beta1.Step{
					{Name: "config", Tasks: []string{"config"}}, {Name: "app", Tasks: []string{"app", "service"}},
				}}}},
				"backup": {Phases: []kudov1beta1.Phase{{Name: "dump", Steps: []kudov1beta1.Step{{Name: "dump", Tasks: []string{"dump"}}}}}},
				"update": {Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{{Name: "app", Tasks: []string{"app"}}}}}},
			},
		},
	}
}

func runningInstance() *kudov1beta1.Instance {
	i := instance("a", "zk", kudov1beta1.ExecutionInProgress, metav1.ConditionFalse, kudov1beta1.PlanInProgressReason)
	i.Spec.Parameters = map[string]string{"REPLICAS": "5", "PASSWORD": "hunter2"}
	i.Spec.SecretParameters = map[string]kudov1beta1.SecretKeyReference{"CERT": {Name: "zk-tls", Key: "tls.crt"}}
	i.Status.PlanStatus["update"] = kudov1beta1.PlanStatus{Name: "update", Status: kudov1beta1.ExecutionComplete, LastUpdatedTimestamp: at(time.Hour)}
	i.Status.PlanStatus["deploy"] = kudov1beta1.PlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionInProgress, StartedAt: at(90 * time.Second),
		Phases: []kudov1beta1.PhaseStatus{{Name: "main", Status: kudov1beta1.ExecutionInProgress, Steps: []kudov1beta1.StepStatus{
			{Name: "config", Status: kudov1beta1.ExecutionComplete, StartedAt: at(90 * time.Second)},
			{Name: "app", Status: kudov1beta1.ExecutionInProgress, StartedAt: at(80 * time.Second), Attempts: 2,
				WaitingOn: []kudov1beta1.ObjectHealth{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "a", Name: "zk", Status: "InProgress",
					Rule: "ready", Message: "1 of 5 up", Since: at(30 * time.Second),
					Observed: []kudov1beta1.ObservedField{{Field: "status.readyReplicas", Value: "1"}}}},
				MoreWaitingOn: 2},
		}}}}
	i.Status.Inventory = []kudov1beta1.TaskInventory{
		{Task: "config", Objects: []kudov1beta1.InventoryObject{
			{ObjectRef: kudov1beta1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "zk"}},
			{ObjectRef: kudov1beta1.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "a", Name: "zk"}}}},
		{Task: "app", Objects: []kudov1beta1.InventoryObject{
			{ObjectRef: kudov1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "a", Name: "zk"}, Generation: 2}}},
	}
	i.Status.Revisions = []kudov1beta1.Revision{
		{Number: 1, Plan: "deploy", Status: kudov1beta1.ExecutionComplete, OperatorVersion: "zk-0.1.0"},
		{Number: 2, Plan: "deploy", Status: kudov1beta1.ExecutionInProgress, OperatorVersion: "zk-0.1.0", Parameters: map[string]string{"REPLICAS": "5"}},
	}
	return &i
}

func TestThePlanTreeShowsTheRunningPlanFirstWithWhatItWaitsOn(t *testing.T) {
	p := InstanceOf("a", "zk", runningInstance(), operatorVersion(), nil, nil, now, "")
	var order []string
	for _, plan := range p.Plans {
		order = append(order, fmt.Sprintf("%s %s", plan.Name, plan.Status))
	}
	if fmt.Sprint(order) != "[deploy IN_PROGRESS update COMPLETE backup NEVER_RUN]" {
		t.Errorf("plans = %v", order)
	}
	deploy := p.Plans[0]
	if !deploy.Active || deploy.Duration != "1m30s" {
		t.Errorf("deploy = %+v", deploy)
	}
	config, app := deploy.Phases[0].Steps[0], deploy.Phases[0].Steps[1]
	if config.Status != kudov1beta1.ExecutionComplete || config.Duration != "10s" {
		t.Errorf("config step = %+v, want COMPLETE in the 10s before app started", config)
	}
	if app.Duration != "1m20s" || app.Attempts != 2 || joinTasks(app.Tasks) != "app, service" || app.MoreWaiting != 2 {
		t.Errorf("app step = %+v", app)
	}
	want := Waiting{Object: "Deployment a/zk", Status: "InProgress", Rule: "ready", Message: "1 of 5 up", Since: "30s",
		Observed: []string{"status.readyReplicas = 1"}}
	if len(app.Waiting) != 1 || fmt.Sprint(app.Waiting[0]) != fmt.Sprint(want) {
		t.Errorf("waiting = %+v, want %+v", app.Waiting, want)
	}
	if !p.Actions.Running || p.Actions.Failed || fmt.Sprint(p.Actions.Plans) != "[backup deploy update]" {
		t.Errorf("actions = %+v", p.Actions)
	}
}

func TestParametersAreMaskedWhenSensitive(t *testing.T) {
	p := InstanceOf("a", "zk", runningInstance(), operatorVersion(), nil, nil, now, "")
	got := map[string]ParameterRow{}
	for _, row := range p.Parameters {
		got[row.Name] = row
	}
	for name, want := range map[string]ParameterRow{
		"REPLICAS": {Name: "REPLICAS", Value: "5", Trigger: "update", Description: "how many"},
		"PASSWORD": {Name: "PASSWORD", Value: Masked, Masked: true},
		"TOKEN":    {Name: "TOKEN", Value: Masked, Masked: true, Default: true},
		"CERT":     {Name: "CERT", Value: "@secret:zk-tls/tls.crt"},
	} {
		if got[name] != want {
			t.Errorf("%s = %+v, want %+v", name, got[name], want)
		}
	}
}

func TestObjectsSayHealthAndDrift(t *testing.T) {
	deployment := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "zk", "namespace": "a", "generation": int64(3)},
		"spec":     map[string]any{"replicas": int64(1)},
		"status": map[string]any{"observedGeneration": int64(3), "replicas": int64(1), "readyReplicas": int64(1),
			"availableReplicas": int64(1), "updatedReplicas": int64(1),
			"conditions": []any{map[string]any{"type": "Available", "status": "True"}}}}}
	configMap := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "zk", "namespace": "a"}}}
	i := runningInstance()
	live := []Live{
		{Ref: i.Status.Inventory[0].Objects[0].ObjectRef, Object: configMap},
		{Ref: i.Status.Inventory[0].Objects[1].ObjectRef, Err: `secrets "zk" is forbidden`},
		{Ref: i.Status.Inventory[1].Objects[0].ObjectRef, Object: deployment},
	}
	p := InstanceOf("a", "zk", i, operatorVersion(), live, nil, now, "")
	want := []ObjectRow{
		{Kind: "ConfigMap", Namespace: "a", Name: "zk", Task: "config", Health: "Current"},
		{Kind: "Secret", Namespace: "a", Name: "zk", Task: "config", Health: "Unknown", Message: `secrets "zk" is forbidden`},
		{Kind: "Deployment", Namespace: "a", Name: "zk", Task: "app", Health: "Current",
			Drift: "changed since applied (generation 3, applied 2)"},
	}
	if fmt.Sprint(p.Objects) != fmt.Sprint(want) {
		t.Errorf("objects:\n%+v\nwant\n%+v", p.Objects, want)
	}
	gone := InstanceOf("a", "zk", i, operatorVersion(), []Live{{Ref: live[0].Ref}}, nil, now, "")
	if len(gone.Objects) != 1 || gone.Objects[0].Health != "Missing" || gone.MoreObjects != 2 {
		t.Errorf("one object read, gone: %+v, %d more", gone.Objects, gone.MoreObjects)
	}
	if refs := Refs(i, 2); len(refs) != 2 {
		t.Errorf("Refs(2) = %v", refs)
	}
}

func TestHistoryIsNewestFirst(t *testing.T) {
	p := InstanceOf("a", "zk", runningInstance(), operatorVersion(), nil, nil, now, "no")
	if len(p.Revisions) != 2 || p.Revisions[0].Number != 2 || !p.Revisions[0].Current || p.Revisions[1].Current ||
		p.Revisions[0].Parameters != "REPLICAS=5" || p.Revisions[1].Parameters != "(defaults)" {
		t.Errorf("revisions = %+v", p.Revisions)
	}
	if p.Actions.Refusal != "no" {
		t.Errorf("refusal = %q", p.Actions.Refusal)
	}
}

func TestAMissingInstanceIsWaitedFor(t *testing.T) {
	p := InstanceOf("a", "zk", nil, nil, nil, nil, now, "")
	if p.Found || p.Plans != nil {
		t.Errorf("page = %+v", p)
	}
}

func TestConditionClass(t *testing.T) {
	for _, tt := range []struct {
		kind   string
		status metav1.ConditionStatus
		want   string
	}{
		{kudov1beta1.ReadyCondition, metav1.ConditionTrue, "good"},
		{kudov1beta1.ReadyCondition, metav1.ConditionFalse, "bad"},
		{kudov1beta1.ReadyCondition, metav1.ConditionUnknown, "neutral"},
		{kudov1beta1.ReconcilingCondition, metav1.ConditionTrue, "running"},
		{kudov1beta1.ReconcilingCondition, metav1.ConditionFalse, "neutral"},
		{kudov1beta1.StalledCondition, metav1.ConditionTrue, "bad"},
		{kudov1beta1.StalledCondition, metav1.ConditionFalse, "neutral"},
		{"Verified", metav1.ConditionFalse, "bad"},
	} {
		if got := ConditionClass(metav1.Condition{Type: tt.kind, Status: tt.status}); got != tt.want {
			t.Errorf("%s=%s: %s, want %s", tt.kind, tt.status, got, tt.want)
		}
	}
}
