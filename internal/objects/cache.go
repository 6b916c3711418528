package objects

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
)

var stripManagedFields = cache.TransformStripManagedFields()

// Trim is how the manager's cache trims objects, which what the inventory
// notes of an object (Observe) must see alike. DigestKey keys the digests
// of Secrets' data: the inventory's hash of a Secret, which whoever reads
// the Instance sees, is made from the digest, and keyed it cannot be tried
// against guesses of a weak value. A new key makes every Secret the
// inventory holds look changed once, and drift correction applies it again.
type Trim struct {
	DigestKey []byte
}

// ForCache is the manager cache's transform: it keeps of each object what
// the plans read, so that the objects of a thousand Instances take a fraction
// of the memory. Nothing reads managed fields; nothing reads a cached pod's
// spec (health reads its status, a Pipe task its name) nor a workload's pod
// template (health reads replicas, selector and status; the apply hash
// annotation says whether the template changed). A Secret's data becomes a
// digest of it: enough to see that it changed, and the manager's memory
// holds no Secret's content. Read such fields with an uncached reader.
// What many objects' metadata repeat is held once (internMetadata).
func (t Trim) ForCache(in any) (any, error) {
	out, err := stripManagedFields(in)
	if err != nil {
		return out, err
	}
	// Kinds without a Go type are few, and their metadata maps of any.
	if _, isUnstructured := out.(*unstructured.Unstructured); !isUnstructured {
		if obj, ok := out.(metav1.Object); ok {
			internMetadata(obj)
		}
	}
	switch obj := out.(type) {
	case *unstructured.Unstructured:
		t.unstructured(obj)
	case *corev1.Secret:
		obj.Data, obj.StringData = t.secretDigest(obj.Data), nil
	case *corev1.Pod:
		obj.Spec = corev1.PodSpec{}
		if madeByWorkload(obj) {
			obj.Status = problemStatus(obj.Status)
		}
	case *appsv1.Deployment:
		obj.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.StatefulSet:
		obj.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.DaemonSet:
		obj.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.ReplicaSet:
		obj.Spec.Template = corev1.PodTemplateSpec{}
	case *corev1.ReplicationController:
		obj.Spec.Template = nil
	case *batchv1.Job:
		obj.Spec.Template = corev1.PodTemplateSpec{}
	case *batchv1.CronJob:
		obj.Spec.JobTemplate = batchv1.JobTemplateSpec{}
	case *kudov1beta1.Instance:
		internInstance(obj)
	}
	return out, nil
}

// madeByWorkload says whether a pod is one a workload's controller made,
// not one a task applied (or KUDO did, before a takeover): those carry no
// applied hash and have a controller, not an Instance.
func madeByWorkload(pod *corev1.Pod) bool {
	owner := metav1.GetControllerOfNoCopy(pod)
	return owner != nil && owner.Kind != "Instance" && pod.Annotations[kudov1beta1.AppliedHashAnnotation] == ""
}

// problemStatus is what the cache keeps of a workload's pod's status, which
// the manager reads only to say why its workload is not ready
// (health.PodProblem): its containers' names and their waiting or
// terminated state: 1,970 bytes a cached pod instead of 3,430
// (BenchmarkCachedWorkloadPod), 10,000 pods at 10,000 Instances. A pod a
// task applied keeps its status: its health and its health rules read it.
func problemStatus(status corev1.PodStatus) corev1.PodStatus {
	return corev1.PodStatus{
		InitContainerStatuses: containerStates(status.InitContainerStatuses),
		ContainerStatuses:     containerStates(status.ContainerStatuses),
	}
}

func containerStates(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(statuses) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(statuses))
	for i, s := range statuses {
		out[i] = corev1.ContainerStatus{Name: intern(s.Name),
			State: corev1.ContainerState{Waiting: s.State.Waiting, Terminated: s.State.Terminated}}
	}
	return out
}

