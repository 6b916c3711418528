package controllers

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/healthrule"
	"github.com/kudo-ng/kudo/internal/render"
)

func TestMayMovePlan(t *testing.T) {
	const rollingOut = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1}
spec: {replicas: 3}
status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}`
	const pending = `apiVersion: v1
kind: Pod
metadata: {name: web-1, generation: 1}
status: {phase: Pending}`
	tests := []struct {
		name     string
		old, cur string
		want     bool
	}{
		{"a rollout's progress", rollingOut, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1}
spec: {replicas: 3}
status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2}`, false},
		{"a rollout's end", rollingOut, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1}
spec: {replicas: 3}
status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3,
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]}`, true},
		{"a new spec", rollingOut, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 4}
status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}`, true},
		{"a changed annotation", rollingOut, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1, annotations: {kudo.dev/applied-hash: edited}}
spec: {replicas: 3}
status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}`, true},
		{"the revision its controller notes on a Deployment", rollingOut, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1, annotations: {deployment.kubernetes.io/revision: "1"}}
spec: {replicas: 3}
status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}`, false},
		{"the arrival of an object kudo-ng applied", "",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {kudo.dev/applied-hash: h}}", false},
		{"the arrival of an object kudo-ng did not apply", "",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data-web-0}", true},
		{"a ConfigMap's data, which has no generation",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: c}", true},
		{"a resync of a ConfigMap",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, resourceVersion: \"1\"}",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, resourceVersion: \"1\"}", false},
		{"a pod that gets stuck", pending, `apiVersion: v1
kind: Pod
metadata: {name: web-1, generation: 1}
status:
  phase: Pending
  containerStatuses: [{name: web, ready: false, state: {waiting: {reason: ErrImagePull, message: not found}}}]`, true},
		{"a pod that gets scheduled", pending, `apiVersion: v1
kind: Pod
metadata: {name: web-1, generation: 1}
status: {phase: Pending, conditions: [{type: PodScheduled, status: "True"}]}`, false},
	}
	for _, tt := range tests {
		for _, form := range informerForms {
			t.Run(tt.name+", "+form.name, func(t *testing.T) {
				cur := object(t, tt.cur)
				if tt.old == "" {
					if got := mayMovePlan.Create(event.CreateEvent{Object: form.of(t, cur)}); got != tt.want {
						t.Errorf("mayMovePlan = %t, want %t", got, tt.want)
					}
					return
				}
				old := object(t, tt.old)
				if cur.GetResourceVersion() == "" {
					old.SetResourceVersion("1")
					cur.SetResourceVersion("2")
				}
				if got := mayMovePlan.Update(event.UpdateEvent{ObjectOld: form.of(t, old), ObjectNew: form.of(t, cur)}); got != tt.want {
					t.Errorf("mayMovePlan = %t, want %t", got, tt.want)
				}
			})
		}
	}
}

// informerForms are the forms in which informers hand objects to event
// handlers: unstructured, and typed without their kind for built-in kinds.
var informerForms = []struct {
	name string
	of   func(*testing.T, *unstructured.Unstructured) client.Object
}{
	{"unstructured", func(_ *testing.T, u *unstructured.Unstructured) client.Object { return u }},
	{"typed", func(t *testing.T, u *unstructured.Unstructured) client.Object {
		t.Helper()
		typed, err := kubescheme.Scheme.New(u.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			t.Fatal(err)
		}
		typed.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		return typed.(client.Object)
	}},
}

func TestPodMayMovePlan(t *testing.T) {
	const (
		workloadPod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, resourceVersion: \"1\", " +
			"ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1, controller: true}]}\n"
		appliedPod = "apiVersion: v1\nkind: Pod\nmetadata: {name: probe, resourceVersion: \"1\", " +
			"ownerReferences: [{apiVersion: kudo.dev/v1beta1, kind: Instance, name: i, uid: u2, controller: true}]}\n"
		pending = "status: {phase: Pending}"
		ready   = "status: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}"
		stuck   = "status: {phase: Pending, containerStatuses: [{name: web, state: {waiting: {reason: ImagePullBackOff}}}]}"
	)
	tests := []struct {
		name     string
		old, cur string
		want     bool
	}{
		{"a workload's pod that becomes ready", workloadPod + pending, workloadPod + ready, false},
		{"a workload's pod that gets stuck", workloadPod + pending, workloadPod + stuck, true},
		{"a workload's pod that gets going again", workloadPod + stuck, workloadPod + ready, true},
		{"a workload's new pod", "", workloadPod + pending, false},
		{"a workload's new pod, stuck already", "", workloadPod + stuck, true},
		{"a pod a package applied that becomes ready", appliedPod + pending, appliedPod + ready, true},
		{"a new pod a package applied", "", appliedPod + pending, true},
	}
	for _, tt := range tests {
		for _, form := range informerForms {
			t.Run(tt.name+", "+form.name, func(t *testing.T) {
				cur := object(t, tt.cur)
				var got bool
				if tt.old == "" {
					got = podMayMovePlan.Create(event.CreateEvent{Object: form.of(t, cur)})
				} else {
					cur.SetResourceVersion("2")
					got = podMayMovePlan.Update(event.UpdateEvent{ObjectOld: form.of(t, object(t, tt.old)), ObjectNew: form.of(t, cur)})
				}
				if got != tt.want {
					t.Errorf("podMayMovePlan = %t, want %t", got, tt.want)
				}
			})
		}
	}
}

