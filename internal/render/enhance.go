package render

import (
	"fmt"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Metadata is what KUDO records on every object it applies.
type Metadata struct {
	InstanceName string
	Namespace    string
	OperatorName string
	// OperatorVersion is the OperatorVersion's spec.version (not its name),
	// which KUDO records on pod templates.
	OperatorVersion string
	PlanName        string
	PhaseName       string
	StepName        string
	PlanUID         types.UID
	// Shard, when set, labels every object and pod template with the
	// Instance's shard (Site.Shard).
	Shard string
	// Owner, the Instance, becomes the controller owner of namespaced objects;
	// nil leaves owner references alone (an offline preview).
	Owner *metav1.OwnerReference
	// Remote: the objects live in another cluster than the Instance, where
	// an owner reference to it would have their garbage collector delete
	// them at once. Each is marked kudo.dev/owner instead.
	Remote bool
}

// Scope tells whether a kind is namespaced; from the REST mapper in the
// controller, from BuiltinScope offline.
type Scope func(gvk schema.GroupVersionKind) (namespaced bool, err error)

// Dependencies finds a ConfigMap or Secret that a pod template mounts but the
// task does not render, in the cluster. found is false when it does not exist.
type Dependencies func(kind, namespace, name string) (obj *unstructured.Unstructured, found bool, err error)

// PodTemplatePath is where a workload of kind gk keeps its pod template
// (for a CronJob, the job template around it); found is false for other kinds.
func PodTemplatePath(gk schema.GroupKind) (path []string, found bool) {
	paths, found := podTemplatePaths[gk]
	if !found {
		return nil, false
	}
	return paths[0], true
}

// podTemplatePaths are where workloads keep their pod templates.
var podTemplatePaths = map[schema.GroupKind][][]string{
	{Group: "apps", Kind: "Deployment"}:  {{"spec", "template"}},
	{Group: "apps", Kind: "StatefulSet"}: {{"spec", "template"}},
	{Group: "apps", Kind: "DaemonSet"}:   {{"spec", "template"}},
	{Group: "apps", Kind: "ReplicaSet"}:  {{"spec", "template"}},
	{Kind: "ReplicationController"}:      {{"spec", "template"}},
	{Group: "batch", Kind: "Job"}:        {{"spec", "template"}},
	{Group: "batch", Kind: "CronJob"}:    {{"spec", "jobTemplate"}, {"spec", "jobTemplate", "spec", "template"}},
}

// Enhance adds KUDO's metadata to objects rendered by one task: the
// namespace and owner on namespaced objects (kudo.dev/owner on those no
// owner reference can name it on), labels and the plan annotations on every
// object (and the Instance's shard), the labels on pod templates and
// volumeClaimTemplates, and
// the operator version and dependency hash on pod templates, as KUDO's
// enhancer did.
//
// Pod templates and volumeClaimTemplates get no plan annotations: those
// change with every plan run and would restart every pod each time (and
// volumeClaimTemplates cannot be changed at all).
func Enhance(objs []*unstructured.Unstructured, md *Metadata, scope Scope, deps Dependencies) error {
	labels := map[string]string{
		kudov1beta1.HeritageLabel: "kudo",
		kudov1beta1.OperatorLabel: md.OperatorName,
		kudov1beta1.InstanceLabel: md.InstanceName,
	}
	// The shard marks the objects only: on a pod template a new shard would
	// restart the pods, and volumeClaimTemplates cannot change.
	objectLabels := labels
	if md.Shard != "" {
		objectLabels = merge(labels, map[string]string{kudov1beta1.ShardLabel: md.Shard})
	}
	annotations := map[string]string{
		kudov1beta1.PlanAnnotation:    md.PlanName,
		kudov1beta1.PhaseAnnotation:   md.PhaseName,
		kudov1beta1.StepAnnotation:    md.StepName,
		kudov1beta1.PlanUIDAnnotation: string(md.PlanUID),
	}
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		namespaced, err := scope(gvk)
		if err != nil {
			return fmt.Errorf("%s %q: %w", gvk.Kind, obj.GetName(), err)
		}
		home := false
		if target := obj.GetAnnotations()[kudov1beta1.NamespaceAnnotation]; namespaced && target != "" && target != md.Namespace {
			obj.SetNamespace(target)
		} else if namespaced {
			home = !md.Remote
			obj.SetNamespace(md.Namespace)
			if md.Owner != nil && home {
				setController(obj, *md.Owner)
			}
		}
		obj.SetLabels(merge(obj.GetLabels(), objectLabels))
		obj.SetAnnotations(merge(obj.GetAnnotations(), annotations))
		if !home {
			obj.SetAnnotations(merge(obj.GetAnnotations(), map[string]string{kudov1beta1.OwnerAnnotation: md.Namespace + "/" + md.InstanceName}))
		}

		paths := podTemplatePaths[gvk.GroupKind()]
		for _, path := range paths {
			if err := mergeNested(obj, labels, append(path, "metadata", "labels")...); err != nil {
				return err
			}
		}
		if len(paths) > 0 {
			podTemplate := append(paths[len(paths)-1], "metadata", "annotations")
			if err := mergeNested(obj, map[string]string{kudov1beta1.OperatorVersionAnnotation: md.OperatorVersion}, podTemplate...); err != nil {
				return err
			}
		}
		if gvk.GroupKind() == (schema.GroupKind{Group: "apps", Kind: "StatefulSet"}) {
			if err := labelClaimTemplates(obj, labels); err != nil {
				return err
			}
		}
	}
	// Dependencies are hashed as the task applies them, labels included.
	hasher := newDependencyHasher(objs, deps)
	for _, obj := range objs {
		if err := hashDependencies(obj, hasher); err != nil {
			return err
		}
	}
	return nil
}