// internMetadata makes the strings that the metadata of many cached
// objects repeat one copy each: decoded from a watch, every object holds its
// own copy of its namespace, of its labels' and annotations' keys, of the
// plan, phase, step and plan run KUDO's annotations name, and of its owner's
// reference — of all 60,000 objects of 10,000 Instances, their metadata took
// a third of the manager's heap (docs/benchmarks.md). unique drops a string
// no object holds any more. A name, UID or hash, each object's own, stays as
// decoded: interning it would only add the table's entry.
func internMetadata(obj metav1.Object) {
	obj.SetNamespace(intern(obj.GetNamespace()))
	obj.SetLabels(internAll(obj.GetLabels()))
	obj.SetAnnotations(internStrings(obj.GetAnnotations(), sharedAnnotationValue))
	refs := obj.GetOwnerReferences()
	for i := range refs {
		refs[i].APIVersion, refs[i].Kind = intern(refs[i].APIVersion), intern(refs[i].Kind)
		refs[i].Name, refs[i].UID = intern(refs[i].Name), types.UID(intern(string(refs[i].UID)))
	}
}

// internInstance makes one copy each of what the spec and status of many
// Instances repeat, and of what one Instance's status repeats: the names of
// its plans, phases, steps and tasks, their statuses, its plan runs' UIDs,
// its conditions, its OperatorVersion and its parameters' names and values.
// A cached Instance of the scale package took 6,230 bytes, four ConfigMaps'
// worth, and at 10,000 the Instances were the largest kind the manager held
// (BenchmarkCachedInstance). Nothing is dropped: the status the manager
// writes is computed from the cached one.
func internInstance(i *kudov1beta1.Instance) {
	i.Finalizers = internSlice(i.Finalizers)
	ov := &i.Spec.OperatorVersion
	ov.Kind, ov.Namespace, ov.Name, ov.APIVersion = intern(ov.Kind), intern(ov.Namespace), intern(ov.Name), intern(ov.APIVersion)
	i.Spec.Parameters = internAll(i.Spec.Parameters)
	if pe := i.Spec.PlanExecution; pe.PlanName != "" {
		i.Spec.PlanExecution.PlanName, i.Spec.PlanExecution.UID = intern(pe.PlanName), internUID(pe.UID)
	}

	status := &i.Status
	status.PlanStatus = internPlans(status.PlanStatus)
	if a := status.ActivePlan; a != nil {
		a.Name, a.Status = intern(a.Name), internStatus(a.Status)
	}
	status.AppliedOperatorVersion = intern(status.AppliedOperatorVersion)
	status.AppliedOperatorVersionDigest = intern(status.AppliedOperatorVersionDigest)
	status.AppliedParameters = internAll(status.AppliedParameters)
	for t := range status.Inventory {
		task := &status.Inventory[t]
		task.Task, task.Plan, task.Phase, task.Step = intern(task.Task), intern(task.Plan), intern(task.Phase), intern(task.Step)
		task.PlanUID = internUID(task.PlanUID)
	}
	for r := range status.Revisions {
		rev := &status.Revisions[r]
		rev.Plan, rev.UID, rev.Status = intern(rev.Plan), internUID(rev.UID), internStatus(rev.Status)
		rev.OperatorVersion = intern(rev.OperatorVersion)
		rev.Parameters, rev.ChangedParameters = internAll(rev.Parameters), internAll(rev.ChangedParameters)
		rev.UnsetParameters = internSlice(rev.UnsetParameters)
	}
	for c := range status.Conditions {
		cond := &status.Conditions[c]
		cond.Type, cond.Status = intern(cond.Type), metav1.ConditionStatus(intern(string(cond.Status)))
		cond.Reason, cond.Message = intern(cond.Reason), intern(cond.Message)
	}
}

