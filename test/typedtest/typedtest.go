// Package typedtest makes the objects of a typed API, and forges their
// status as whoever may write it could, for the envtest and end-to-end
// suites.
package typedtest

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Object is a typed object of names with spec.
func Object(names typedapi.Names, ns, name string, spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetGroupVersionKind(names.GroupVersionKind())
	obj.SetNamespace(ns)
	obj.SetName(name)
	return obj
}

// List is an empty list of the typed objects of names.
func List(names typedapi.Names) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(names.GroupVersionKind().GroupVersion().WithKind(names.Kind + "List"))
	return list
}

// WithForgedInventory is a copy of obj whose status lists entry ("v1
// ConfigMap ns/name") among what its first task applied.
func WithForgedInventory(obj *unstructured.Unstructured, entry string) (*unstructured.Unstructured, error) {
	forged := obj.DeepCopy()
	inventory, _, err := unstructured.NestedSlice(forged.Object, "status", "inventory")
	if err != nil {
		return nil, err
	}
	if len(inventory) == 0 {
		return nil, errors.New("status.inventory records nothing")
	}
	first := inventory[0].(map[string]any)
	objects, _ := first["objects"].([]any)
	first["objects"] = append(objects, entry)
	return forged, unstructured.SetNestedSlice(forged.Object, inventory, "status", "inventory")
}
