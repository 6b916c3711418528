package objects

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// configMap is the ConfigMap "settings" as instanceA's task renders it.
func configMap(data string) *unstructured.Unstructured {
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings", "namespace": "ns"},
		"data": map[string]any{"mode": data},
	}}
	cm.SetOwnerReferences(owned("", "uid-a").OwnerReferences)
	return cm
}

func TestApplyWritesOnlyWhatChangedSinceItLastApplied(t *testing.T) {
	ctx := context.Background()
	writes := &Writes{}
	m := NewManager(instanceA, fake.NewClientBuilder().WithScheme(scheme.Scheme).Build(), Options{Writes: writes})
	for _, step := range []struct {
		name string
		data string
		want Action
	}{
		{"a new object is applied", "fast", Applied},
		{"the same rendering again writes nothing", "fast", Unchanged},
		{"a new rendering is applied", "safe", Applied},
	} {
		got, err := m.Apply(ctx, configMap(step.data))
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got.Action != step.want || got.Object == nil {
			t.Errorf("%s: %s %v, want %s", step.name, got.Action, got.Object, step.want)
		}
	}
	if len(writes.objs) != 2 {
		t.Errorf("%d writes collected, want the 2 applies", len(writes.objs))
	}
}

// TestRemakeMakesAnewWhatAnEarlierPlanRunMade: an object each plan run
// makes anew (a chart's upgrade hook) is applied within its run, and
// deleted first by the next run, then applied once it is gone.
func TestRemakeMakesAnewWhatAnEarlierPlanRunMade(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	m := NewManager(instanceA, c, Options{})
	inRun := func(uid string) *unstructured.Unstructured {
		cm := configMap("fast")
		cm.SetAnnotations(map[string]string{kudov1beta1.PlanUIDAnnotation: uid})
		return cm
	}
	for _, step := range []struct {
		name, run string
		want      Action
	}{
		{"the first run makes it", "run-1", Applied},
		{"within that run it is kept", "run-1", Unchanged},
		{"the next run deletes it first", "run-2", Deleting},
		{"and makes it once it is gone", "run-2", Applied},
		{"within that run it is kept", "run-2", Unchanged},
	} {
		got, err := m.Remake(ctx, inRun(step.run))
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got.Action != step.want {
			t.Fatalf("%s: %s, want %s", step.name, got.Action, step.want)
		}
		if got.Action == Deleting {
			// The fake client deletes at once; the cache of a manager sees
			// the object go by its watch.
			live := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "settings"}, live); !apierrors.IsNotFound(err) {
				t.Fatalf("%s: the object of run-1 is still there (%v)", step.name, err)
			}
		}
	}
}

// TestKeepMakesOnceAndKeeps: an object kept once made (a chart's install
// hook) is applied while it does not exist, then left as it is, whatever
// the next plan run renders.
func TestKeepMakesOnceAndKeeps(t *testing.T) {
	ctx := context.Background()
	writes := &Writes{}
	m := NewManager(instanceA, fake.NewClientBuilder().WithScheme(scheme.Scheme).Build(), Options{Writes: writes})
	for _, step := range []struct {
		name, data string
		want       Action
	}{
		{"a missing object is applied", "fast", Applied},
		{"the same rendering writes nothing", "fast", Unchanged},
		{"nor does another", "safe", Unchanged},
	} {
		got, err := m.Keep(ctx, configMap(step.data))
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got.Action != step.want || got.Object.Object["data"].(map[string]any)["mode"] != "fast" {
			t.Errorf("%s: %s %v, want %s of the first rendering", step.name, got.Action, got.Object.Object["data"], step.want)
		}
	}
	if len(writes.objs) != 1 {
		t.Errorf("%d writes, want the first apply's", len(writes.objs))
	}
}

var instanceA = &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid-a"}}

// owned is the ConfigMap "settings", claimed by a kudo.dev/owner annotation
// or by a controller owner reference of uid.
func owned(annotation string, uid string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "ns"}}
	if annotation != "" {
		cm.Annotations = map[string]string{kudov1beta1.OwnerAnnotation: annotation}
	}
	if uid != "" {
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kudo.dev/v1beta1", Kind: "Instance", Name: "x", UID: types.UID(uid), Controller: ptr.To(true)}}
	}
	return cm
}

// withOwner is cm owned by instanceA's owner reference.
func withOwner(cm *corev1.ConfigMap) *corev1.ConfigMap {
	cm = cm.DeepCopy()
	cm.OwnerReferences = owned("", "uid-a").OwnerReferences
	return cm
}

