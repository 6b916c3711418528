package typedapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

var zookeeperKind = schema.GroupVersionKind{Group: "packages.kudo.dev", Version: "v1", Kind: "Zookeeper"}

// typedObject is a Zookeeper of generation 3 whose status is status.
func typedObject(status map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetGroupVersionKind(zookeeperKind)
	obj.SetNamespace("ns")
	obj.SetName("zk")
	obj.SetUID("object-uid")
	obj.SetGeneration(3)
	if status != nil {
		obj.Object["status"] = status
	}
	return obj
}

// instanceOf is the Instance of generation 7 that runs obj, applied from
// the object's generation applied.
func instanceOf(obj *unstructured.Unstructured, applied string) *kudov1beta1.Instance {
	now := metav1.NewTime(time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC))
	return &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{
			Name: "zk", Namespace: "ns", UID: "instance-uid", Generation: 7,
			Annotations:     map[string]string{kudov1beta1.TypedGenerationAnnotation: applied},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(obj, zookeeperKind)},
		},
		Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "zookeeper-3.4.14-0.3.1"}},
		Status: kudov1beta1.InstanceStatus{
			ObservedGeneration: 7, AppliedGeneration: 7, AppliedOperatorVersion: "zookeeper-3.4.14-0.3.1",
			AppliedParameters: map[string]string{"NODE_COUNT": "3"},
			ActivePlan:        &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionComplete},
			PlanStatus: map[string]kudov1beta1.PlanStatus{"deploy": {
				Name: "deploy", Status: kudov1beta1.ExecutionComplete, UID: "run", LastUpdatedTimestamp: &now,
			}},
			Conditions: []metav1.Condition{{Type: kudov1beta1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "PlanComplete",
				ObservedGeneration: 7, LastTransitionTime: now}},
		},
	}
}

func TestTheStatusOfATypedObjectObservesItsGenerationOnceItsInstanceHas(t *testing.T) {
	tests := []struct {
		name     string
		applied  string
		observed int64
		previous map[string]any
		want     int64
	}{
		{name: "applied from this generation and observed", applied: "3", observed: 7, want: 3},
		{name: "applied from an older generation", applied: "2", observed: 7,
			previous: map[string]any{"observedGeneration": int64(2)}, want: 2},
		{name: "its Instance's status behind its spec", applied: "3", observed: 6,
			previous: map[string]any{"observedGeneration": int64(2)}, want: 2},
		{name: "never observed", applied: "2", observed: 7, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := typedObject(tt.previous)
			i := instanceOf(obj, tt.applied)
			i.Status.ObservedGeneration = tt.observed
			status, err := typedapi.StatusOf(i, obj)
			if err != nil {
				t.Fatal(err)
			}
			got, _, _ := unstructured.NestedInt64(status, "observedGeneration")
			ready, _ := status["conditions"].([]any)[0].(map[string]any)
			conditionGot, _, _ := unstructured.NestedInt64(ready, "observedGeneration")
			if got != tt.want || conditionGot != tt.want {
				t.Errorf("observedGeneration %d, Ready's %d; want %d for both", got, conditionGot, tt.want)
			}
			if status[typedapi.StatusOperatorVersionField] != "zookeeper-3.4.14-0.3.1" {
				t.Errorf("operatorVersion %v, want the Instance's", status[typedapi.StatusOperatorVersionField])
			}
		})
	}
}

func TestATypedObjectRecordsTheStatusOfItsInstance(t *testing.T) {
	obj := typedObject(nil)
	i := instanceOf(obj, "3")
	status, err := typedapi.StatusOf(i, obj)
	if err != nil {
		t.Fatal(err)
	}
	obj.Object["status"] = status
	got, ok, err := typedapi.RecordOf(instanceOf(obj, "3"), obj)
	if err != nil || !ok {
		t.Fatalf("RecordOf: %v, %v; want the record", ok, err)
	}
	if diff := cmp.Diff(i.Status, got); diff != "" {
		t.Errorf("the record read back differs (-written +read):\n%s", diff)
	}

	again := instanceOf(obj, "3")
	again.UID = "a-new-instance-of-the-same-name"
	if _, ok, _ := typedapi.RecordOf(again, obj); ok {
		t.Error("an Instance made again under a new uid read the record of the one before")
	}
}

func TestTheRecordOfAnInstanceIsReadFromTheTypedObjectThatControlsIt(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kudov1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	obj := typedObject(nil)
	written := instanceOf(obj, "3")
	status, err := typedapi.StatusOf(written, obj)
	if err != nil {
		t.Fatal(err)
	}
	obj.Object["status"] = status
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(obj).Build()
	served := func(_ context.Context, gvk schema.GroupVersionKind) bool { return gvk == zookeeperKind }

	tests := []struct {
		name       string
		instance   func() *kudov1beta1.Instance
		served     func(context.Context, schema.GroupVersionKind) bool
		wantHolder bool
		wantPlans  int
	}{
		{name: "its typed object's", instance: func() *kudov1beta1.Instance { return emptied(instanceOf(obj, "3")) },
			served: served, wantHolder: true, wantPlans: 1},
		{name: "a kind the manager does not serve", served: func(context.Context, schema.GroupVersionKind) bool { return false },
			instance: func() *kudov1beta1.Instance { return emptied(instanceOf(obj, "3")) }},
		{name: "its own, without a controller", served: served, instance: func() *kudov1beta1.Instance {
			i := emptied(instanceOf(obj, "3"))
			i.OwnerReferences = nil
			return i
		}},
		{name: "its own, controlled by an object of another name", served: served, instance: func() *kudov1beta1.Instance {
			i := emptied(instanceOf(obj, "3"))
			i.Name = "other"
			return i
		}},
		{name: "none, controlled by an object of another uid", served: served, instance: func() *kudov1beta1.Instance {
			i := emptied(instanceOf(obj, "3"))
			i.OwnerReferences[0].UID = types.UID("someone-else")
			return i
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := tt.instance()
			holder, err := typedapi.ReadRecord(context.Background(), c, i, tt.served)
			if err != nil {
				t.Fatal(err)
			}
			if (holder != nil) != tt.wantHolder || len(i.Status.PlanStatus) != tt.wantPlans {
				t.Errorf("holder %v, %d plans; want holder %v, %d plans", holder != nil, len(i.Status.PlanStatus), tt.wantHolder, tt.wantPlans)
			}
		})
	}
}

// emptied is i with the status the API server holds for an Instance whose
// typed object holds its record: none.
func emptied(i *kudov1beta1.Instance) *kudov1beta1.Instance {
	i.Status = kudov1beta1.InstanceStatus{}
	return i
}
