package explain

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

func TestWrite(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 5, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-5 * time.Minute))
	since := metav1.NewTime(now.Add(-4 * time.Minute))
	running := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "shop"},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "widget-1.0.0-0.1.0"}},
		Status: kudov1beta1.InstanceStatus{
			Conditions: []metav1.Condition{
				{Type: kudov1beta1.ReadyCondition, Status: metav1.ConditionUnknown, Reason: kudov1beta1.PlanInProgressReason, LastTransitionTime: started,
					Message: `Plan deploy is IN_PROGRESS: step main/widget: waiting for Widget w: healthChecks[0].current: status.phase == 'Ready' ` +
						`does not hold yet (status.phase="Pending")`},
				{Type: kudov1beta1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: kudov1beta1.PlanInProgressReason, LastTransitionTime: started},
			},
			ActivePlan: &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionInProgress},
			PlanStatus: map[string]kudov1beta1.PlanStatus{"deploy": {Name: "deploy", Status: kudov1beta1.ExecutionInProgress, StartedAt: &started,
				Phases: []kudov1beta1.PhaseStatus{{Name: "main", Status: kudov1beta1.ExecutionInProgress, Steps: []kudov1beta1.StepStatus{
					{Name: "crd", Status: kudov1beta1.ExecutionComplete, StartedAt: &started},
					{Name: "widget", Status: kudov1beta1.ExecutionInProgress, StartedAt: &since,
						Message: `waiting for Widget w: healthChecks[0].current: status.phase == 'Ready' does not hold yet (status.phase="Pending")`,
						WaitingOn: []kudov1beta1.ObjectHealth{{
							APIVersion: "example.kudo.dev/v1", Kind: "Widget", Namespace: "shop", Name: "w", Status: "InProgress",
							Rule:     "healthChecks[0].current: status.phase == 'Ready'",
							Observed: []kudov1beta1.ObservedField{{Field: "status.phase", Value: `"Pending"`}},
							Message:  `waiting for Widget w: healthChecks[0].current: status.phase == 'Ready' does not hold yet (status.phase="Pending")`,
							Since:    &since,
						}},
						MoreWaitingOn: 2},
				}}}}},
		},
	}
	failed := running.DeepCopy()
	failed.Status.ActivePlan.Status = kudov1beta1.ExecutionFatalError
	deploy := failed.Status.PlanStatus["deploy"]
	deploy.Status, deploy.Phases[0].Status = kudov1beta1.ExecutionFatalError, kudov1beta1.ExecutionFatalError
	deploy.Message = `phase main failed: step widget failed: task widget: Widget w has failed: healthChecks[0].failed: status.phase == 'Failed' holds ` +
		`(status.phase="Failed")`
	deploy.Phases[0].Steps[1] = kudov1beta1.StepStatus{Name: "widget", Status: kudov1beta1.ExecutionFatalError, StartedAt: &since,
		Message: `task widget: Widget w has failed: healthChecks[0].failed: status.phase == 'Failed' holds (status.phase="Failed")`}
	failed.Status.PlanStatus["deploy"] = deploy
	failed.Status.Conditions = []metav1.Condition{{Type: kudov1beta1.ReadyCondition, Status: metav1.ConditionUnknown,
		Reason: kudov1beta1.PlanFailedReason, LastTransitionTime: since, Message: "Plan deploy failed: " + deploy.Message}}
	tests := map[string]*kudov1beta1.Instance{
		"running": running,
		"failed":  failed,
		"new":     {ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "shop"}},
	}
	for name, i := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Write(&out, i, now); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".golden")
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
