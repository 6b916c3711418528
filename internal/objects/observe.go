package objects

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kubescheme "k8s.io/client-go/kubernetes/scheme"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/inventory"
)

// Observe is what the inventory keeps of an object: its generation, which
// changes with its spec, or, for kinds without one (ConfigMaps, Secrets,
// Services, RBAC), a hash of what is not status. It sees the object as the
// cache holds it, trimmed, whether it comes from the cache or from the API
// server's answer: a different value means someone changed it.
func (t Trim) Observe(obj *unstructured.Unstructured) (kudov1beta1.InventoryObject, error) {
	o := kudov1beta1.InventoryObject{ObjectRef: inventory.RefOf(obj)}
	if o.Generation = obj.GetGeneration(); o.Generation > 0 {
		return o, nil
	}
	cached, err := t.asCached(obj)
	if err != nil {
		return o, err
	}
	content := map[string]any{}
	for k, v := range cached.Object {
		if k != "status" && k != "metadata" {
			content[k] = v
		}
	}
	content["labels"], content["annotations"], content["owners"] = cached.GetLabels(), cached.GetAnnotations(), cached.GetOwnerReferences()
	b, err := json.Marshal(content)
	if err != nil {
		return o, err
	}
	sum := sha256.Sum256(b)
	o.Hash = hex.EncodeToString(sum[:8])
	return o, nil
}

// asCached is obj, as the API server answered it, the way the cache holds
// it: what the inventory notes of an object must compare with what the
// cache later shows of it.
func (t Trim) asCached(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	if !kubescheme.Scheme.Recognizes(gvk) {
		trimmed, err := t.ForCache(obj.DeepCopy())
		if err != nil {
			return nil, err
		}
		return trimmed.(*unstructured.Unstructured), nil
	}
	typed, err := kubescheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, fmt.Errorf("converting %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	if _, err := t.ForCache(typed); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, into(u, typed, gvk)
}
