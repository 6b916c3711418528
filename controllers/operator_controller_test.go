package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestVersionChanged(t *testing.T) {
	instance := func(generation int64, version string, pe kudov1beta1.PlanExecution) *kudov1beta1.Instance {
		return &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Name: "kafka", Generation: generation},
			Spec: kudov1beta1.InstanceSpec{
				OperatorVersion: corev1.ObjectReference{Name: version}, PlanExecution: pe,
			},
		}
	}
	deploy := kudov1beta1.PlanExecution{PlanName: "deploy", UID: "1"}
	tests := []struct {
		name     string
		old, cur *kudov1beta1.Instance
		want     bool
	}{
		{"an upgrade", instance(2, "kafka-1.0.0", kudov1beta1.PlanExecution{}), instance(3, "kafka-1.1.0", deploy), true},
		{"a plan's end", instance(1, "kafka-1.0.0", deploy), instance(2, "kafka-1.0.0", kudov1beta1.PlanExecution{}), false},
		{"a status write", instance(2, "kafka-1.0.0", deploy), instance(2, "kafka-1.0.0", deploy), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionChanged.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.cur}); got != tt.want {
				t.Errorf("versionChanged = %v, want %v", got, tt.want)
			}
		})
	}
}
