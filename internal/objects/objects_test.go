package objects

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func configMap(data string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings", "namespace": "ns"},
		"data": map[string]any{"mode": data},
	}}
}

func TestApplyWritesOnlyWhatChangedSinceItLastApplied(t *testing.T) {
	ctx := context.Background()
	writes := &Writes{}
	m := NewManager(fake.NewClientBuilder().WithScheme(scheme.Scheme).Build(), nil, nil, writes)
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

func labelled(instance string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "ns", Labels: map[string]string{kudov1beta1.InstanceLabel: instance}}}
}

// TestApplyRefusesAnotherInstancesObject: two Instances whose packages
// render the same cluster-scoped name do not take each other's object.
func TestApplyRefusesAnotherInstancesObject(t *testing.T) {
	ctx := context.Background()
	m := NewManager(fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(owned("ns/b", "")).Build(), nil, nil, &Writes{})
	ours := configMap("fast")
	ours.SetAnnotations(map[string]string{kudov1beta1.OwnerAnnotation: "ns/a"})
	_, err := m.Apply(ctx, ours)
	if err == nil || err.Error() != "ConfigMap settings is Instance ns/b's: two Instances render it; uninstall one, or rename it in one's package" {
		t.Fatalf("Apply: %v", err)
	}
	unclaimed := NewManager(fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(owned("", "")).Build(), nil, nil, &Writes{})
	if _, err := unclaimed.Apply(ctx, ours); err != nil {
		t.Fatalf("Apply over an object no Instance claims: %v", err)
	}
}

func TestDelete(t *testing.T) {
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "ns",
		Annotations: map[string]string{kudov1beta1.PruneAnnotation: kudov1beta1.Disabled}}}
	ref := kudov1beta1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "settings"}
	tests := []struct {
		name    string
		objs    []client.Object
		opts    DeleteOptions
		want    Action
		remains bool
	}{
		{"an object annotated kudo.dev/prune: disabled is kept when guarded", []client.Object{kept}, DeleteOptions{Guarded: true}, KeptByAnnotation, true},
		{"a Delete task's object goes, annotated or not", []client.Object{kept}, DeleteOptions{}, Deleting, false},
		{"an object already gone", nil, DeleteOptions{Guarded: true}, Gone, false},
		{"another Instance's object is kept", []client.Object{owned("ns/b", "")}, DeleteOptions{Guarded: true, Owner: instanceA}, KeptNotOurs, true},
		{"our object goes", []client.Object{owned("ns/a", "")}, DeleteOptions{Guarded: true, Owner: instanceA}, Deleting, false},
		{"an object whose controller is another Instance is kept",
			[]client.Object{owned("", "uid-b")}, DeleteOptions{Guarded: true, Owner: instanceA}, KeptNotOurs, true},
		{"an object of ours by owner reference goes", []client.Object{owned("", "uid-a")}, DeleteOptions{Guarded: true, Owner: instanceA}, Deleting, false},
		{"an object from before owners were recorded goes by its instance label",
			[]client.Object{labelled("a")}, DeleteOptions{Guarded: true, Owner: instanceA}, Deleting, false},
		{"an object from before owners were recorded, labelled another's, is kept",
			[]client.Object{labelled("b")}, DeleteOptions{Guarded: true, Owner: instanceA}, KeptNotOurs, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tt.objs...).Build()
			got, err := NewManager(c, c, nil, nil).Delete(ctx, ref, tt.opts)
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
