package objects

import (
	"context"
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// catchingUpCache holds, per object name, the applied hashes it answers
// with in turn, "" for not found yet.
type catchingUpCache struct {
	hashes map[string][]string
	gets   map[string]int
}

func (c *catchingUpCache) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	c.gets[key.Name]++
	answers := c.hashes[key.Name]
	hash := answers[min(c.gets[key.Name], len(answers))-1]
	if hash == "" {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	obj.SetAnnotations(map[string]string{kudov1beta1.AppliedHashAnnotation: hash})
	return nil
}

func (c *catchingUpCache) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

func TestWritesAwait(t *testing.T) {
	cache := &catchingUpCache{
		hashes: map[string][]string{
			"created": {"", "", "new"},
			"updated": {"old", "new"},
			"current": {"new"},
		},
		gets: map[string]int{},
	}
	writes := &Writes{}
	for _, name := range []string{"created", "updated", "current"} {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("v1")
		obj.SetKind("ConfigMap")
		obj.SetName(name)
		obj.SetAnnotations(map[string]string{kudov1beta1.AppliedHashAnnotation: "new"})
		writes.add(obj)
	}
	if err := writes.Await(context.Background(), cache); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"created": 3, "updated": 2, "current": 1}
	for name, n := range want {
		if cache.gets[name] != n {
			t.Errorf("read %s %d times from the cache, want %d: until it holds the applied hash", name, cache.gets[name], n)
		}
	}
}
