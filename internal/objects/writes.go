package objects

import (
	"context"
	"sync"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/internal/cached"
)

// Writes are the objects the tasks of a reconcile wrote. The controller
// waits for them in its cache before the Instance reconciles again: the
// watch event of one it changed (a new spec) can wake the next reconcile
// before the cache holds the others, which it would then write again.
type Writes struct {
	mu   sync.Mutex
	objs []*unstructured.Unstructured
}

func (w *Writes) add(obj *unstructured.Unstructured) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.objs = append(w.objs, obj)
}

// Await waits until r, the manager's cached reader, holds each written
// object with the hash kudo-ng applied: what the next pass compares to
// decide whether to apply it again.
func (w *Writes) Await(ctx context.Context, r client.Reader) error {
	for _, obj := range w.objs {
		hash := obj.GetAnnotations()[kudov1beta1.AppliedHashAnnotation]
		err := cached.Await(ctx, r, obj, func(c client.Object, found bool) bool {
			return found && c.GetAnnotations()[kudov1beta1.AppliedHashAnnotation] == hash
		})
		if err != nil {
			return err
		}
	}
	return nil
}
