package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// MigratingOperators is an Operator controller, with no memory of a
// migration under way — as after a restart — that migrates page objects a
// step, at once, for the envtest suite.
func MigratingOperators(c client.Client, reader client.Reader, page int64) *OperatorReconciler {
	return &OperatorReconciler{Client: c, APIReader: reader, migrations: storageMigrations{page: page}}
}

// MigrateStorage takes a step of the migration of the kind's stored objects.
func (r *OperatorReconciler) MigrateStorage(ctx context.Context, crd *unstructured.Unstructured, gk schema.GroupKind) (string, error) {
	message, _, err := r.migrateStorage(ctx, crd, gk)
	return message, err
}
