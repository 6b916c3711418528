package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// WatchKind starts the watch of a kind packages apply, for the envtest
// suite (package controllers_test).
func (r *InstanceReconciler) WatchKind(ctx context.Context, gvk schema.GroupVersionKind) error {
	return r.kinds.Watch(ctx, gvk)
}

// OwnerSource is the source that wakes the owners of obj's kind's objects
// when their plans may move, for the envtest suite.
func (r *InstanceReconciler) OwnerSource(obj client.Object) source.Source {
	return r.kinds.ownerSource(obj, mayMovePlan, nil)
}
