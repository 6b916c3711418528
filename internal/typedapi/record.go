package typedapi

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// The engine's record of an Instance that runs a typed object — its plans,
// conditions, inventory, revisions: the Instance's status — lives in the
// object's status, not the Instance's: one status, written once per change,
// where users and tools look (docs/typed-apis.md). The record's generations
// are the Instance's, but for observedGeneration and the conditions', which
// are the object's, as kstatus and kubectl wait read them; the Instance's
// are kept under InstanceField.
const (
	// InstanceField of a typed object's status ties the record to the
	// Instance it is of (its uid) and keeps the generation of the Instance
	// its status observed.
	InstanceField = "instance"
	// StatusOperatorVersionField of a typed object's status is the
	// OperatorVersion its Instance runs (a printer column).
	StatusOperatorVersionField = "operatorVersion"
)

// HolderOf is the typed object whose status holds the record of the
// Instance, as a key (its kind, namespace and name) and its uid: the
// Instance's controller, of the Instance's name, of a kind not kudo.dev's;
// nil for an Instance that holds its own. Whether the kind is a typed API
// is the caller's to check before it reads the object.
func HolderOf(i *kudov1beta1.Instance) *unstructured.Unstructured {
	ref := metav1.GetControllerOf(i)
	if ref == nil || ref.Name != i.Name {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group == kudov1beta1.GroupVersion.Group {
		return nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gv.WithKind(ref.Kind))
	obj.SetNamespace(i.Namespace)
	obj.SetName(i.Name)
	obj.SetUID(ref.UID)
	return obj
}

// HolderAt is HolderOf at the API version ov serves: where the values of
// ov's parameters are written.
func HolderAt(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) *unstructured.Unstructured {
	obj := HolderOf(i)
	if obj != nil {
		gvk := obj.GroupVersionKind()
		gvk.Version = APIVersionOf(ov)
		obj.SetGroupVersionKind(gvk)
	}
	return obj
}

// instanceRecord is what InstanceField holds.
type instanceRecord struct {
	UID                types.UID `json:"uid"`
	ObservedGeneration int64     `json:"observedGeneration,omitempty"`
}

// StatusOf is the status of the typed object holder that records the
// status of i. The object's status observes its generation once i was
// applied from it (TypedGenerationAnnotation) and i's status observes i's;
// until then, the generation it observed before.
func StatusOf(i *kudov1beta1.Instance, holder *unstructured.Unstructured) (map[string]any, error) {
	status, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&i.Status)
	if err != nil {
		return nil, err
	}
	observed, _, _ := unstructured.NestedInt64(holder.Object, "status", "observedGeneration")
	if i.Annotations[kudov1beta1.TypedGenerationAnnotation] == strconv.FormatInt(holder.GetGeneration(), 10) &&
		i.Status.ObservedGeneration == i.Generation {
		observed = holder.GetGeneration()
	}
	delete(status, "observedGeneration")
	if observed > 0 {
		status["observedGeneration"] = observed
	}
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok {
			delete(c, "observedGeneration")
			if observed > 0 {
				c["observedGeneration"] = observed
			}
		}
	}
	if name := i.Spec.OperatorVersion.Name; name != "" {
		status[StatusOperatorVersionField] = name
	}
	status[InstanceField], err = runtime.DefaultUnstructuredConverter.ToUnstructured(
		&instanceRecord{UID: i.UID, ObservedGeneration: i.Status.ObservedGeneration})
	return status, err
}

// RecordOf is the status of i that the status of its typed object holder
// records; false when it records none of i's (a new Instance's, or one made
// again under a new uid, starts afresh).
func RecordOf(i *kudov1beta1.Instance, holder *unstructured.Unstructured) (kudov1beta1.InstanceStatus, bool, error) {
	var s kudov1beta1.InstanceStatus
	status, _, _ := unstructured.NestedMap(holder.Object, "status")
	var record instanceRecord
	if raw, ok := status[InstanceField].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &record); err != nil {
			return s, false, fmt.Errorf("status.%s of %s %s: %w", InstanceField, holder.GetKind(), holder.GetName(), err)
		}
	}
	if record.UID == "" || record.UID != i.UID {
		return s, false, nil
	}
	delete(status, InstanceField)
	delete(status, StatusOperatorVersionField)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(status, &s); err != nil {
		return s, false, fmt.Errorf("the status of %s %s: %w", holder.GetKind(), holder.GetName(), err)
	}
	s.ObservedGeneration = record.ObservedGeneration
	for c := range s.Conditions {
		s.Conditions[c].ObservedGeneration = record.ObservedGeneration
	}
	return s, true, nil
}

// ReadRecord reads the record of i from its typed object, when it has one
// and served is nil or serves its kind, into i's status, and returns the
// object; nil when i holds its own record, or its object is gone (a cleanup
// after it then starts from the Instance's own status). An object that
// holds none of i's records yet leaves i's status as it is.
func ReadRecord(ctx context.Context, r client.Reader, i *kudov1beta1.Instance,
	served func(context.Context, schema.GroupVersionKind) bool) (*unstructured.Unstructured, error) {
	holder := HolderOf(i)
	if holder == nil || served != nil && !served(ctx, holder.GroupVersionKind()) {
		return nil, nil
	}
	uid := holder.GetUID()
	if err := r.Get(ctx, client.ObjectKeyFromObject(holder), holder); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if holder.GetUID() != uid {
		return nil, nil
	}
	status, ok, err := RecordOf(i, holder)
	if err != nil {
		return nil, err
	}
	if ok {
		i.Status = status
	}
	return holder, nil
}
