package controllers

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/event"

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
		t.Run(tt.name, func(t *testing.T) {
			old, cur := object(t, tt.old), object(t, tt.cur)
			if cur.GetResourceVersion() == "" {
				old.SetResourceVersion("1")
				cur.SetResourceVersion("2")
			}
			e := event.UpdateEvent{ObjectOld: old, ObjectNew: cur}
			if got := mayMovePlan.Update(e); got != tt.want {
				t.Errorf("mayMovePlan = %t, want %t", got, tt.want)
			}
		})
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
