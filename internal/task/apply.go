package task

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
)

// FieldOwner is kudo-ng's field manager for server-side apply.
const FieldOwner = "kudo-ng"

// apply renders its templates, applies them with server-side apply and is
// done when every object is healthy. CustomResourceDefinitions and
// Namespaces go first and must be Established / Active before the rest, so a
// package can ship a CRD and its custom resources in one step.
type apply struct{}

func (apply) Validate(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path) field.ErrorList {
	return validateResources(spec, defs, at, field.Required(at.Child("resources"), "an Apply task needs the templates it renders"))
}

// validateResources checks the templates of an Apply, Delete or Toggle
// task; none is the error when it lists none.
func validateResources(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path, none *field.Error) field.ErrorList {
	if len(spec.Resources) == 0 {
		return field.ErrorList{none}
	}
	var errs field.ErrorList
	for i, name := range spec.Resources {
		errs = append(errs, defs.template(name, at.Child("resources").Index(i))...)
	}
	return errs
}

func (apply) Uses(spec *kudov1beta1.TaskSpec) Uses {
	return Uses{Objects: spec.Resources}
}

func (apply) Build(t *kudov1beta1.Task, in *Input) (*Intent, error) {
	return renderObjects(ActionApply, t.Spec.Resources, in)
}

// Run applies what changed and reports what is not healthy yet.
func (a apply) Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error) {
	intent, err := env.build(ctx, a, t)
	if err != nil {
		return Result{}, err
	}
	res := Result{Migrations: intent.Migrations}
	var first, rest []*unstructured.Unstructured
	for _, obj := range intent.Objects {
		if isFoundation(obj) {
			first = append(first, obj)
		} else {
			rest = append(rest, obj)
		}
	}
	for _, batch := range [][]*unstructured.Unstructured{first, rest} {
		applied, err := applyInOrder(ctx, env, batch)
		res.Applied = append(res.Applied, applied...)
		if err != nil {
			return res, err
		}
		waiting, notes, err := judge(ctx, env, applied)
		if err != nil {
			return res, err
		}
		if len(waiting) > 0 {
			res.Message = strings.Join(waiting, "; ")
			return res, nil
		}
		res.Message = strings.Join(notes, "; ")
	}
	res.Done = true
	return res, nil
}

func isFoundation(obj *unstructured.Unstructured) bool {
	gk := obj.GroupVersionKind().GroupKind()
	return gk == schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"} || gk == schema.GroupKind{Kind: "Namespace"}
}

// judge judges the applied objects; it returns what is not healthy yet and
// notes on the healthy ones.
func judge(ctx context.Context, env *Env, applied []Applied) (waiting, notes []string, err error) {
	for _, a := range applied {
		verdict := Judge(ctx, env.Client, a.Object)
		switch {
		case verdict.Fatal:
			return nil, nil, Fatalf("%s", Explain(ctx, env.Client, env.Watch, env.Instance.Name, a.Object, verdict.Message))
		case !verdict.Healthy:
			waiting = append(waiting, Explain(ctx, env.Client, env.Watch, env.Instance.Name, a.Object, verdict.Message))
		case verdict.Message != "":
			notes = append(notes, verdict.Message)
		}
	}
	return waiting, notes, nil
}

// Explain adds to the message of an unhealthy object why its pods are not
// ready, from the cache; watch, if not nil, makes sure the pods are watched.
// The pods carry the Instance's label: watching them wakes the Instance
// when one of them gets stuck, which its workload's status does not show.
func Explain(ctx context.Context, c client.Reader, watch func(context.Context, schema.GroupVersionKind) error,
	instance string, obj *unstructured.Unstructured, message string) string {
	if !hasPods(obj) {
		return message
	}
	if watch != nil {
		if err := watch(ctx, corev1.SchemeGroupVersion.WithKind("Pod")); err != nil {
			return message
		}
	}
	if problem := podProblem(ctx, c, instance, obj); problem != "" {
		return message + " (" + problem + ")"
	}
	return message
}

// hasPods: workloads whose pods can say why they are not ready.
func hasPods(obj *unstructured.Unstructured) bool {
	switch obj.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, schema.GroupKind{Group: "batch", Kind: "Job"}:
		return true
	}
	return false
}

// maxConcurrentApplies bounds the applies of one task in flight: a package of
// a hundred ConfigMaps should not be a hundred requests at once.
const maxConcurrentApplies = 8

