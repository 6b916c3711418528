package objects

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
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
	wire, err := sent.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
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
	const instances, perInstance = 500, 6
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cached := make([]*corev1.ConfigMap, 0, instances*perInstance)
		for i := range instances * perInstance {
			cm := watchedConfigMap(b, fmt.Sprintf("i-%04d", i/perInstance), i)
			if _, err := testTrim.ForCache(cm); err != nil {
				b.Fatal(err)
			}
			cached = append(cached, cm)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(cached)), "retained-B/object")
		runtime.KeepAlive(cached)
	}
}
