package plan

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

func fixture() client.Client {
	t1 := metav1.NewTime(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	t2 := metav1.NewTime(time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC))
	ov := &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0.1.0"},
		Spec:       kudov1beta1.OperatorVersionSpec{Plans: map[string]kudov1beta1.Plan{"deploy": {}, "backup": {}}},
	}
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "web-0.1.0"}},
		Status: kudov1beta1.InstanceStatus{PlanStatus: map[string]kudov1beta1.PlanStatus{
			"deploy": {Name: "deploy", Status: kudov1beta1.ExecutionComplete, UID: "u1", LastUpdatedTimestamp: &t1},
			"backup": {Name: "backup", Status: kudov1beta1.ExecutionComplete, UID: "u2", LastUpdatedTimestamp: &t2},
		}},
	}
	return fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(ov, i).Build()
}

func TestHistoryTriggerCancel(t *testing.T) {
	ctx := context.Background()
	c := fixture()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()

	if err := History(ctx, c, "ns", streams, &Options{Instance: "web"}); err != nil {
		t.Fatal(err)
	}
	// KUDO's tree, each plan's uid after it, and its empty line.
	want := ".\n├── backup (last finished run at 2026-11-21T11:00:00 (COMPLETE)) uid u2\n" +
		"└── deploy (last finished run at 2026-11-21T10:00:00 (COMPLETE)) uid u1\n\n"
	if out.String() != want {
		t.Errorf("history:\n%s\nwant:\n%s", out, want)
	}

	if err := Trigger(ctx, c, "ns", streams, &Options{Instance: "web", Name: "restore"}); err == nil ||
		err.Error() != `plan "restore" is not defined by OperatorVersion web-0.1.0` {
		t.Errorf("triggering an unknown plan: %v", err)
	}
	if err := Cancel(ctx, c, "ns", streams, &Options{Instance: "web"}); err == nil || err.Error() != "no plan of Instance web is running" {
		t.Errorf("cancelling with nothing running: %v", err)
	}
	out.Reset()
	if err := Trigger(ctx, c, "ns", streams, &Options{Instance: "web", Name: "backup"}); err != nil {
		t.Fatal(err)
	}
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, i); err != nil {
		t.Fatal(err)
	}
	if i.Spec.PlanExecution.PlanName != "backup" || i.Spec.PlanExecution.UID == "" || i.Spec.PlanExecution.UID == "u2" {
		t.Errorf("planExecution = %+v, want backup with a fresh uid", i.Spec.PlanExecution)
	}
	if err := Cancel(ctx, c, "ns", streams, &Options{Instance: "web"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, i); err != nil {
		t.Fatal(err)
	}
	if i.Spec.PlanExecution.Status != kudov1beta1.ExecutionCancelled {
		t.Errorf("cancel did not ask for it: %+v", i.Spec.PlanExecution)
	}
	if !strings.Contains(out.String(), "Triggered plan backup for Instance web\nCancelled plan backup of Instance web\n") {
		t.Errorf("output %q", out)
	}
	if err := Status(ctx, c, "ns", streams, &Options{Instance: "ghost"}); err == nil ||
		err.Error() != "Instance ghost not found in namespace ns: see kubectl kudo get instances -n ns" {
		t.Errorf("status of a missing Instance: %v", err)
	}
}

func TestRetry(t *testing.T) {
	ctx := context.Background()
	c := fixture()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	i := &kudov1beta1.Instance{}
	key := client.ObjectKey{Namespace: "ns", Name: "web"}
	if err := c.Get(ctx, key, i); err != nil {
		t.Fatal(err)
	}
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: "backup", Status: kudov1beta1.ExecutionComplete}
	if err := c.Update(ctx, i); err != nil {
		t.Fatal(err)
	}
	if err := Retry(ctx, c, "ns", streams, &Options{Instance: "web"}); err == nil ||
		err.Error() != "only a failed plan can be retried, and plan backup is COMPLETE" {
		t.Errorf("retrying a completed plan: %v", err)
	}

	i.Status.ActivePlan.Status = kudov1beta1.ExecutionFatalError
	i.Status.PlanStatus["backup"] = kudov1beta1.PlanStatus{Name: "backup", Status: kudov1beta1.ExecutionFatalError, UID: "u2"}
	if err := c.Update(ctx, i); err != nil {
		t.Fatal(err)
	}
	if err := Retry(ctx, c, "ns", streams, &Options{Instance: "web"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key, i); err != nil {
		t.Fatal(err)
	}
	want := kudov1beta1.PlanExecution{PlanName: "backup", UID: "u2", Status: kudov1beta1.ExecutionRetry}
	if i.Spec.PlanExecution != want {
		t.Errorf("planExecution = %+v, want %+v", i.Spec.PlanExecution, want)
	}
	if out.String() != "Retrying plan backup of Instance web from its failed steps\n" {
		t.Errorf("output %q", out)
	}
}
