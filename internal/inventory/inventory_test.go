package inventory

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func ref(kind, name string) kudov1beta1.ObjectRef {
	return kudov1beta1.ObjectRef{APIVersion: "v1", Kind: kind, Namespace: "ns", Name: name}
}

func seen(kind, name, hash string) kudov1beta1.InventoryObject {
	return kudov1beta1.InventoryObject{ObjectRef: ref(kind, name), Hash: hash}
}

func applied(o kudov1beta1.InventoryObject, written bool) Applied {
	return Applied{Object: o, Written: written}
}

func TestRecord(t *testing.T) {
	site := Site{Task: "app", Plan: "deploy", Phase: "main", Step: "app", PlanUID: "run-2"}
	held := []kudov1beta1.TaskInventory{
		{Task: "app", Plan: "deploy", Phase: "main", Step: "app", PlanUID: "run-1",
			Objects: []kudov1beta1.InventoryObject{seen("ConfigMap", "a", "h1"), seen("ConfigMap", "b", "h1")}},
		{Task: "other", Plan: "backup", PlanUID: "run-0", Objects: []kudov1beta1.InventoryObject{seen("ConfigMap", "c", "h1")}},
	}
	tests := []struct {
		name    string
		applied []Applied
		done    bool
		want    []kudov1beta1.TaskInventory
	}{
		{"a completed run holds what it applied; what it held besides is stale",
			[]Applied{applied(seen("ConfigMap", "a", "h2"), true)}, true,
			[]kudov1beta1.TaskInventory{
				{Task: "app", Plan: "deploy", Phase: "main", Step: "app", PlanUID: "run-2",
					Objects: []kudov1beta1.InventoryObject{seen("ConfigMap", "a", "h2")}, Stale: []kudov1beta1.ObjectRef{ref("ConfigMap", "b")}},
				held[1]}},
		{"a running task adds what it applied to what it held",
			[]Applied{applied(seen("ConfigMap", "d", "h1"), true)}, false,
			[]kudov1beta1.TaskInventory{
				{Task: "app", Plan: "deploy", Phase: "main", Step: "app", PlanUID: "run-2",
					Objects: []kudov1beta1.InventoryObject{seen("ConfigMap", "a", "h1"), seen("ConfigMap", "b", "h1"), seen("ConfigMap", "d", "h1")}},
				held[1]}},
		{"an object the run did not write keeps what the inventory saw of it: a change stays visible",
			[]Applied{applied(seen("ConfigMap", "a", "changed"), false), applied(seen("ConfigMap", "b", "h1"), false)}, true,
			[]kudov1beta1.TaskInventory{
				{Task: "app", Plan: "deploy", Phase: "main", Step: "app", PlanUID: "run-2",
					Objects: []kudov1beta1.InventoryObject{seen("ConfigMap", "a", "h1"), seen("ConfigMap", "b", "h1")}},
				held[1]}},
		{"an object moves to the task that applied it last",
			[]Applied{applied(seen("ConfigMap", "a", "h1"), false), applied(seen("ConfigMap", "b", "h1"), false), applied(seen("ConfigMap", "c", "h2"), true)}, true,
			[]kudov1beta1.TaskInventory{
				{Task: "app", Plan: "deploy", Phase: "main", Step: "app", PlanUID: "run-2",
					Objects: []kudov1beta1.InventoryObject{seen("ConfigMap", "a", "h1"), seen("ConfigMap", "b", "h1"), seen("ConfigMap", "c", "h2")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := clone(held)
			got := Record(inv, site, tt.applied, tt.done)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Record (-want +got):\n%s", d)
			}
		})
	}
}

func TestRecordANewTaskAndTheSameRecordTwice(t *testing.T) {
	site := Site{Task: "b", Plan: "deploy", PlanUID: "u"}
	a := []Applied{applied(seen("Service", "s", "h"), true), applied(seen("ConfigMap", "c", "h"), true)}
	once := Record(nil, site, a, true)
	twice := Record(clone(once), site, a, true)
	if d := cmp.Diff(once, twice); d != "" {
		t.Errorf("recording the same run again changed the inventory (-once +twice):\n%s", d)
	}
	want := []kudov1beta1.InventoryObject{seen("ConfigMap", "c", "h"), seen("Service", "s", "h")}
	if d := cmp.Diff(want, once[0].Objects); d != "" {
		t.Errorf("objects are not sorted (-want +got):\n%s", d)
	}
}

func TestForget(t *testing.T) {
	inv := []kudov1beta1.TaskInventory{
		{Task: "app", Objects: []kudov1beta1.InventoryObject{seen("ConfigMap", "a", "h")}, Stale: []kudov1beta1.ObjectRef{ref("ConfigMap", "b")}},
		{Task: "gone", Objects: []kudov1beta1.InventoryObject{seen("ConfigMap", "c", "h")}},
	}
	got := Forget(inv, ref("ConfigMap", "b"), ref("ConfigMap", "c"))
	want := []kudov1beta1.TaskInventory{{Task: "app", Objects: []kudov1beta1.InventoryObject{seen("ConfigMap", "a", "h")}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Forget (-want +got):\n%s", d)
	}
	if got := Forget(got, ref("ConfigMap", "a")); got != nil {
		t.Errorf("an inventory of nothing is %v, not nil", got)
	}
}

func TestPrunable(t *testing.T) {
	stale := []kudov1beta1.ObjectRef{ref("ConfigMap", "old")}
	inv := []kudov1beta1.TaskInventory{
		{Task: "completed", Plan: "deploy", PlanUID: "u2", Stale: stale},
		{Task: "failed", Plan: "update", PlanUID: "u3", Stale: stale},
		{Task: "earlier run", Plan: "deploy", PlanUID: "u1", Stale: stale},
		{Task: "nothing stale", Plan: "deploy", PlanUID: "u2"},
	}
	plans := map[string]kudov1beta1.PlanStatus{
		"deploy": {UID: "u2", Status: kudov1beta1.ExecutionComplete},
		"update": {UID: "u3", Status: kudov1beta1.ExecutionFatalError},
	}
	var got []string
	for _, t := range Prunable(inv, plans) {
		got = append(got, t.Task)
	}
	if d := cmp.Diff([]string{"completed"}, got); d != "" {
		t.Errorf("Prunable (-want +got):\n%s", d)
	}
}

func TestRemovalTiers(t *testing.T) {
	crd := kudov1beta1.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}
	role := kudov1beta1.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "widgets"}
	widget := kudov1beta1.ObjectRef{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "ns", Name: "w"}
	got := RemovalTiers([]kudov1beta1.ObjectRef{crd, role, widget, ref("ConfigMap", "c")})
	want := [][]kudov1beta1.ObjectRef{{widget, ref("ConfigMap", "c")}, {crd}, {role}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("RemovalTiers (-want +got):\n%s", d)
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter()
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	steps := []struct {
		at      time.Duration
		correct bool
		want    Verdict
	}{
		{0, true, Verdict{}},
		{100 * time.Millisecond, false, Verdict{Wait: 900 * time.Millisecond, Corrections: 1}},
		{time.Second, true, Verdict{Corrections: 1}},
		{2 * time.Second, false, Verdict{Wait: time.Second, Corrections: 2}},
		{3 * time.Second, true, Verdict{Corrections: 2}},
		{4 * time.Second, false, Verdict{Wait: 3 * time.Second, Corrections: 3, Fight: true}},
		{7 * time.Second, true, Verdict{Corrections: 3, Fight: true}},
		{7*time.Second + 10*time.Minute, false, Verdict{}},
	}
	for _, s := range steps {
		if got := l.Check("x", at(s.at)); got != s.want {
			t.Errorf("at %s: got %+v, want %+v", s.at, got, s.want)
		}
		if s.correct {
			l.Corrected("x", at(s.at))
		}
	}
	if got := delay(30); got != maxDelay {
		t.Errorf("delay(30) = %s, want the cap %s", got, maxDelay)
	}
	if got := l.Check("y", start); got != (Verdict{}) {
		t.Errorf("an object never corrected: %+v", got)
	}
}

func clone(inv []kudov1beta1.TaskInventory) []kudov1beta1.TaskInventory {
	out := make([]kudov1beta1.TaskInventory, len(inv))
	for i := range inv {
		inv[i].DeepCopyInto(&out[i])
	}
	return out
}

func TestFitsBoundsTheInventory(t *testing.T) {
	objs := func(prefix string, n int) []*unstructured.Unstructured {
		out := make([]*unstructured.Unstructured, n)
		for k := range out {
			out[k] = &unstructured.Unstructured{}
			out[k].SetAPIVersion("v1")
			out[k].SetKind("ConfigMap")
			out[k].SetNamespace("databases")
			out[k].SetName(fmt.Sprintf("%s-%05d", prefix, k))
		}
		return out
	}
	site := Site{Task: "nodes", Plan: "deploy", Phase: "main", Step: "a", PlanUID: "uid"}
	var applied []Applied
	for k, obj := range objs("cassandra-production-node", 4000) {
		applied = append(applied, Applied{Object: kudov1beta1.InventoryObject{ObjectRef: RefOf(obj), Generation: int64(k + 1)}})
	}
	held := Record(nil, site, applied, true)
	tests := []struct {
		name  string
		site  Site
		objs  []*unstructured.Unstructured
		count int
		fits  bool
	}{
		{"a task applying again what it holds", site, objs("cassandra-production-node", 4000), 4000, true},
		{"8,000 objects", Site{Task: "more"}, objs("cassandra-production-more", 4000), 8000, true},
		{"9,000 objects", Site{Task: "more"}, objs("cassandra-production-more", 5000), 9000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			count, size, ok := Fits(held, tt.site, tt.objs)
			if count != tt.count || ok != tt.fits || (ok && size > MaxBytes) || (!ok && size <= MaxBytes) {
				t.Errorf("Fits = %d objects, %d bytes, %v; want %d objects, fits %v", count, size, ok, tt.count, tt.fits)
			}
		})
	}
	if count, _, ok := Fits(nil, site, objs("small", 10)); !ok || count != 10 {
		t.Errorf("Fits of 10 objects = %d, %v", count, ok)
	}
	if len(held[0].Objects) != 4000 {
		t.Errorf("Fits changed the inventory it was given: %d objects", len(held[0].Objects))
	}
}