func labelled(instance string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "ns", Labels: map[string]string{kudov1beta1.InstanceLabel: instance}}}
}

// madeByKUDOIn is what KUDO, or kudo-ng before it recorded owners, applied
// for an Instance named as instanceA in namespace.
func madeByKUDOIn(namespace string) *corev1.ConfigMap {
	cm := labelled("a")
	cm.Namespace = namespace
	cm.Labels[kudov1beta1.HeritageLabel] = "kudo"
	return cm
}

// TestApplyTakesOverNothingItDidNotMake: an Instance applies over its own
// objects only; another owner's object, or nobody's (a user's, an admin's),
// is a conflict that names it, unless handed over with kudo.dev/adopt.
func TestApplyTakesOverNothingItDidNotMake(t *testing.T) {
	inventoried := instanceA.DeepCopy()
	inventoried.Status.Inventory = []kudov1beta1.TaskInventory{{Objects: []kudov1beta1.InventoryObject{
		{ObjectRef: kudov1beta1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "settings"}}}}}
	adopted := owned("", "")
	adopted.Annotations = map[string]string{kudov1beta1.AdoptAnnotation: "ns/a"}
	handedToAnother := owned("", "")
	handedToAnother.Annotations = map[string]string{kudov1beta1.AdoptAnnotation: "ns/b"}
	for _, tt := range []struct {
		name     string
		live     *corev1.ConfigMap
		instance *kudov1beta1.Instance
		wantErr  string
	}{
		{name: "nothing there", instance: instanceA},
		{name: "ours by owner reference", live: owned("", "uid-a"), instance: instanceA},
		{name: "ours by kudo.dev/owner", live: owned("ns/a", ""), instance: instanceA},
		{name: "ours by our inventory and KUDO's labels of us", live: madeByKUDOIn("ns"), instance: inventoried},
		{name: "in our inventory without a mark of ours: a forged status claims it", live: owned("", ""), instance: inventoried,
			wantErr: "ConfigMap ns/settings exists and is not Instance ns/a's"},
		{name: "handed to us with kudo.dev/adopt", live: adopted, instance: instanceA},
		{name: "another Instance's by kudo.dev/owner", live: owned("ns/b", ""), instance: instanceA,
			wantErr: "ConfigMap ns/settings is Instance ns/b's: two Instances render it; uninstall one, or rename it in one's package"},
		{name: "another Instance's by owner reference", live: owned("", "uid-b"), instance: instanceA,
			wantErr: "ConfigMap ns/settings is Instance x's: two Instances render it"},
		{name: "nobody's", live: owned("", ""), instance: instanceA,
			wantErr: "ConfigMap ns/settings exists and is not Instance ns/a's: an Instance takes over nothing it did not make; " +
				"to hand it over, annotate it kudo.dev/adopt=ns/a"},
		{name: "labelled with our name only", live: labelled("a"), instance: instanceA, wantErr: "exists and is not Instance ns/a's"},
		{name: "handed to another", live: handedToAnother, instance: instanceA, wantErr: "exists and is not Instance ns/a's"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.Scheme)
			if tt.live != nil {
				tt.live.Data = map[string]string{"mode": "theirs"}
				b = b.WithObjects(tt.live)
			}
			c := b.Build()
			_, err := NewManager(tt.instance, c, Options{Writes: &Writes{}}).Apply(context.Background(), configMap("fast"))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Apply: %v, want an error with %q", err, tt.wantErr)
			}
			live := &corev1.ConfigMap{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "settings"}, live); err != nil || live.Data["mode"] != "theirs" {
				t.Errorf("the refused apply changed the object: %v, %v", live.Data, err)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "ns",
		Annotations: map[string]string{kudov1beta1.PruneAnnotation: kudov1beta1.Disabled}}}
	ref := kudov1beta1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "settings"}
	inventoried := instanceA.DeepCopy()
	inventoried.Status.Inventory = []kudov1beta1.TaskInventory{{Objects: []kudov1beta1.InventoryObject{{ObjectRef: ref}}}}
	tests := []struct {
		name     string
		objs     []client.Object
		instance *kudov1beta1.Instance
		opts     DeleteOptions
		want     Action
		remains  bool
	}{
		{"an object annotated kudo.dev/prune: disabled is kept when guarded", []client.Object{withOwner(kept)}, instanceA, DeleteOptions{Guarded: true}, KeptByAnnotation, true},
		{"a Delete task's object goes, annotated or not", []client.Object{withOwner(kept)}, instanceA, DeleteOptions{}, Deleting, false},
		{"an object already gone", nil, instanceA, DeleteOptions{Guarded: true}, Gone, false},
		{"another Instance's object is kept", []client.Object{owned("ns/b", "")}, instanceA, DeleteOptions{Guarded: true}, KeptNotOurs, true},
		{"another Instance's object is kept from a Delete task too", []client.Object{owned("ns/b", "")}, instanceA, DeleteOptions{}, KeptNotOurs, true},
		{"our object goes", []client.Object{owned("ns/a", "")}, instanceA, DeleteOptions{Guarded: true}, Deleting, false},
		{"an object whose controller is another Instance is kept",
			[]client.Object{owned("", "uid-b")}, instanceA, DeleteOptions{Guarded: true}, KeptNotOurs, true},
		{"an object of ours by owner reference goes", []client.Object{owned("", "uid-a")}, instanceA, DeleteOptions{Guarded: true}, Deleting, false},
		{"an object from before owners were recorded goes by the inventory and KUDO's labels",
			[]client.Object{madeByKUDOIn("ns")}, inventoried, DeleteOptions{Guarded: true}, Deleting, false},
		{"an object the inventory records but nothing of ours marks is kept: a forged status names it",
			[]client.Object{owned("", "")}, inventoried, DeleteOptions{Guarded: true}, KeptNotOurs, true},
		{"nobody's object is kept, whatever its labels say", []client.Object{labelled("a")}, instanceA, DeleteOptions{}, KeptNotOurs, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tt.objs...).Build()
			got, err := NewManager(tt.instance, c, Options{APIReader: c}).Delete(ctx, ref, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Action != tt.want {
				t.Errorf("Delete: %s, want %s", got.Action, tt.want)
			}
			err = c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "settings"}, &corev1.ConfigMap{})
			if remains := err == nil; remains != tt.remains {
				t.Errorf("the object remains: %t, want %t (%v)", remains, tt.remains, err)
			}
		})
	}
}