func TestOnlyClearsPlanExecution(t *testing.T) {
	requested := func() *kudov1beta1.Instance {
		return &kudov1beta1.Instance{Spec: kudov1beta1.InstanceSpec{
			Parameters:    map[string]string{"REPLICAS": "1"},
			PlanExecution: kudov1beta1.PlanExecution{PlanName: "deploy", UID: "run-1"},
		}}
	}
	tests := []struct {
		name   string
		change func(*kudov1beta1.Instance)
		want   bool
	}{
		{"the clear at a plan's end", func(i *kudov1beta1.Instance) { i.Spec.PlanExecution = kudov1beta1.PlanExecution{} }, true},
		{"a clear with new parameters", func(i *kudov1beta1.Instance) {
			i.Spec.PlanExecution = kudov1beta1.PlanExecution{}
			i.Spec.Parameters["REPLICAS"] = "2"
		}, false},
		{"a clear with a new annotation", func(i *kudov1beta1.Instance) {
			i.Spec.PlanExecution = kudov1beta1.PlanExecution{}
			i.Annotations = map[string]string{"a": "b"}
		}, false},
		{"a new request", func(i *kudov1beta1.Instance) { i.Spec.PlanExecution.UID = "run-2" }, false},
		{"new parameters", func(i *kudov1beta1.Instance) { i.Spec.Parameters["REPLICAS"] = "2" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, cur := requested(), requested()
			tt.change(cur)
			if got := onlyClearsPlanExecution(old, cur); got != tt.want {
				t.Errorf("onlyClearsPlanExecution = %t, want %t", got, tt.want)
			}
		})
	}
	idle := requested()
	idle.Spec.PlanExecution = kudov1beta1.PlanExecution{}
	if onlyClearsPlanExecution(idle, idle.DeepCopy()) {
		t.Error("an update of an Instance with no planExecution does not clear one")
	}
}

func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	objs, err := render.Objects(t.Name(), y)
	if err != nil || len(objs) != 1 {
		t.Fatalf("want one object: %v", err)
	}
	return objs[0]
}

func TestJudgesWakeAnInstanceWhenTheirVerdictChanges(t *testing.T) {
	widgetKind := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	judgeOf := func(current string) *healthrule.Judge {
		rules, err := healthrule.Compile(&kudov1beta1.OperatorVersionSpec{HealthChecks: []kudov1beta1.HealthCheck{{
			APIVersion: "example.com/v1", Kind: "Widget", Failed: "status.phase == 'Failed'", Current: current}}})
		if err != nil {
			t.Fatal(err)
		}
		return rules.JudgeOf(widgetKind, "app")
	}
	widget := func(phase string, replicas int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"spec": map[string]any{"size": int64(1)}, "status": map[string]any{"phase": phase, "replicas": replicas}}}
	}
	judges := &kindJudges{byKey: map[string]*healthrule.Judge{}}
	judges.add(judgeOf("status.phase == 'Ready'"))
	judges.add(judgeOf("status.phase == 'Ready'"))
	if len(judges.byKey) != 1 {
		t.Errorf("judges noted: %d, want the rules of both OperatorVersions once", len(judges.byKey))
	}
	tests := []struct {
		name     string
		old, cur *unstructured.Unstructured
		want     wakeup
	}{
		{"become Ready", widget("Pending", 1), widget("Ready", 1), wakeNow},
		{"failed", widget("Pending", 1), widget("Failed", 1), wakeNow},
		{"in progress, with a new value the rule reads", widget("Pending", 1), widget("Starting", 1), wakeLater},
		{"a field no rule reads", widget("Pending", 1), widget("Pending", 2), stayAsleep},
	}
	for _, tt := range tests {
		if got := judges.changed(tt.old, tt.cur); got != tt.want {
			t.Errorf("%s: wakeup %d, want %d", tt.name, got, tt.want)
		}
	}
	for n := range maxJudges + 1 {
		judges.add(judgeOf(fmt.Sprintf("status.replicas == %d", n)))
	}
	if !judges.all || judges.changed(widget("Pending", 1), widget("Pending", 2)) != wakeNow {
		t.Error("past maxJudges, any change of the status does not wake the Instance")
	}
}
