// Package cached waits for the manager's cache to hold what a reconcile
// wrote. The next reconcile, which the watch event of one of its writes can
// queue at once, reads the cache: one that lags would make it write again.
package cached

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// backoff polls often at first, when the watch event is usually close, and
// gives up after about a second: a write by someone else that hides ours
// only costs that much, and wakes the reconcile anew.
var backoff = wait.Backoff{Duration: 2 * time.Millisecond, Factor: 2, Steps: 10}

// Holds tells whether the cached copy of an object, or its absence, shows
// the write.
type Holds func(cached client.Object, found bool) bool

// Await polls r, the manager's cached reader, until holds accepts what it
// returns for obj, or it gives up.
func Await(ctx context.Context, r client.Reader, obj client.Object, holds Holds) error {
	cached := obj.DeepCopyObject().(client.Object)
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		err := r.Get(ctx, client.ObjectKeyFromObject(obj), cached)
		if client.IgnoreNotFound(err) != nil {
			return false, err
		}
		return holds(cached, err == nil), nil
	})
	if wait.Interrupted(err) {
		return nil
	}
	return err
}

// AtVersion holds once the cache has the object at the resource version the
// API server gave it last, or no longer has it.
func AtVersion(obj client.Object) Holds {
	written := obj.GetResourceVersion()
	return func(cached client.Object, found bool) bool {
		return !found || cached.GetResourceVersion() == written
	}
}