// TestOwnershipIsNeverReadFromTheInventoryAlone: the decision of issue 62's
// forged status. The inventory is a status, which whoever may write a typed
// object's status writes too: an entry counts only beside a mark on the
// object itself that only its own writers set.
func TestOwnershipIsNeverReadFromTheInventoryAlone(t *testing.T) {
	record := func(cm *corev1.ConfigMap) *kudov1beta1.Instance {
		i := instanceA.DeepCopy()
		i.Status.Inventory = []kudov1beta1.TaskInventory{{Objects: []kudov1beta1.InventoryObject{
			{ObjectRef: kudov1beta1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}}}}}
		return i
	}
	clusterRole := func(labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("rbac.authorization.k8s.io/v1")
		u.SetKind("ClusterRole")
		u.SetName("precious")
		u.SetLabels(labels)
		return u
	}
	kudoLabels := map[string]string{kudov1beta1.HeritageLabel: "kudo", kudov1beta1.InstanceLabel: "a"}
	recordedRole := instanceA.DeepCopy()
	recordedRole.Status.Inventory = []kudov1beta1.TaskInventory{{Objects: []kudov1beta1.InventoryObject{
		{ObjectRef: kudov1beta1.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "precious"}}}}}
	for _, tt := range []struct {
		name     string
		live     *unstructured.Unstructured
		instance *kudov1beta1.Instance
		ours     bool
	}{
		{"another tenant's ConfigMap our inventory names", toUnstructured(t, owned("", "")), record(owned("", "")), false},
		{"another namespace's KUDO object of our name our inventory names", toUnstructured(t, madeByKUDOIn("other")), record(madeByKUDOIn("other")), false},
		{"our KUDO object our inventory names", toUnstructured(t, madeByKUDOIn("ns")), record(madeByKUDOIn("ns")), true},
		{"our KUDO object our inventory does not name", toUnstructured(t, madeByKUDOIn("ns")), instanceA, false},
		{"a cluster-scoped object our inventory names, unmarked", clusterRole(nil), recordedRole, false},
		{"a cluster-scoped object KUDO made for us, recorded", clusterRole(kudoLabels), recordedRole, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClaimOf(tt.live, tt.instance); got.Ours != tt.ours {
				t.Errorf("ClaimOf = %+v, want ours %t", got, tt.ours)
			}
		})
	}
}

func toUnstructured(t *testing.T, obj *corev1.ConfigMap) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	return u
}
