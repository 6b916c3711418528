package controllers

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kudo-ng/kudo/internal/render"
)

var stripManagedFields = cache.TransformStripManagedFields()

// TrimForCache is the manager cache's transform: it keeps of each object what
// the plans read, so that the objects of a thousand Instances take a fraction
// of the memory. Nothing reads managed fields; nothing reads a cached pod's
// spec (health reads its status, a Pipe task its name) nor a workload's pod
// template (health reads replicas, selector and status; the apply hash
// annotation says whether the template changed). Read such fields with an
// uncached reader.
func TrimForCache(in any) (any, error) {
	out, err := stripManagedFields(in)
	obj, ok := out.(*unstructured.Unstructured)
	if err != nil || !ok {
		return out, err
	}
	gk := obj.GroupVersionKind().GroupKind()
	if gk == (schema.GroupKind{Kind: "Pod"}) {
		unstructured.RemoveNestedField(obj.Object, "spec")
	} else if path, found := render.PodTemplatePath(gk); found {
		unstructured.RemoveNestedField(obj.Object, path...)
	}
	return obj, nil
}
