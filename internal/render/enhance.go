package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Labels and annotations KUDO puts on the objects it applies.
const (
	HeritageLabel              = "heritage"
	OperatorLabel              = "kudo.dev/operator"
	InstanceLabel              = "kudo.dev/instance"
	PlanAnnotation             = "kudo.dev/plan"
	PhaseAnnotation            = "kudo.dev/phase"
	StepAnnotation             = "kudo.dev/step"
	OperatorVersionAnnotation  = "kudo.dev/operator-version"
	PlanUIDAnnotation          = "kudo.dev/last-plan-execution-uid"
	DependenciesHashAnnotation = "kudo.dev/dependencies-hash"
	// SkipHashAnnotation on a ConfigMap or Secret keeps it out of the
	// dependency hash, so changing it does not restart the pods that mount it.
	SkipHashAnnotation = "kudo.dev/skip-hash-calculation"
)

// Metadata is what KUDO records on every object it applies.
type Metadata struct {
	InstanceName    string
	Namespace       string
	OperatorName    string
	OperatorVersion string
	PlanName        string
	PhaseName       string
	StepName        string
	PlanUID         types.UID
	// Owner, the Instance, becomes the controller owner of namespaced objects;
	// nil leaves owner references alone (an offline preview).
	Owner *metav1.OwnerReference
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
// namespace and owner on namespaced objects, labels and annotations on every
// object, the labels on pod templates and volumeClaimTemplates, and the
// dependency hash on pod templates.
//
// Pod templates and volumeClaimTemplates get the labels but not the plan
// annotations: those change with every plan run and would restart every pod
// each time (and volumeClaimTemplates cannot be changed at all).
func Enhance(objs []*unstructured.Unstructured, md *Metadata, scope Scope, deps Dependencies) error {
	labels := map[string]string{
		HeritageLabel: "kudo",
		OperatorLabel: md.OperatorName,
		InstanceLabel: md.InstanceName,
	}
	annotations := map[string]string{
		PlanAnnotation:            md.PlanName,
		PhaseAnnotation:           md.PhaseName,
		StepAnnotation:            md.StepName,
		OperatorVersionAnnotation: md.OperatorVersion,
		PlanUIDAnnotation:         string(md.PlanUID),
	}
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		namespaced, err := scope(gvk)
		if err != nil {
			return fmt.Errorf("%s %q: %w", gvk.Kind, obj.GetName(), err)
		}
		if namespaced {
			obj.SetNamespace(md.Namespace)
			if md.Owner != nil {
				setController(obj, *md.Owner)
			}
		}
		obj.SetLabels(merge(obj.GetLabels(), labels))
		obj.SetAnnotations(merge(obj.GetAnnotations(), annotations))

		for _, path := range podTemplatePaths[gvk.GroupKind()] {
			if err := mergeNested(obj, labels, append(path, "metadata", "labels")...); err != nil {
				return err
			}
		}
		if gvk.GroupKind() == (schema.GroupKind{Group: "apps", Kind: "StatefulSet"}) {
			if err := labelClaimTemplates(obj, labels); err != nil {
				return err
			}
		}
		if err := hashDependencies(obj, objs, md.Namespace, deps); err != nil {
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

// hashDependencies sets the dependency hash on obj's pod template: a hash of
// the ConfigMaps and Secrets it mounts or reads environment from, so that a
// changed configuration changes the template and rolls the pods.
func hashDependencies(obj *unstructured.Unstructured, rendered []*unstructured.Unstructured, namespace string, deps Dependencies) error {
	paths := podTemplatePaths[obj.GroupVersionKind().GroupKind()]
	if len(paths) == 0 {
		return nil
	}
	templatePath := paths[len(paths)-1]
	podSpec, found, err := unstructured.NestedMap(obj.Object, append(templatePath, "spec")...)
	if err != nil || !found {
		return err
	}
	var parts []dependency
	for _, ref := range dependencyRefs(podSpec) {
		dep, found, err := findDependency(ref, rendered, namespace, deps)
		if err != nil {
			return fmt.Errorf("%s %q: reading %s %q: %w", obj.GetKind(), obj.GetName(), ref.kind, ref.name, err)
		}
		if !found || dep.GetAnnotations()[SkipHashAnnotation] != "" {
			continue
		}
		parts = append(parts, dependency{
			Kind: ref.kind, Name: ref.name,
			Data: dep.Object["data"], BinaryData: dep.Object["binaryData"], StringData: dep.Object["stringData"],
		})
	}
	if len(parts) == 0 {
		return nil
	}
	// encoding/json sorts map keys, so equal data hashes equally.
	b, err := json.Marshal(parts)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	path := append(templatePath, "metadata", "annotations")
	existing, _, err := unstructured.NestedStringMap(obj.Object, path...)
	if err != nil {
		return fmt.Errorf("%s %q: %w", obj.GetKind(), obj.GetName(), err)
	}
	return unstructured.SetNestedStringMap(obj.Object,
		merge(existing, map[string]string{DependenciesHashAnnotation: hex.EncodeToString(sum[:])}), path...)
}

type dependency struct {
	Kind       string
	Name       string
	Data       any `json:",omitempty"`
	BinaryData any `json:",omitempty"`
	StringData any `json:",omitempty"`
}

type dependencyRef struct{ kind, name string }

// dependencyRefs lists, sorted and once each, the ConfigMaps and Secrets a pod
// spec uses: volumes (also projected), envFrom and env valueFrom of every
// container and init container.
func dependencyRefs(podSpec map[string]any) []dependencyRef {
	seen := map[dependencyRef]bool{}
	add := func(kind string, m map[string]any, fields ...string) {
		if name, _, _ := unstructured.NestedString(m, fields...); name != "" {
			seen[dependencyRef{kind, name}] = true
		}
	}
	volumes, _, _ := unstructured.NestedSlice(podSpec, "volumes")
	for _, v := range maps(volumes) {
		add("ConfigMap", v, "configMap", "name")
		add("Secret", v, "secret", "secretName")
		sources, _, _ := unstructured.NestedSlice(v, "projected", "sources")
		for _, s := range maps(sources) {
			add("ConfigMap", s, "configMap", "name")
			add("Secret", s, "secret", "name")
		}
	}
	for _, field := range []string{"initContainers", "containers"} {
		containers, _, _ := unstructured.NestedSlice(podSpec, field)
		for _, c := range maps(containers) {
			envFrom, _, _ := unstructured.NestedSlice(c, "envFrom")
			for _, e := range maps(envFrom) {
				add("ConfigMap", e, "configMapRef", "name")
				add("Secret", e, "secretRef", "name")
			}
			env, _, _ := unstructured.NestedSlice(c, "env")
			for _, e := range maps(env) {
				add("ConfigMap", e, "valueFrom", "configMapKeyRef", "name")
				add("Secret", e, "valueFrom", "secretKeyRef", "name")
			}
		}
	}
	refs := make([]dependencyRef, 0, len(seen))
	for r := range seen {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].kind != refs[j].kind {
			return refs[i].kind < refs[j].kind
		}
		return refs[i].name < refs[j].name
	})
	return refs
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

func findDependency(
	ref dependencyRef, rendered []*unstructured.Unstructured, namespace string, deps Dependencies,
) (*unstructured.Unstructured, bool, error) {
	for _, obj := range rendered {
		if obj.GetKind() == ref.kind && obj.GroupVersionKind().Group == "" && obj.GetName() == ref.name {
			return obj, true, nil
		}
	}
	if deps == nil {
		return nil, false, nil
	}
	return deps(ref.kind, namespace, ref.name)
}
