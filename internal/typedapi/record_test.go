package typedapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/jsonpath"
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

// TestOnlyAnObjectThatControlsAnInstanceOfItsNameHoldsItsRecord: the record
// of any other Instance, a child of a KudoOperator task among them, stays
// in the Instance.
func TestOnlyAnObjectThatControlsAnInstanceOfItsNameHoldsItsRecord(t *testing.T) {
	ref := func(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "owner-uid", Controller: &controller}
	}
	for _, tc := range []struct {
		name   string
		owners []metav1.OwnerReference
		// want is the holder's kind, namespace, name and uid; "" for none.
		want string
	}{
		{"a typed object of the default group", []metav1.OwnerReference{ref("packages.kudo.dev/v1", "Zookeeper", "zk", true)},
			"packages.kudo.dev/v1, Kind=Zookeeper ns/zk owner-uid"},
		{"a typed object of a package's group, beside other owners", []metav1.OwnerReference{
			ref("v1", "ConfigMap", "zk", false), ref("zk.example.com/v2", "Ensemble", "zk", true)},
			"zk.example.com/v2, Kind=Ensemble ns/zk owner-uid"},
		{"an owner that does not control it", []metav1.OwnerReference{ref("packages.kudo.dev/v1", "Zookeeper", "zk", false)}, ""},
		{"the parent Instance of a KudoOperator task", []metav1.OwnerReference{ref("kudo.dev/v1beta1", "Instance", "zk", true)}, ""},
		{"an apiVersion that does not parse", []metav1.OwnerReference{ref("packages.kudo.dev/v1/x", "Zookeeper", "zk", true)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "zk", OwnerReferences: tc.owners}}
			got := ""
			if holder := typedapi.HolderOf(i); holder != nil {
				got = fmt.Sprintf("%s %s/%s %s", holder.GroupVersionKind(), holder.GetNamespace(), holder.GetName(), holder.GetUID())
			}
			if got != tc.want {
				t.Errorf("HolderOf = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTheStatusOfANewInstanceIsItsUIDAlone: before the engine writes, the
// object's status ties it to its Instance and claims nothing observed.
func TestTheStatusOfANewInstanceIsItsUIDAlone(t *testing.T) {
	i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "zk", UID: "instance-uid", Generation: 1}}
	status, err := typedapi.StatusOf(i, typedObject(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, status); got != `{"instance":{"uid":"instance-uid"}}` {
		t.Errorf("StatusOf = %s, want the Instance's uid alone", got)
	}
}

// TestARecordIsReadOnlyWhenItIsTheInstances: a record of no uid, or
// none, starts the Instance afresh; one that cannot be read is an error;
// the object read is left as it was, for the status patch that follows.
func TestARecordIsReadOnlyWhenItIsTheInstances(t *testing.T) {
	record := map[string]any{"uid": "instance-uid", "observedGeneration": int64(5)}
	ready := map[string]any{"type": "Ready", "status": "True", "reason": "PlanComplete", "message": "",
		"lastTransitionTime": "2026-11-28T08:00:00Z", "observedGeneration": int64(3)}
	for _, tc := range []struct {
		name   string
		status map[string]any
		// want is the status read as JSON, "" for none; wantErr the
		// error's beginning.
		want, wantErr string
	}{
		{name: "none written yet"},
		{name: "a record of no uid", status: map[string]any{"instance": map[string]any{"observedGeneration": int64(5)}}},
		{name: "a record that is no record", status: map[string]any{"instance": "instance-uid"}},
		{name: "the Instance's generations, not the object's", status: map[string]any{"instance": record, "observedGeneration": int64(3),
			"operatorVersion": "zookeeper-0.3.1", "conditions": []any{ready}},
			want: `{"observedGeneration":5,"conditions":[{"type":"Ready","status":"True","observedGeneration":5,` +
				`"lastTransitionTime":"2026-11-28T08:00:00Z","reason":"PlanComplete","message":""}]}`},
		{name: "a uid that is no string", status: map[string]any{"instance": map[string]any{"uid": int64(7)}},
			wantErr: "status.instance of Zookeeper zk: "},
		{name: "plans that are no plans", status: map[string]any{"instance": record, "planStatus": "deploy"},
			wantErr: "the status of Zookeeper zk: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := typedObject(tc.status)
			before := asJSON(t, obj.Object)
			got, ok, err := typedapi.RecordOf(instanceOf(obj, "3"), obj)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || ok {
					t.Errorf("RecordOf = %v, %t; want the error %s…", err, ok, tc.wantErr)
				}
			case err != nil:
				t.Errorf("RecordOf: %v", err)
			case ok != (tc.want != ""):
				t.Errorf("RecordOf read a record: %t, want %t", ok, tc.want != "")
			case ok && asJSON(t, got) != tc.want:
				t.Errorf("RecordOf = %s\nwant %s", asJSON(t, got), tc.want)
			}
			if after := asJSON(t, obj.Object); after != before {
				t.Errorf("RecordOf changed the object:\n%s\nwas %s", after, before)
			}
		})
	}
}

// TestThePrinterColumnsShowWhatTheStatusRecords: kubectl get prints each
// column from the fields StatusOf writes.
func TestThePrinterColumnsShowWhatTheStatusRecords(t *testing.T) {
	names, err := typedapi.NamesOf("zookeeper", nil)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := typedapi.CRD(names, "zookeeper", nil)
	if err != nil {
		t.Fatal(err)
	}
	obj := typedObject(nil)
	obj.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)))
	status, err := typedapi.StatusOf(instanceOf(obj, "3"), obj)
	if err != nil {
		t.Fatal(err)
	}
	obj.Object["status"] = status
	want := map[string]string{
		"Operator Version": "zookeeper-3.4.14-0.3.1", "Plan": "deploy", "Plan Status": "COMPLETE", "Ready": "True",
		"Age": "2026-11-28T07:00:00Z",
	}
	columns := crd.Spec.Versions[0].AdditionalPrinterColumns
	if len(columns) != len(want) {
		t.Errorf("%d printer columns, want %d", len(columns), len(want))
	}
	for _, column := range columns {
		jp := jsonpath.New(column.Name)
		if err := jp.Parse("{" + column.JSONPath + "}"); err != nil {
			t.Fatalf("column %s: %v", column.Name, err)
		}
		var out strings.Builder
		if err := jp.Execute(&out, obj.Object); err != nil || out.String() != want[column.Name] {
			t.Errorf("column %s (%s) shows %q, %v; want %q", column.Name, column.JSONPath, out.String(), err, want[column.Name])
		}
	}
}
