package plan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestWriteStatus(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Name: "zookeeper-3.6.2-0.3.3"}, Spec: kudov1beta1.OperatorVersionSpec{
		Plans: map[string]kudov1beta1.Plan{
			"deploy": {Strategy: kudov1beta1.Serial, Phases: []kudov1beta1.Phase{
				{Name: "zookeeper", Strategy: kudov1beta1.Parallel, Steps: []kudov1beta1.Step{{Name: "deploy"}}},
				{Name: "validation", Steps: []kudov1beta1.Step{{Name: "validation"}, {Name: "cleanup"}}},
			}},
			"backup": {Phases: []kudov1beta1.Phase{{Name: "backup", Steps: []kudov1beta1.Step{{Name: "dump"}}}}},
		},
	}}
	updated := metav1.NewTime(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	tests := map[string]*kudov1beta1.Instance{
		"complete": {
			ObjectMeta: metav1.ObjectMeta{Name: "zk", Namespace: "default"},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "zookeeper-3.6.2-0.3.3"}},
			Status: kudov1beta1.InstanceStatus{
				ActivePlan: &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionComplete},
				PlanStatus: map[string]kudov1beta1.PlanStatus{"deploy": {Name: "deploy", Status: kudov1beta1.ExecutionComplete, LastUpdatedTimestamp: &updated,
					Phases: []kudov1beta1.PhaseStatus{
						{Name: "zookeeper", Status: kudov1beta1.ExecutionComplete, Steps: []kudov1beta1.StepStatus{{Name: "deploy", Status: kudov1beta1.ExecutionComplete}}},
						{Name: "validation", Status: kudov1beta1.ExecutionComplete, Steps: []kudov1beta1.StepStatus{
							{Name: "validation", Status: kudov1beta1.ExecutionComplete}, {Name: "cleanup", Status: kudov1beta1.ExecutionComplete}}},
					}}},
			},
		},
		"fatal": {
			ObjectMeta: metav1.ObjectMeta{Name: "zk", Namespace: "prod"},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "zookeeper-3.6.2-0.3.3"}},
			Status: kudov1beta1.InstanceStatus{
				ActivePlan: &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionFatalError},
				PlanStatus: map[string]kudov1beta1.PlanStatus{"deploy": {Name: "deploy", Status: kudov1beta1.ExecutionFatalError, LastUpdatedTimestamp: &updated,
					Message: "phase validation failed: step validation failed: task validation: Job zk-validation failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
					Phases: []kudov1beta1.PhaseStatus{
						{Name: "zookeeper", Status: kudov1beta1.ExecutionComplete, Steps: []kudov1beta1.StepStatus{{Name: "deploy", Status: kudov1beta1.ExecutionComplete}}},
						{Name: "validation", Status: kudov1beta1.ExecutionFatalError, Steps: []kudov1beta1.StepStatus{
							{Name: "validation", Status: kudov1beta1.ExecutionFatalError,
								Message: "task validation: Job zk-validation failed: BackoffLimitExceeded: Job has reached the specified backoff limit"},
							{Name: "cleanup", Status: kudov1beta1.ExecutionPending}}},
					}}},
			},
		},
	}
	// A completed Instance whose object went, and whose plan pruned two.
	drifted := tests["complete"].DeepCopy()
	deploy := drifted.Status.PlanStatus["deploy"]
	deploy.Pruned = []kudov1beta1.ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "zk-old"},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "zk-reader"}}
	drifted.Status.PlanStatus["deploy"] = deploy
	drifted.Status.Conditions = []metav1.Condition{{Type: kudov1beta1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "Missing",
		Message: "StatefulSet default/zk is missing"}}
	tests["drifted"] = drifted
	// A running plan whose step waits on a Widget a rule judges, a
	// Deployment kstatus judges, and one more object.
	waiting := tests["complete"].DeepCopy()
	deploy = waiting.Status.PlanStatus["deploy"]
	waiting.Status.ActivePlan.Status, deploy.Status = kudov1beta1.ExecutionInProgress, kudov1beta1.ExecutionInProgress
	deploy.Phases[0].Status, deploy.Phases[1].Status = kudov1beta1.ExecutionInProgress, kudov1beta1.ExecutionPending
	deploy.Phases[1].Steps[0].Status, deploy.Phases[1].Steps[1].Status = kudov1beta1.ExecutionPending, kudov1beta1.ExecutionPending
	since := metav1.NewTime(updated.Add(-time.Minute))
	deploy.Phases[0].Steps[0] = kudov1beta1.StepStatus{Name: "deploy", Status: kudov1beta1.ExecutionInProgress,
		Message: `waiting for Widget zk: healthChecks[0].current: status.phase == 'Ready' does not hold yet (status.phase="Pending")`,
		WaitingOn: []kudov1beta1.ObjectHealth{
			{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "default", Name: "zk", Status: "InProgress",
				Rule: "healthChecks[0].current: status.phase == 'Ready'", Observed: []kudov1beta1.ObservedField{{Field: "status.phase", Value: `"Pending"`}},
				Since: &since},
			{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "zk-web", Status: "InProgress", Rule: "kstatus",
				Message: "waiting for Deployment zk-web: Available: 0/1", Since: &updated},
		},
		MoreWaitingOn: 1}
	waiting.Status.PlanStatus["deploy"] = deploy
	tests["waiting"] = waiting
	// An Instance acting on another cluster, which does not answer.
	remote := tests["complete"].DeepCopy()
	remote.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "prod-kubeconfig"}}
	remote.Status.Conditions = []metav1.Condition{{Type: kudov1beta1.ReadyCondition, Status: metav1.ConditionFalse,
		Reason: kudov1beta1.ClusterUnreachableReason, Message: "cluster https://10.0.0.5:6443 (Secret default/prod-kubeconfig key value) " +
			"is unreachable: dial tcp 10.0.0.5:6443: connect: connection refused"}}
	tests["remote"] = remote
	for name, i := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteStatus(&out, i, ov); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "status-"+name+".golden")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("got\n%s\nwant\n%s", out.String(), want)
			}
		})
	}
}
