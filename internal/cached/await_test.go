package cached

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// laggingCache answers NotFound for its first calls, as a cache does before
// the watch event of a create arrives, then the versions it holds in turn.
type laggingCache struct {
	missing  int
	versions []string
	err      error
	gets     int
}

func (c *laggingCache) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	c.gets++
	switch {
	case c.err != nil:
		return c.err
	case c.gets <= c.missing:
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	obj.SetResourceVersion(c.versions[min(c.gets-c.missing, len(c.versions))-1])
	return nil
}

func (c *laggingCache) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not used")
}

func TestAwait(t *testing.T) {
	written := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "config", Namespace: "ns", ResourceVersion: "7"}}
	created := func(c client.Object, found bool) bool { return found && c.GetResourceVersion() == "7" }
	failing := errors.New("cache stopped")
	tests := []struct {
		name     string
		cache    laggingCache
		holds    Holds
		wantGets int
		wantErr  error
	}{
		{"a create arrives after two polls", laggingCache{missing: 2, versions: []string{"7"}}, created, 3, nil},
		{"an older version, then the write", laggingCache{versions: []string{"6", "6", "7"}}, AtVersion(written), 3, nil},
		{"deleted since the write", laggingCache{missing: 100}, AtVersion(written), 1, nil},
		{"the cache fails", laggingCache{err: failing}, AtVersion(written), 1, failing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Await(context.Background(), &tt.cache, written, tt.holds)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Await() = %v, want %v", err, tt.wantErr)
			}
			if tt.cache.gets != tt.wantGets {
				t.Errorf("Await() read the cache %d times, want %d", tt.cache.gets, tt.wantGets)
			}
		})
	}
}

// A write someone else's hides is given up on when the context ends, without an error:
// that write wakes the reconcile anew.
func TestAwaitGivesUp(t *testing.T) {
	cache := &laggingCache{versions: []string{"8"}}
	written := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "config", Namespace: "ns", ResourceVersion: "7"}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := Await(ctx, cache, written, AtVersion(written)); err != nil {
		t.Errorf("Await() = %v, want nil", err)
	}
	if cache.gets < 2 {
		t.Errorf("Await() read the cache %d times, want it to poll", cache.gets)
	}
}