// internPlans is plans, their phases' and steps' names, statuses and
// messages interned, in a map of its own: a key cannot be replaced in place.
func internPlans(plans map[string]kudov1beta1.PlanStatus) map[string]kudov1beta1.PlanStatus {
	if plans == nil {
		return nil
	}
	out := make(map[string]kudov1beta1.PlanStatus, len(plans))
	for name, plan := range plans {
		plan.Name, plan.Status, plan.Message, plan.UID = intern(plan.Name), internStatus(plan.Status), intern(plan.Message), internUID(plan.UID)
		for p := range plan.Phases {
			phase := &plan.Phases[p]
			phase.Name, phase.Status, phase.Message = intern(phase.Name), internStatus(phase.Status), intern(phase.Message)
			for s := range phase.Steps {
				step := &phase.Steps[s]
				step.Name, step.Status, step.Message = intern(step.Name), internStatus(step.Status), intern(step.Message)
			}
		}
		out[intern(name)] = plan
	}
	return out
}

func internAll(m map[string]string) map[string]string {
	return internStrings(m, func(string) bool { return true })
}

func internSlice(s []string) []string {
	for i := range s {
		s[i] = intern(s[i])
	}
	return s
}

func internStatus(s kudov1beta1.ExecutionStatus) kudov1beta1.ExecutionStatus {
	return kudov1beta1.ExecutionStatus(intern(string(s)))
}

func internUID(uid types.UID) types.UID { return types.UID(intern(string(uid))) }

// sharedAnnotationValue says whether the value of annotation key is one
// that the objects of a plan, or of an Instance, share.
func sharedAnnotationValue(key string) bool {
	switch key {
	case kudov1beta1.PlanAnnotation, kudov1beta1.PhaseAnnotation, kudov1beta1.StepAnnotation,
		kudov1beta1.PlanUIDAnnotation, kudov1beta1.OperatorVersionAnnotation, kudov1beta1.OwnerAnnotation:
		return true
	}
	return false
}

// internStrings interns m's keys, and the values of the keys internValue
// names, in a map of its own: a key cannot be replaced in place.
func internStrings(m map[string]string, internValue func(key string) bool) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if internValue(k) {
			v = intern(v)
		}
		out[intern(k)] = v
	}
	return out
}

func intern(s string) string { return unique.Make(s).Value() }

// SecretDigestKey is the only key of a cached Secret's data: its value is
// the HMAC-SHA256 of the data the API server holds.
const SecretDigestKey = "kudo-ng.sha256"

// secretDigest is the keyed digest of a Secret's data, as the cache holds
// it.
func (t Trim) secretDigest(data map[string][]byte) map[string][]byte {
	if _, digested := data[SecretDigestKey]; digested && len(data) == 1 {
		return data
	}
	b, _ := json.Marshal(data) // a map of strings to bytes always encodes
	mac := hmac.New(sha256.New, t.DigestKey)
	mac.Write(b)
	return map[string][]byte{SecretDigestKey: mac.Sum(nil)}
}

func (t Trim) unstructured(obj *unstructured.Unstructured) {
	if obj.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Secret"}) {
		t.unstructuredSecret(obj)
		return
	}
	trimPodSpecs(obj)
}

// trimPodSpecs drops a pod's spec, or a workload's pod template.
func trimPodSpecs(obj *unstructured.Unstructured) {
	gk := obj.GroupVersionKind().GroupKind()
	if gk == (schema.GroupKind{Kind: "Pod"}) {
		unstructured.RemoveNestedField(obj.Object, "spec")
	} else if path, found := render.PodTemplatePath(gk); found {
		unstructured.RemoveNestedField(obj.Object, path...)
	}
}

// unstructuredSecret digests an unstructured Secret's data as secretDigest
// does a typed one's: both hold the same base64 text.
func (t Trim) unstructuredSecret(obj *unstructured.Unstructured) {
	data := map[string][]byte{}
	encoded, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	for k, v := range encoded {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			b = []byte(v)
		}
		data[k] = b
	}
	digest := map[string]any{}
	for k, v := range t.secretDigest(data) {
		digest[k] = base64.StdEncoding.EncodeToString(v)
	}
	obj.Object["data"] = digest
	unstructured.RemoveNestedField(obj.Object, "stringData")
}

