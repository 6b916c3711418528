package action

import (
	"context"
	"io"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/trust"
)

func TestAWaitEndsWhenTheManagerRunsNoPlanOfTheInstance(t *testing.T) {
	instance := func(observed int64, status metav1.ConditionStatus, reason string) *kudov1beta1.Instance {
		i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Name: "app", Generation: 2}}
		i.Status.ObservedGeneration = observed
		i.Status.Conditions = []metav1.Condition{{Type: kudov1beta1.ReadyCondition, Status: status, Reason: reason, Message: "why"}}
		return i
	}
	for _, tc := range []struct {
		name     string
		instance *kudov1beta1.Instance
		stops    bool
	}{
		{"a TrustPolicy refuses its package", instance(2, metav1.ConditionFalse, trust.UnsignedReason), true},
		{"its OperatorVersion cannot run", instance(2, metav1.ConditionFalse, kudov1beta1.InvalidReason), true},
		{"the verdict is of the spec before", instance(1, metav1.ConditionFalse, trust.UnsignedReason), false},
		{"its package is not judged yet", instance(2, metav1.ConditionUnknown, trust.UnsignedReason), false},
		{"its OperatorVersion is not in the cache yet", instance(2, metav1.ConditionFalse, kudov1beta1.OperatorVersionNotFoundReason), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, stops := CannotRun(tc.instance)
			if stops != tc.stops || (stops && why != "why") {
				t.Errorf("CannotRun = %q, %t, want stops %t", why, stops, tc.stops)
			}
		})
	}

	refused := instance(2, metav1.ConditionFalse, trust.UnsignedReason)
	err := WaitFor(context.Background(), nil, io.Discard, Waiting{Timeout: time.Hour, Poll: time.Millisecond}, refused, nil, WriteProgress)
	if err == nil || err.Error() != "the manager runs no plan of Instance app: why" {
		t.Errorf("WaitFor = %v, want it ended with the manager's reason", err)
	}
}