func merge(existing, add map[string]string) map[string]string {
	out := make(map[string]string, len(existing)+len(add))
	for k, v := range existing {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

func mergeNested(obj *unstructured.Unstructured, add map[string]string, path ...string) error {
	if _, found, err := unstructured.NestedFieldNoCopy(obj.Object, path[:len(path)-2]...); err != nil || !found {
		return err
	}
	existing, _, err := unstructured.NestedStringMap(obj.Object, path...)
	if err != nil {
		return fmt.Errorf("%s %q: %w", obj.GetKind(), obj.GetName(), err)
	}
	return unstructured.SetNestedStringMap(obj.Object, merge(existing, add), path...)
}

func labelClaimTemplates(obj *unstructured.Unstructured, labels map[string]string) error {
	claims, found, err := unstructured.NestedSlice(obj.Object, "spec", "volumeClaimTemplates")
	if err != nil || !found {
		return err
	}
	for i, c := range claims {
		claim, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("%s %q: spec.volumeClaimTemplates[%d] is not an object", obj.GetKind(), obj.GetName(), i)
		}
		existing, _, err := unstructured.NestedStringMap(claim, "metadata", "labels")
		if err != nil {
			return fmt.Errorf("%s %q: spec.volumeClaimTemplates[%d]: %w", obj.GetKind(), obj.GetName(), i, err)
		}
		if err := unstructured.SetNestedStringMap(claim, merge(existing, labels), "metadata", "labels"); err != nil {
			return err
		}
	}
	return unstructured.SetNestedSlice(obj.Object, claims, "spec", "volumeClaimTemplates")
}

func setController(obj *unstructured.Unstructured, owner metav1.OwnerReference) {
	owner.Controller = ptr.To(true)
	owner.BlockOwnerDeletion = ptr.To(true)
	refs := obj.GetOwnerReferences()
	for i := range refs {
		if refs[i].UID == owner.UID {
			refs[i] = owner
			obj.SetOwnerReferences(refs)
			return
		}
	}
	obj.SetOwnerReferences(append(refs, owner))
}

// hashDependencies sets the dependency hash on obj's pod template, so that
// a changed ConfigMap or Secret that it mounts changes the template and rolls
// the pods.
func hashDependencies(obj *unstructured.Unstructured, hasher *dependencyHasher) error {
	paths := podTemplatePaths[obj.GroupVersionKind().GroupKind()]
	if len(paths) == 0 {
		return nil
	}
	templatePath := paths[len(paths)-1]
	podTemplate, found, err := unstructured.NestedMap(obj.Object, templatePath...)
	if err != nil || !found {
		return err
	}
	hash, found, err := hasher.hash(podTemplate, obj.GetNamespace())
	if err != nil {
		return fmt.Errorf("%s %q: %w", obj.GetKind(), obj.GetName(), err)
	}
	if !found {
		return nil
	}
	annotations := append(templatePath, "metadata", "annotations")
	return mergeNested(obj, map[string]string{kudov1beta1.DependenciesHashAnnotation: hash}, annotations...)
}

func maps(list []any) []map[string]any {
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
