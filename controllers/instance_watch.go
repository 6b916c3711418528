package controllers

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
)

var errNoController = errors.New("the Instance controller is not set up")

// watch makes changes to objects of a kind wake the Instance that owns them,
// the first time an Instance applies that kind: packages apply kinds known
// only at run time, and a step must finish as soon as its objects are
// healthy, without polling.
func (r *InstanceReconciler) watch(gvk schema.GroupVersionKind) error {
	if r.controller == nil {
		return errNoController
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watched[gvk] {
		return nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := r.controller.Watch(source.Kind[client.Object](r.cache, obj, handler.EnqueueRequestsFromMapFunc(r.ownerOf))); err != nil {
		return err
	}
	r.watched[gvk] = true
	return nil
}

// ownerOf maps an object to its Instance: the controller owner of an
// object the Instance applied; else the Instance its kudo.dev/instance label
// names — in its namespace for the pods of the Instance's workloads, in any
// namespace for a cluster-scoped object, which cannot have a namespaced owner.
func (r *InstanceReconciler) ownerOf(ctx context.Context, obj client.Object) []reconcile.Request {
	if reqs := ownerInstance(ctx, obj); len(reqs) > 0 {
		return reqs
	}
	name := obj.GetLabels()[render.InstanceLabel]
	switch {
	case name == "":
		return nil
	case obj.GetNamespace() != "":
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
	}
	instances := &kudov1beta1.InstanceList{}
	if err := r.List(ctx, instances); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, i := range instances.Items {
		if i.Name == name {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&i)})
		}
	}
	return reqs
}

// ownerInstance maps an object to the Instance that controls it, if any.
func ownerInstance(_ context.Context, obj client.Object) []reconcile.Request {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "Instance" && ref.APIVersion == kudov1beta1.GroupVersion.String() {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
		}
	}
	return nil
}