// NewCache is the manager's cache. It serves the unstructured reads of
// built-in kinds from typed informers, which the API server feeds with
// protobuf: packages' objects are read as unstructured, but decoding their
// watch events from JSON into maps took a quarter of the manager's CPU, and
// the maps 60% of its heap, at 1,000 Instances (docs/benchmarks.md). Other
// kinds, custom resources among them, stay unstructured.
func NewCache(config *rest.Config, opts cache.Options) (cache.Cache, error) {
	c, err := cache.New(config, opts)
	if err != nil {
		return nil, err
	}
	scheme := opts.Scheme
	if scheme == nil {
		scheme = kubescheme.Scheme
	}
	return &builtinCache{Cache: c, scheme: scheme}, nil
}

type builtinCache struct {
	cache.Cache
	scheme *runtime.Scheme
}

// typed is the typed object the cache holds of obj's kind, or nil for a
// kind it holds as it is asked for.
func (c *builtinCache) typed(obj runtime.Object) (runtime.Object, schema.GroupVersionKind) {
	var gvk schema.GroupVersionKind
	switch u := obj.(type) {
	case *unstructured.Unstructured:
		gvk = u.GroupVersionKind()
	case *unstructured.UnstructuredList:
		gvk = u.GroupVersionKind()
	default:
		return nil, gvk
	}
	if !kubescheme.Scheme.Recognizes(gvk) {
		return nil, gvk
	}
	typed, err := c.scheme.New(gvk)
	if err != nil {
		return nil, gvk
	}
	return typed, gvk
}

func (c *builtinCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	typed, gvk := c.typed(obj)
	if typed == nil {
		return c.Cache.Get(ctx, key, obj, opts...)
	}
	if err := c.Cache.Get(ctx, key, typed.(client.Object), opts...); err != nil {
		return err
	}
	return into(obj.(*unstructured.Unstructured), typed, gvk)
}

func (c *builtinCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	typed, gvk := c.typed(list)
	if typed == nil || !strings.HasSuffix(gvk.Kind, "List") {
		return c.Cache.List(ctx, list, opts...)
	}
	typedList := typed.(client.ObjectList)
	// Each item is converted into a map of its own: the cache's copies need not be copied first.
	if err := c.Cache.List(ctx, typedList, append(opts, client.UnsafeDisableDeepCopy)...); err != nil {
		return err
	}
	items, err := meta.ExtractList(typedList)
	if err != nil {
		return err
	}
	u := list.(*unstructured.UnstructuredList)
	itemGVK := gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List"))
	u.Items = make([]unstructured.Unstructured, len(items))
	for i, item := range items {
		if err := into(&u.Items[i], item, itemGVK); err != nil {
			return err
		}
	}
	u.SetResourceVersion(typedList.GetResourceVersion())
	return nil
}

func (c *builtinCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if typed, _ := c.typed(obj); typed != nil {
		obj = typed.(client.Object)
	}
	return c.Cache.GetInformer(ctx, obj, opts...)
}

func (c *builtinCache) RemoveInformer(ctx context.Context, obj client.Object) error {
	if typed, _ := c.typed(obj); typed != nil {
		obj = typed.(client.Object)
	}
	return c.Cache.RemoveInformer(ctx, obj)
}

func (c *builtinCache) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	if typed, _ := c.typed(obj); typed != nil {
		obj = typed.(client.Object)
	}
	return c.Cache.IndexField(ctx, obj, field, extractValue)
}

// into makes u the unstructured form of the cached object obj, trimmed as
// an unstructured one would have been: a Secret's data is a digest already
// (Trim.ForCache).
func into(u *unstructured.Unstructured, obj runtime.Object, gvk schema.GroupVersionKind) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("converting %s: %w", gvk.Kind, err)
	}
	u.Object = m
	u.SetGroupVersionKind(gvk)
	trimPodSpecs(u)
	return nil
}

// Unstructured is an object of the cache, which its informers hand to
// event handlers typed or unstructured, as unstructured.
func Unstructured(obj client.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	gvk, err := apiutil.GVKForObject(obj, kubescheme.Scheme)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, into(u, obj, gvk)
}