// applyInOrder applies objects in the order the templates list them, and
// each run of objects of one kind at once: an object may need one of another
// kind listed before it (a Pod its ServiceAccount), hardly one of its own.
func applyInOrder(ctx context.Context, env *Env, objs []*unstructured.Unstructured) ([]Applied, error) {
	applied := make([]Applied, len(objs))
	for start := 0; start < len(objs); {
		kind := objs[start].GroupVersionKind().GroupKind()
		end := start + 1
		for end < len(objs) && objs[end].GroupVersionKind().GroupKind() == kind {
			end++
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(maxConcurrentApplies)
		for i := start; i < end; i++ {
			g.Go(func() (err error) {
				applied[i], err = applyOne(gctx, env, objs[i])
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return slices.DeleteFunc(applied[:end], func(a Applied) bool { return a.Object == nil }), err
		}
		start = end
	}
	return applied, nil
}

// applyOne applies obj unless the cluster already has what kudo-ng last
// applied of it, and returns the object as the cluster has it.
func applyOne(ctx context.Context, env *Env, obj *unstructured.Unstructured) (Applied, error) {
	gvk := obj.GroupVersionKind()
	if env.Watch != nil {
		if err := env.Watch(ctx, gvk); err != nil {
			return Applied{}, env.classify(obj, fmt.Errorf("watching %s: %w", gvk.Kind, err))
		}
	}
	hash, err := withHash(obj)
	if err != nil {
		return Applied{}, err
	}
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(gvk)
	err = env.Client.Get(ctx, client.ObjectKeyFromObject(obj), current)
	switch {
	case err == nil && current.GetAnnotations()[kudov1beta1.AppliedHashAnnotation] == hash:
		return Applied{Object: current}, nil
	case err != nil && !apierrors.IsNotFound(err):
		return Applied{}, env.classify(obj, fmt.Errorf("reading %s %s: %w", gvk.Kind, obj.GetName(), err))
	}
	if err := serverSideApply(ctx, env, obj); err != nil {
		return Applied{}, err
	}
	env.Writes.add(obj)
	return Applied{Object: obj, Written: true}, nil
}

// Reapply applies an object as its task rendered it, though the cluster
// may carry its applied hash: drift correction, of what someone else changed.
func Reapply(ctx context.Context, env *Env, obj *unstructured.Unstructured) error {
	if _, err := withHash(obj); err != nil {
		return err
	}
	if err := serverSideApply(ctx, env, obj); err != nil {
		return err
	}
	env.Writes.add(obj)
	return nil
}

// DryRun returns what applying the object as its task rendered it would make
// of it, changing nothing: whether someone changed what kudo-ng owns of it.
func DryRun(ctx context.Context, env *Env, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, err := withHash(obj); err != nil {
		return nil, err
	}
	return obj, serverSideApply(ctx, env, obj, client.DryRunAll)
}

// serverSideApply applies obj as field manager kudo-ng, taking over the
// fields it sets from other managers; obj becomes the server's answer.
func serverSideApply(ctx context.Context, env *Env, obj *unstructured.Unstructured, opts ...client.PatchOption) error {
	opts = append(opts, client.FieldOwner(FieldOwner), client.ForceOwnership)
	if err := env.Client.Patch(ctx, obj, client.Apply, opts...); err != nil {
		return env.classify(obj, fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err))
	}
	return nil
}

// withHash records on obj, as rendered, its hash, which tells the next pass
// whether it changed.
func withHash(obj *unstructured.Unstructured) (string, error) {
	hash, err := hashOf(obj)
	if err != nil {
		return "", err
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[kudov1beta1.AppliedHashAnnotation] = hash
	obj.SetAnnotations(annotations)
	return hash, nil
}

// hashOf hashes the object as rendered, before the hash annotation is added.
func hashOf(obj *unstructured.Unstructured) (string, error) {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// PodInstanceIndex indexes cached pods by the Instance their label names,
// so that explaining a workload does not scan every pod of its namespace.
const PodInstanceIndex = "podInstance"

// PodInstance is the value of PodInstanceIndex for a pod.
func PodInstance(pod client.Object) []string {
	if name := pod.GetLabels()[kudov1beta1.InstanceLabel]; name != "" {
		return []string{name}
	}
	return nil
}

// podProblem names why a workload's pods are not ready, from the cache.
func podProblem(ctx context.Context, c client.Reader, instance string, obj *unstructured.Unstructured) string {
	matchLabels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
	if len(matchLabels) == 0 {
		return ""
	}
	pods := &unstructured.UnstructuredList{}
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := c.List(ctx, pods, client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{PodInstanceIndex: instance}, client.MatchingLabels(matchLabels)); err != nil {
		return ""
	}
	for i := range pods.Items {
		if p := health.PodProblem(&pods.Items[i]); p != "" {
			return p
		}
	}
	return ""
}

// OwnerReference makes the Instance the controller owner of what its tasks
// make, so that deleting it deletes them.
func OwnerReference(i *kudov1beta1.Instance) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: kudov1beta1.GroupVersion.String(), Kind: "Instance", Name: i.Name, UID: i.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}
