package objects

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kjson "sigs.k8s.io/json"

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

// watchedInstance is Instance i of the scale package once its deploy plan
// completed, as the cache gets it from a watch: JSON-decoded, each string a
// copy of its own.
func watchedInstance(t testing.TB, i int) *kudov1beta1.Instance {
	t.Helper()
	name := fmt.Sprintf("i-%04d", i)
	planUID := types.UID(fmt.Sprintf("d995f99e-d9c7-4820-9900-%012d", i))
	at := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	object := func(apiVersion, kind, suffix string) kudov1beta1.InventoryObject {
		return kudov1beta1.InventoryObject{ObjectRef: kudov1beta1.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: "team-a",
			Name: name + suffix}, Generation: 1}
	}
	step := func(name string) kudov1beta1.StepStatus {
		return kudov1beta1.StepStatus{Name: name, Status: kudov1beta1.ExecutionComplete, StartedAt: &at}
	}
	params := map[string]string{"REPLICAS": "1", "IMAGE": "registry.local/bench/web:1.0.0", "GREETING": "hello"}
	sent := &kudov1beta1.Instance{
		TypeMeta: metav1.TypeMeta{APIVersion: "kudo.dev/v1beta1", Kind: "Instance"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "team-a", UID: types.UID("7bf2bd44-262c-41a4-afe4-" + name), ResourceVersion: fmt.Sprint(5000 + i),
			Generation: 1, CreationTimestamp: at, Finalizers: []string{"kudo.dev/cleanup"},
			Labels: map[string]string{kudov1beta1.OperatorLabel: "bench-scale"},
		},
		Spec: kudov1beta1.InstanceSpec{
			OperatorVersion: corev1.ObjectReference{Name: "bench-scale-0.1.0"},
			Parameters:      params,
		},
		Status: kudov1beta1.InstanceStatus{
			PlanStatus: map[string]kudov1beta1.PlanStatus{
				"deploy": {Name: "deploy", Status: kudov1beta1.ExecutionComplete, LastUpdatedTimestamp: &at, UID: planUID, StartedAt: &at,
					Phases: []kudov1beta1.PhaseStatus{{Name: "main", Status: kudov1beta1.ExecutionComplete,
						Steps: []kudov1beta1.StepStatus{step("config"), step("app")}}}},
				"update": {Name: "update", Status: kudov1beta1.ExecutionNeverRun,
					Phases: []kudov1beta1.PhaseStatus{{Name: "main", Status: kudov1beta1.ExecutionNeverRun,
						Steps: []kudov1beta1.StepStatus{{Name: "config", Status: kudov1beta1.ExecutionNeverRun},
							{Name: "app", Status: kudov1beta1.ExecutionNeverRun}}}}},
			},
			ActivePlan:             &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionComplete},
			AppliedOperatorVersion: "bench-scale-0.1.0", AppliedParameters: params,
			AppliedOperatorVersionDigest: "sha256:6f1ed002ab5595859014ebf0951522d9e7e4d0a5c3f2e8b1d7a4c9e0f3b2a1c8",
			AppliedGeneration:            1, ObservedGeneration: 1,
			Inventory: []kudov1beta1.TaskInventory{
				{Task: "config", Plan: "deploy", Phase: "main", Step: "config", PlanUID: planUID, Objects: []kudov1beta1.InventoryObject{
					object("v1", "ConfigMap", "-config"), object("v1", "ConfigMap", "-settings"), object("v1", "Secret", "-secret"),
					object("v1", "Service", "-web")}},
				{Task: "app", Plan: "deploy", Phase: "main", Step: "app", PlanUID: planUID, Objects: []kudov1beta1.InventoryObject{
					object("apps/v1", "Deployment", "-web")}},
			},
			Revisions: []kudov1beta1.Revision{{Number: 1, Plan: "deploy", UID: planUID, Status: kudov1beta1.ExecutionComplete,
				StartedAt: &at, OperatorVersion: "bench-scale-0.1.0"}},
			Conditions: []metav1.Condition{
				{Type: kudov1beta1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "ResourcesReady",
					Message: "the plan deploy is COMPLETE and every object is ready", ObservedGeneration: 1, LastTransitionTime: at},
				{Type: kudov1beta1.ReconcilingCondition, Status: metav1.ConditionFalse, Reason: "PlanComplete",
					Message: "no plan runs", ObservedGeneration: 1, LastTransitionTime: at},
				{Type: kudov1beta1.StalledCondition, Status: metav1.ConditionFalse, Reason: "PlanComplete",
					Message: "no plan failed", ObservedGeneration: 1, LastTransitionTime: at},
			},
		},
	}
	wire, err := json.Marshal(sent)
	if err != nil {
		t.Fatal(err)
	}
	got := &kudov1beta1.Instance{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(wire, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// BenchmarkCachedInstance reports the heap one cached Instance of the scale
// package keeps (retained-B/object).
func BenchmarkCachedInstance(b *testing.B) {
	benchmarkRetained(b, 2000, func(i int) any { return watchedInstance(b, i) })
}

// A cached Instance is whole — the status the manager writes is computed
// from it — and what its status repeats, and other Instances' too, is held
// once.
func TestTheCacheHoldsAnInstanceWholeItsRepeatsOnce(t *testing.T) {
	a, b := watchedInstance(t, 1), watchedInstance(t, 2)
	want := a.DeepCopy()
	for _, i := range []*kudov1beta1.Instance{a, b} {
		if _, err := testTrim.ForCache(i); err != nil {
			t.Fatal(err)
		}
	}
	if !equality.Semantic.DeepEqual(a, want) {
		t.Fatalf("the cached Instance changed:\n%+v\nwant\n%+v", a, want)
	}
	shared := map[string][2]string{
		"a plan's name": {a.Status.PlanStatus["deploy"].Name, b.Status.PlanStatus["deploy"].Name},
		"a step's status": {string(a.Status.PlanStatus["deploy"].Phases[0].Steps[0].Status),
			string(b.Status.PlanStatus["deploy"].Phases[0].Steps[1].Status)},
		"a condition's message":  {a.Status.Conditions[0].Message, b.Status.Conditions[0].Message},
		"the OperatorVersion":    {a.Spec.OperatorVersion.Name, b.Status.Revisions[0].OperatorVersion},
		"a parameter's value":    {a.Spec.Parameters["IMAGE"], b.Status.AppliedParameters["IMAGE"]},
		"a task's step":          {a.Status.Inventory[0].Step, b.Status.PlanStatus["deploy"].Phases[0].Steps[0].Name},
		"the plan run, in a run": {string(a.Status.Inventory[1].PlanUID), string(a.Status.PlanStatus["deploy"].UID)},
	}
	for what, s := range shared {
		if !sameString(s[0], s[1]) {
			t.Errorf("%s: two copies of %q", what, s[0])
		}
	}
}
