package controllers

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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

// delays records what a handler enqueues, and when.
type delays struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	now   []reconcile.Request
	later map[reconcile.Request][]time.Duration
}

func (q *delays) Add(r reconcile.Request) { q.now = append(q.now, r) }

func (q *delays) AddAfter(r reconcile.Request, d time.Duration) { q.later[r] = append(q.later[r], d) }

func TestABurstOfInstancesSummedUpOnceAfterTheDelay(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kafka-1.0.0"},
		Spec:       kudov1beta1.OperatorVersionSpec{Operator: corev1.ObjectReference{Name: "kafka"}},
	}
	r := &OperatorReconciler{Client: fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(ov).Build()}
	h := r.summaryOfInstances()
	q := &delays{later: map[reconcile.Request][]time.Duration{}}
	for _, name := range []string{"a", "b", "c"} {
		i := &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}},
		}
		h.Create(context.Background(), event.CreateEvent{Object: i}, q)
	}
	h.Delete(context.Background(), event.DeleteEvent{Object: &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone"},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "not-installed"}},
	}}, q)

	if len(q.now) != 0 {
		t.Errorf("enqueued at once: %v", q.now)
	}
	operator := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "kafka"}}
	want := map[reconcile.Request][]time.Duration{operator: {instanceSummaryDelay, instanceSummaryDelay, instanceSummaryDelay}}
	if !reflect.DeepEqual(q.later, want) {
		t.Errorf("enqueued later = %v, want %v (the queue keeps one entry of the Operator)", q.later, want)
	}
}
