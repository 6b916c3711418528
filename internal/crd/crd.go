// Package crd is what kudo-ng knows of CustomResourceDefinitions, which it
// treats apart: their kind, and the kind one defines.
package crd

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupKind is CustomResourceDefinition's.
var GroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// V1 is the version kudo-ng reads and writes them in.
var V1 = GroupKind.WithVersion("v1")

// Is reports whether obj is a CustomResourceDefinition.
func Is(obj *unstructured.Unstructured) bool { return obj.GroupVersionKind().GroupKind() == GroupKind }

// Defined is what a CustomResourceDefinition defines.
type Defined struct {
	schema.GroupKind
	// Plural is the resource's name; Namespaced is false for a
	// cluster-scoped kind.
	Plural     string
	Namespaced bool
	// Served are the versions it serves.
	Served []string
}

// Resource is the defined kind's resource.
func (d Defined) Resource() schema.GroupResource {
	return schema.GroupResource{Group: d.Group, Resource: d.Plural}
}

// DefinedBy reads what the CustomResourceDefinition obj defines; a field it
// lacks is empty.
func DefinedBy(obj *unstructured.Unstructured) Defined {
	d := Defined{}
	d.Group, _, _ = unstructured.NestedString(obj.Object, "spec", "group")
	d.Kind, _, _ = unstructured.NestedString(obj.Object, "spec", "names", "kind")
	d.Plural, _, _ = unstructured.NestedString(obj.Object, "spec", "names", "plural")
	scope, _, _ := unstructured.NestedString(obj.Object, "spec", "scope")
	d.Namespaced = scope != "Cluster"
	versions, _, _ := unstructured.NestedSlice(obj.Object, "spec", "versions")
	for _, v := range versions {
		version, ok := v.(map[string]any)
		if !ok {
			continue
		}
		name, _, _ := unstructured.NestedString(version, "name")
		served, _, _ := unstructured.NestedBool(version, "served")
		if served {
			d.Served = append(d.Served, name)
		}
	}
	return d
}
