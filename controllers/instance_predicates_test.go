package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// TestWhichChangesOfAnInstanceWakeItsReconcile: its own status writes do
// not wake it, but a user's removal of the pin (accepting an OperatorVersion
// made again) does; the manager's own clearing of spec.planExecution does
// not, a user's request does.
func TestWhichChangesOfAnInstanceWakeItsReconcile(t *testing.T) {
	pinned := func(digest string) *kudov1beta1.Instance {
		i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Name: "demo", ResourceVersion: "1"}}
		i.Status.AppliedOperatorVersionDigest = digest
		return i
	}
	asked := func(plan string) *kudov1beta1.Instance {
		i := pinned("sha256:1")
		i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: plan}
		if plan != "" {
			i.Spec.PlanExecution.UID = "run-1"
		}
		return i
	}
	tests := []struct {
		name          string
		old, cur      *kudov1beta1.Instance
		wantPin       bool
		wantPlanCheck bool
	}{
		{"the pin removed", pinned("sha256:1"), pinned(""), true, true},
		{"the pin written by a plan", pinned(""), pinned("sha256:1"), false, true},
		{"the pin moved by an upgrade", pinned("sha256:1"), pinned("sha256:2"), false, true},
		{"the manager clearing spec.planExecution", asked("backup"), asked(""), false, false},
		{"a user asking for a plan", asked(""), asked("backup"), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.cur}
			if got := pinRemoved.Update(e); got != tt.wantPin {
				t.Errorf("pinRemoved = %t, want %t", got, tt.wantPin)
			}
			if got := skipPlanExecutionCleared.Update(e); got != tt.wantPlanCheck {
				t.Errorf("skipPlanExecutionCleared lets it through = %t, want %t", got, tt.wantPlanCheck)
			}
		})
	}
}
