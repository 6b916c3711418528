package objects

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
)

// watchedConfigMap is the i-th ConfigMap of Instance instance as the cache
// gets it from a watch: protobuf-decoded, each string a copy of its own.
func watchedConfigMap(t testing.TB, instance string, i int) *corev1.ConfigMap {
	t.Helper()
	owner := true
	sent := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-config-%d", instance, i), Namespace: "team-a", UID: types.UID(fmt.Sprintf("uid-%s-%d", instance, i)),
			ResourceVersion: fmt.Sprint(1000 + i),
			Labels: map[string]string{kudov1beta1.HeritageLabel: "kudo", kudov1beta1.InstanceLabel: instance,
				kudov1beta1.OperatorLabel: "scale"},
			Annotations: map[string]string{kudov1beta1.AppliedHashAnnotation: fmt.Sprintf("%016x", i),
				kudov1beta1.PlanUIDAnnotation: "d995f99e-d9c7-4820-9900-c063da34874f", kudov1beta1.PlanAnnotation: "deploy",
				kudov1beta1.PhaseAnnotation: "main", kudov1beta1.StepAnnotation: "config"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kudo.dev/v1beta1", Kind: "Instance", Name: instance,
				UID: types.UID("7bf2bd44-262c-41a4-afe4-07402e3b0adb-" + instance), Controller: &owner, BlockOwnerDeletion: &owner}},
		},
		Data: map[string]string{"instance": instance},
	}
	return overTheWire(t, sent, &corev1.ConfigMap{})
}

// overTheWire is sent as a watch delivers it, protobuf-decoded into got:
// each string a copy of its own.
func overTheWire[T interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}](t testing.TB, sent, got T) T {
	t.Helper()
	wire, err := sent.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Unmarshal(wire); err != nil {
		t.Fatal(err)
	}
	return got
}

