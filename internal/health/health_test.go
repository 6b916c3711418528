package health

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kudo-ng/kudo/internal/render"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	objs, err := render.Objects(t.Name(), y)
	if err != nil || len(objs) != 1 {
		t.Fatalf("want one object: %v", err)
	}
	return objs[0]
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		want Result
	}{
		{"a ConfigMap is healthy once it exists", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}", Result{Healthy: true}},
		{"a Deployment whose status lags", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 3}
status: {observedGeneration: 1}`, Result{Message: "waiting for Deployment web: Deployment generation is 2, but latest observed generation is 1"}},
		{"an available Deployment", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1}
spec: {replicas: 2}
status: {observedGeneration: 1, replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2,
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]}`, Result{Healthy: true}},
		{"a started Job is not done", `apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
status: {startTime: "2026-11-21T10:00:00Z", active: 1}`, Result{Message: "waiting for Job migrate to complete: 1 active, 0 succeeded, 0 failed"}},
		{"a complete Job", `apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
status: {succeeded: 1, conditions: [{type: Complete, status: "True"}]}`, Result{Healthy: true}},
		{"a failed Job is fatal", `apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
status: {failed: 1, conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded, message: Job has reached the specified backoff limit}]}`,
			Result{Fatal: true, Message: "Job migrate failed: BackoffLimitExceeded: Job has reached the specified backoff limit"}},
		{"a child Instance still deploying", `apiVersion: kudo.dev/v1beta1
kind: Instance
metadata: {name: zk}
status: {activePlan: {name: deploy, status: IN_PROGRESS}}`, Result{Message: "waiting for Instance zk: plan deploy is IN_PROGRESS"}},
		{"a child Instance whose plan failed", `apiVersion: kudo.dev/v1beta1
kind: Instance
metadata: {name: zk}
status: {activePlan: {name: deploy, status: FATAL_ERROR}, planStatus: {deploy: {message: boom}}}`,
			Result{Fatal: true, Message: "Instance zk: plan deploy failed: boom"}},
		{"a custom resource without status is healthy, and says why", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}",
			Result{Healthy: true, Message: "Widget w reports no status; counted healthy once applied"}},
		{"a custom resource that has not observed its generation", `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 2}
status: {observedGeneration: 1}`, Result{Message: "waiting for Widget w: Widget generation is 2, but latest observed generation is 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(obj(t, tt.obj))
			if got.Healthy != tt.want.Healthy || got.Fatal != tt.want.Fatal || got.Message != tt.want.Message {
				t.Errorf("Check = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCheckNamesTheVerdictAndWhatJudged(t *testing.T) {
	tests := []struct {
		obj          string
		status, rule string
	}{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}", Current, RuleKstatus},
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, generation: 2}\nstatus: {observedGeneration: 1}", InProgress, RuleKstatus},
		{"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nstatus: {conditions: [{type: Failed, status: \"True\"}]}", Failed, RuleJob},
		{"apiVersion: kudo.dev/v1beta1\nkind: Instance\nmetadata: {name: zk}\nstatus: {activePlan: {name: deploy, status: COMPLETE}}", Current, RuleChildPlan},
	}
	for _, tt := range tests {
		got := Check(obj(t, tt.obj))
		if got.Status != tt.status || got.Rule != tt.rule {
			t.Errorf("Check(%s) judged %s by %q, want %s by %q", tt.obj, got.Status, got.Rule, tt.status, tt.rule)
		}
	}
}

func TestState(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		want string
	}{
		{"a Deployment not yet observed", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1}
spec: {replicas: 3}`, "InProgress"},
		{"a Deployment half rolled out is in the same state", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1}
spec: {replicas: 3}
status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}`, "InProgress"},
		{"an available Deployment", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1}
spec: {replicas: 2}
status: {observedGeneration: 1, replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2,
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]}`, "Current"},
		{"a running Job", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: m}\nstatus: {active: 1}", "Running"},
		{"a complete Job", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: m}\nstatus: {conditions: [{type: Complete, status: \"True\"}]}", "Complete"},
		{"a failed Job", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: m}\nstatus: {conditions: [{type: Failed, status: \"True\"}]}", "Failed"},
		{"a child Instance", "apiVersion: kudo.dev/v1beta1\nkind: Instance\nmetadata: {name: zk}\nstatus: {activePlan: {name: deploy, status: IN_PROGRESS}}", "IN_PROGRESS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := State(obj(t, tt.obj)); got != tt.want {
				t.Errorf("State = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPodProblem(t *testing.T) {
	tests := []struct {
		name, statuses, want string
	}{
		{"an image that cannot be pulled", `containerStatuses:
  - name: web
    state: {waiting: {reason: ErrImagePull, message: not found}}`, "pod web-1: container web: ErrImagePull: not found"},
		{"a container that exited 1, with its termination message", `containerStatuses:
  - name: web
    state: {terminated: {reason: Error, exitCode: 1, message: "the check failed\n"}}`, "pod web-1: container web: Error, exit code 1: the check failed"},
		{"an init container that was killed", `initContainerStatuses:
  - name: init
    state: {terminated: {reason: OOMKilled, exitCode: 137}}`, "pod web-1: container init: OOMKilled, exit code 137"},
		{"a container that exited 0", `containerStatuses:
  - name: web
    state: {terminated: {reason: Completed, exitCode: 0}}`, ""},
		{"a container being created", `containerStatuses:
  - name: web
    state: {waiting: {reason: ContainerCreating}}`, ""},
		{"a running container", `containerStatuses:
  - name: web
    state: {running: {}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := obj(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1}\nstatus:\n  "+tt.statuses)
			if got := PodProblem(pod); got != tt.want {
				t.Errorf("PodProblem = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPendingClaimClass(t *testing.T) {
	tests := []struct {
		name    string
		obj     string
		class   string
		pending bool
	}{
		{"a Pending claim of a class", `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {storageClassName: standard}
status: {phase: Pending}`, "standard", true},
		{"a bound claim", `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {storageClassName: standard}
status: {phase: Bound}`, "standard", false},
		{"a Pending claim of no class, bound to a volume by hand", `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {storageClassName: ""}
status: {phase: Pending}`, "", false},
		{"another kind", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if class, pending := PendingClaimClass(obj(t, tt.obj)); class != tt.class || pending != tt.pending {
				t.Errorf("PendingClaimClass = %q, %t; want %q, %t", class, pending, tt.class, tt.pending)
			}
		})
	}
}
