package objects

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
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
