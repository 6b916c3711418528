package action

import (
	"context"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

func TestPlanRequest(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0.1.0"},
		Spec:       kudov1beta1.OperatorVersionSpec{Plans: map[string]kudov1beta1.Plan{"deploy": {}, "backup": {}}},
	}
	// web's backup runs as requested; its deploy failed before.
	web := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name},
			PlanExecution: kudov1beta1.PlanExecution{PlanName: "backup", UID: "u2"}},
		Status: kudov1beta1.InstanceStatus{
			ActivePlan: &kudov1beta1.ActivePlanStatus{Name: "backup", Status: kudov1beta1.ExecutionInProgress},
			PlanStatus: map[string]kudov1beta1.PlanStatus{
				"deploy": {Name: "deploy", Status: kudov1beta1.ExecutionFatalError, UID: "u1"},
				"backup": {Name: "backup", Status: kudov1beta1.ExecutionInProgress, UID: "u2"},
			}},
	}
	failed := func(i *kudov1beta1.Instance) {
		i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionFatalError}
		i.Status.PlanStatus["backup"] = kudov1beta1.PlanStatus{Name: "backup", Status: kudov1beta1.ExecutionComplete, UID: "u2"}
	}
	tests := []struct {
		name     string
		instance func(*kudov1beta1.Instance)
		request  func(*PlanRequest, context.Context, Config) (*Requested, error)
		plan     string
		// want is the request written; wantErr the error, after which
		// spec.planExecution is what it was.
		want    kudov1beta1.PlanExecution
		wantErr string
	}{
		{name: "trigger: a plan of the OperatorVersion", request: (*PlanRequest).Trigger, plan: "deploy",
			want: kudov1beta1.PlanExecution{PlanName: "deploy"}},
		{name: "trigger: a plan the OperatorVersion lacks", request: (*PlanRequest).Trigger, plan: "restore",
			wantErr: `plan "restore" is not defined by OperatorVersion web-0.1.0`},
		{name: "cancel: the running plan", request: (*PlanRequest).Cancel,
			want: kudov1beta1.PlanExecution{PlanName: "backup", UID: "u2", Status: kudov1beta1.ExecutionCancelled}},
		{name: "cancel: nothing runs", request: (*PlanRequest).Cancel,
			instance: func(i *kudov1beta1.Instance) { i.Spec.PlanExecution = kudov1beta1.PlanExecution{} },
			wantErr:  "no plan of Instance web is running"},
		{name: "retry: a plan that runs", request: (*PlanRequest).Retry,
			wantErr: "only a failed plan can be retried, and plan backup is IN_PROGRESS"},
		{name: "retry: the failed plan, from its failed steps", request: (*PlanRequest).Retry, instance: failed,
			want: kudov1beta1.PlanExecution{PlanName: "deploy", UID: "u1", Status: kudov1beta1.ExecutionRetry}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := web.DeepCopy()
			if tt.instance != nil {
				tt.instance(i)
			}
			before := i.Spec.PlanExecution
			c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(ov.DeepCopy(), i).Build()
			r, err := tt.request(&PlanRequest{Instance: "web", Plan: tt.plan}, context.Background(),
				Config{Client: c, Namespace: "ns", Out: io.Discard, ErrOut: io.Discard})
			got := &kudov1beta1.Instance{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, got); err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got.Spec.PlanExecution != before {
					t.Errorf("a refused request wrote %+v", got.Spec.PlanExecution)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.UID == "" {
				// trigger's uid is fresh: only its presence is known.
				if got.Spec.PlanExecution.UID == "" || got.Spec.PlanExecution.UID == before.UID {
					t.Errorf("uid %q is not fresh", got.Spec.PlanExecution.UID)
				}
				tt.want.UID = got.Spec.PlanExecution.UID
			}
			if got.Spec.PlanExecution != tt.want || r.Plan != tt.want.PlanName {
				t.Errorf("planExecution = %+v (plan %s), want %+v", got.Spec.PlanExecution, r.Plan, tt.want)
			}
		})
	}
}