func sameString(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// The cache holds what the metadata of many objects repeat once; if it did
// not, 10,000 Instances' objects would take 20 MB more of the manager's heap.
func TestTheCacheHoldsSharedMetadataOnce(t *testing.T) {
	var cached []*corev1.ConfigMap
	for i := range 2 {
		cm := watchedConfigMap(t, "i-0001", i)
		if _, err := testTrim.ForCache(cm); err != nil {
			t.Fatal(err)
		}
		cached = append(cached, cm)
	}
	a, b := cached[0], cached[1]
	shared := map[string][2]string{
		"namespace":                  {a.Namespace, b.Namespace},
		"the instance label's key":   {keyOf(a.Labels, kudov1beta1.InstanceLabel), keyOf(b.Labels, kudov1beta1.InstanceLabel)},
		"the instance label's value": {a.Labels[kudov1beta1.InstanceLabel], b.Labels[kudov1beta1.InstanceLabel]},
		"the applied hash's key":     {keyOf(a.Annotations, kudov1beta1.AppliedHashAnnotation), keyOf(b.Annotations, kudov1beta1.AppliedHashAnnotation)},
		"the plan run's UID":         {a.Annotations[kudov1beta1.PlanUIDAnnotation], b.Annotations[kudov1beta1.PlanUIDAnnotation]},
		"the step":                   {a.Annotations[kudov1beta1.StepAnnotation], b.Annotations[kudov1beta1.StepAnnotation]},
		"the owner's name":           {a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
		"the owner's UID":            {string(a.OwnerReferences[0].UID), string(b.OwnerReferences[0].UID)},
		"the owner's API version":    {a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
	}
	for what, s := range shared {
		if !sameString(s[0], s[1]) {
			t.Errorf("%s: two copies of %q", what, s[0])
		}
	}
	if got := a.Annotations[kudov1beta1.AppliedHashAnnotation]; got != fmt.Sprintf("%016x", 0) {
		t.Errorf("applied hash = %q, want the object's own", got)
	}
	if a.Labels[kudov1beta1.OperatorLabel] != "scale" || len(a.Labels) != 3 || len(a.Annotations) != 5 {
		t.Errorf("metadata changed: labels %v, annotations %v", a.Labels, a.Annotations)
	}
}

// keyOf is m's own copy of key.
func keyOf(m map[string]string, key string) string {
	for k := range m {
		if k == key {
			return k
		}
	}
	return ""
}

// BenchmarkCachedConfigMap reports the heap one cached ConfigMap of the
// scale package keeps (retained-B/object), six to an Instance.
func BenchmarkCachedConfigMap(b *testing.B) {
	const perInstance = 6
	benchmarkRetained(b, 500*perInstance, func(i int) any {
		return watchedConfigMap(b, fmt.Sprintf("i-%04d", i/perInstance), i)
	})
}

// benchmarkRetained reports the heap that each of n objects watched(i)
// makes keeps once through the cache's transform (retained-B/object).
func benchmarkRetained(b *testing.B, n int, watched func(i int) any) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cached := make([]any, 0, n)
		for i := range n {
			obj := watched(i)
			if _, err := testTrim.ForCache(obj); err != nil {
				b.Fatal(err)
			}
			cached = append(cached, obj)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "retained-B/object")
		runtime.KeepAlive(cached)
	}
}

// watchedPod is the i-th pod of a Deployment of Instance instance as the
// cache gets it from a watch, running on a simulated node; waiting, when
// not empty, is why its container does not start.
func watchedPod(t testing.TB, instance string, i int, waiting string) *corev1.Pod {
	t.Helper()
	controller := true
	started := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}
	if waiting != "" {
		state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting, Message: "back-off 5m0s restarting"}}
	}
	var conditions []corev1.PodCondition
	for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady, corev1.PodScheduled} {
		conditions = append(conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: started})
	}
	sent := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-web-7d4b9c8f6-%05d", instance, i), Namespace: "team-a", UID: types.UID(fmt.Sprintf("uid-%s-%d", instance, i)),
			Labels: map[string]string{kudov1beta1.HeritageLabel: "kudo", kudov1beta1.InstanceLabel: instance,
				kudov1beta1.OperatorLabel: "scale", "app": "web", "pod-template-hash": "7d4b9c8f6"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: instance + "-web-7d4b9c8f6",
				UID: types.UID("rs-" + instance), Controller: &controller, BlockOwnerDeletion: &controller}},
		},
		Spec: corev1.PodSpec{NodeName: "kwok-node-0", Containers: []corev1.Container{{Name: "web", Image: "registry.local/web:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: conditions, HostIP: "10.0.0.1",
			HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}}, PodIP: fmt.Sprintf("10.244.%d.%d", i/250, i%250),
			PodIPs: []corev1.PodIP{{IP: fmt.Sprintf("10.244.%d.%d", i/250, i%250)}}, StartTime: &started, QOSClass: corev1.PodQOSBestEffort,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "web", State: state, Ready: waiting == "", Image: "registry.local/web:1",
				ImageID: "registry.local/web@sha256:0c5a9f1e", ContainerID: fmt.Sprintf("containerd://%064x", i)}}},
	}
	return overTheWire(t, sent, &corev1.Pod{})
}

// Of a workload's pod the manager reads why it is stuck, and that only.
func TestTheCacheKeepsOfAWorkloadsPodWhyItIsStuck(t *testing.T) {
	stuck := watchedPod(t, "i-0001", 0, "CrashLoopBackOff")
	want, err := podProblemOf(stuck)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testTrim.ForCache(stuck); err != nil {
		t.Fatal(err)
	}
	if got, _ := podProblemOf(stuck); got != want || want == "" {
		t.Errorf("cached pod's problem = %q, want %q", got, want)
	}
	if stuck.Status.Conditions != nil || stuck.Status.PodIP != "" || stuck.Status.ContainerStatuses[0].Image != "" {
		t.Errorf("ForCache kept a workload's pod's status: %+v", stuck.Status)
	}

	applied := watchedPod(t, "i-0001", 1, "")
	applied.OwnerReferences = nil
	applied.Annotations = map[string]string{kudov1beta1.AppliedHashAnnotation: "abc"}
	status := *applied.Status.DeepCopy()
	if _, err := testTrim.ForCache(applied); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(applied.Status, status) {
		t.Errorf("ForCache trimmed the status of a pod a task applied: %+v", applied.Status)
	}
}

func podProblemOf(pod *corev1.Pod) (string, error) {
	u, err := Unstructured(pod)
	if err != nil {
		return "", err
	}
	return health.PodProblem(u), nil
}

// BenchmarkCachedWorkloadPod reports the heap one cached pod of a
// Deployment of the scale package keeps (retained-B/object).
func BenchmarkCachedWorkloadPod(b *testing.B) {
	benchmarkRetained(b, 3000, func(i int) any { return watchedPod(b, fmt.Sprintf("i-%04d", i), i, "") })
}
