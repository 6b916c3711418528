package controllers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	kudocrd "github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// TypedAPIs starts, once each, the controller of every typed API the
// Operators serve (OperatorReconciler): the manager runs, so the kinds are
// known only as their CustomResourceDefinitions are established.
type TypedAPIs struct {
	mgr ctrl.Manager
	// MaxConcurrentReconciles is how many typed objects of a kind reconcile
	// at once.
	MaxConcurrentReconciles int

	mu sync.Mutex
	// started are the kinds whose controller runs, at the version first
	// served: a kind's objects are read at every version it serves (each
	// object at its OperatorVersion's, typedapi.InstanceOf).
	started map[schema.GroupKind]bool
}

// NewTypedAPIs serves typed APIs with mgr.
func NewTypedAPIs(mgr ctrl.Manager, maxConcurrentReconciles int) *TypedAPIs {
	return &TypedAPIs{mgr: mgr, MaxConcurrentReconciles: maxConcurrentReconciles, started: map[schema.GroupKind]bool{}}
}

// Serve starts the controller of the kind, for the Operator, unless it runs.
func (t *TypedAPIs) Serve(names typedapi.Names, operator string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	gvk := names.GroupVersionKind()
	if t.started[gvk.GroupKind()] {
		return nil
	}
	r := &TypedReconciler{Client: t.mgr.GetClient(), APIReader: t.mgr.GetAPIReader(), Recorder: t.mgr.GetEventRecorderFor("kudo-ng"),
		GVK: gvk, Operator: operator}
	if err := r.SetupWithManager(t.mgr, t.MaxConcurrentReconciles, names.CRDName()); err != nil {
		return err
	}
	t.started[gvk.GroupKind()] = true
	return nil
}

// Serves tells whether the kind is a typed API an Operator serves: its
// controller runs, or its CustomResourceDefinition is kudo-ng's (labelled
// with its Operator) and serves the version — which holds from the start
// of a manager, before the Operator controller has started the kind's
// controller again.
func (t *TypedAPIs) Serves(ctx context.Context, gvk schema.GroupVersionKind) bool {
	t.mu.Lock()
	started := t.started[gvk.GroupKind()]
	t.mu.Unlock()
	if started {
		return true
	}
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(kudocrd.V1.GroupVersion().WithKind("CustomResourceDefinitionList"))
	if err := t.mgr.GetClient().List(ctx, crds, client.HasLabels{typedapi.OperatorLabel}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the typed APIs")
		return false
	}
	for _, crd := range crds.Items {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		if group != gvk.Group || kind != gvk.Kind {
			continue
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			if v, ok := v.(map[string]any); ok && v["name"] == gvk.Version && v["served"] == true {
				return true
			}
		}
	}
	return false
}

// TypedReconciler runs the objects of one typed API (docs/typed-apis.md) as
// Instances: for each it keeps an Instance of the same name, which it
// controls — which the Instance controller runs, and which kubectl kudo
// plan finds by the object's name — with the object's parameters. The
// Instance controller keeps the Instance's record in the object's status
// (typedapi.StatusOf); this controller writes there only why the object
// has no Instance that runs it, while it has none: the object's status has
// one writer at a time. Deleting the object deletes the Instance,
// which runs its cleanup.
type TypedReconciler struct {
	client.Client
	// APIReader reads an object past the cache before its Instance changes.
	APIReader client.Reader
	Recorder  record.EventRecorder
	GVK       schema.GroupVersionKind
	// Operator whose OperatorVersions run the objects.
	Operator string
}

// +kubebuilder:rbac:groups=packages.kudo.dev,resources=*,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=packages.kudo.dev,resources=*/status,verbs=get;update;patch

// Reconcile applies the object's Instance when its spec differs, and lets
// a deleted object go once its Instance has.
func (r *TypedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.GVK)
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues(r.GVK.Kind, klog.KObj(obj)))
	instance := &kudov1beta1.Instance{}
	if err := r.Get(ctx, req.NamespacedName, instance); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		instance = nil
	}
	if instance != nil && !metav1.IsControlledBy(instance, obj) {
		instance = nil
		if obj.GetDeletionTimestamp().IsZero() {
			return ctrl.Result{}, r.refuse(ctx, obj, nil, engine.Readiness{
				Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.InvalidReason,
				Message: fmt.Sprintf("an Instance named %s exists and is not this %s's: delete it, or name this %s otherwise",
					obj.GetName(), r.GVK.Kind, r.GVK.Kind),
			})
		}
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.release(ctx, obj, instance)
	}
	desired, err := r.desired(ctx, obj, instance)
	if err != nil || desired == nil {
		return ctrl.Result{}, err
	}
	// The cache may hold the object as read through the schema its kind had
	// before its last change, which prunes the fields that schema lacked: the
	// values the Instance changes to are the API server's.
	if err := r.APIReader.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if desired, err = r.desired(ctx, obj, instance); err != nil || desired == nil {
		return ctrl.Result{}, err
	}
	if err := r.apply(ctx, desired); err != nil {
		// Admission refuses what it would refuse of an Instance: a change
		// while a plan runs that may not, for one.
		ctrl.LoggerFrom(ctx).Info("The Instance of the object refused its change", "reason", err.Error())
		return ctrl.Result{}, kerrors.NewAggregate([]error{err, r.refuse(ctx, obj, instance, engine.Readiness{
			Ready: metav1.ConditionFalse, Reason: kudov1beta1.InvalidReason,
			Message: fmt.Sprintf("the Instance refused the change: %v", err),
		})})
	}
	return ctrl.Result{}, nil
}

// release lets a deleted object go once its Instance has: the object holds
// the record of the Instance's cleanup, and has the cleanup finalizer while
// the Instance needs one (instancePatcher.addFinalizer). The garbage
// collector would wait for the object to go before it deletes the
// Instance: the Instance is deleted here.
func (r *TypedReconciler) release(ctx context.Context, obj *unstructured.Unstructured, instance *kudov1beta1.Instance) error {
	if !controllerutil.ContainsFinalizer(obj, kudov1beta1.InstanceCleanupFinalizer) {
		return nil
	}
	if instance != nil {
		if !instance.DeletionTimestamp.IsZero() {
			// Its deletion wakes the object.
			return nil
		}
		ctrl.LoggerFrom(ctx).Info("Deleting the Instance of the deleted object", "Instance", klog.KObj(instance))
		return client.IgnoreNotFound(r.Delete(ctx, instance, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	}
	before := obj.DeepCopy()
	controllerutil.RemoveFinalizer(obj, kudov1beta1.InstanceCleanupFinalizer)
	return client.IgnoreNotFound(r.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

// desired is what obj's Instance is to change to; nil when it runs as the
// object asks, or when nothing can run it (the object's readiness says why).
func (r *TypedReconciler) desired(ctx context.Context, obj *unstructured.Unstructured, instance *kudov1beta1.Instance) (
	*kudov1beta1.Instance, error) {
	desired, refused, err := r.instanceOf(ctx, obj, instance)
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return nil, r.refuse(ctx, obj, instance, *refused)
	}
	if instance != nil && runsAsDesired(instance, desired) {
		return nil, nil
	}
	return desired, nil
}

// instanceOf is the Instance that runs obj (typedapi.InstanceOf). What
// makes it impossible is returned as the object's readiness.
func (r *TypedReconciler) instanceOf(
	ctx context.Context, obj *unstructured.Unstructured, instance *kudov1beta1.Instance,
) (*kudov1beta1.Instance, *engine.Readiness, error) {
	current := ""
	if instance != nil {
		current = instance.Spec.OperatorVersion.Name
	}
	versions := &kudov1beta1.OperatorVersionList{}
	if err := r.List(ctx, versions, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, nil, err
	}
	desired, _, err := typedapi.InstanceOf(ctx, obj, current, r.Operator, versions.Items)
	var none *typedapi.NoOperatorVersionError
	switch {
	case errors.As(err, &none):
		// Not terminal: a new OperatorVersion wakes the object.
		return nil, &engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.OperatorVersionNotFoundReason,
			Message: err.Error()}, nil
	case err != nil:
		return nil, &engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.InvalidReason, Message: err.Error()}, nil
	}
	return desired, nil, nil
}

// runsAsDesired reports whether the Instance already has what the object's
// Instance would be applied with: an unchanged object costs no write.
func runsAsDesired(i, desired *kudov1beta1.Instance) bool {
	return metav1.IsControlledBy(i, ownerOf(desired)) &&
		i.Spec.OperatorVersion.Name == desired.Spec.OperatorVersion.Name &&
		maps.Equal(i.Spec.Parameters, desired.Spec.Parameters) &&
		maps.Equal(i.Spec.SecretParameters, desired.Spec.SecretParameters) &&
		i.Spec.ServiceAccountName == desired.Spec.ServiceAccountName &&
		equality.Semantic.DeepEqual(i.Spec.KubeConfig, desired.Spec.KubeConfig) &&
		i.Labels[kudov1beta1.ShardLabel] == desired.Labels[kudov1beta1.ShardLabel] &&
		i.Annotations[kudov1beta1.TypedGenerationAnnotation] == desired.Annotations[kudov1beta1.TypedGenerationAnnotation]
}

// ownerOf is an object with the uid of desired's controller.
func ownerOf(desired *kudov1beta1.Instance) metav1.Object {
	owner := &metav1.ObjectMeta{}
	if ref := metav1.GetControllerOf(desired); ref != nil {
		owner.UID = ref.UID
	}
	return owner
}

// apply writes the Instance with server-side apply: the fields it sets are
// the object's, and no one else's (kubectl kudo plan trigger's
// spec.planExecution is left as it is).
func (r *TypedReconciler) apply(ctx context.Context, desired *kudov1beta1.Instance) error {
	spec := map[string]any{"operatorVersion": map[string]any{"name": desired.Spec.OperatorVersion.Name}}
	if len(desired.Spec.Parameters) > 0 {
		spec["parameters"] = desired.Spec.Parameters
	}
	if len(desired.Spec.SecretParameters) > 0 {
		refs := make(map[string]any, len(desired.Spec.SecretParameters))
		for name, ref := range desired.Spec.SecretParameters {
			refs[name] = map[string]any{"name": ref.Name, "key": ref.Key}
		}
		spec["secretParameters"] = refs
	}
	if desired.Spec.ServiceAccountName != "" {
		spec["serviceAccountName"] = desired.Spec.ServiceAccountName
	}
	if kc := desired.Spec.KubeConfig; kc != nil {
		ref := map[string]any{"name": kc.SecretRef.Name}
		if kc.SecretRef.Key != "" {
			ref["key"] = kc.SecretRef.Key
		}
		spec["kubeConfig"] = map[string]any{"secretRef": ref}
	}
	owner, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&desired.OwnerReferences[0])
	if err != nil {
		return err
	}
	metadata := map[string]any{"name": desired.Name, "namespace": desired.Namespace, "ownerReferences": []any{owner},
		"annotations": desired.Annotations}
	if len(desired.Labels) > 0 {
		metadata["labels"] = desired.Labels
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": desired.APIVersion, "kind": desired.Kind, "metadata": metadata, "spec": spec,
	}}
	if err := objects.ServerSideApply(ctx, r.Client, u, objects.TypedAPIFieldOwner); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Applied the Instance of the object", "Instance", klog.KObj(desired),
		"operatorVersion", desired.Spec.OperatorVersion.Name)
	return nil
}

// refuse says why no Instance runs the object as it is. While its Instance
// runs it as it was, the Instance's patcher is the one writer of the
// object's status (instancePatcher.patchRecord): the refusal is a warning
// event, and the status, which observes the generation the Instance runs,
// stays behind the object's. Else it is the object's conditions, which
// describe its generation.
func (r *TypedReconciler) refuse(ctx context.Context, obj *unstructured.Unstructured, instance *kudov1beta1.Instance,
	why engine.Readiness) error {
	ctrl.LoggerFrom(ctx).Info("No Instance runs the object", "reason", why.Reason, "message", why.Message)
	if instance != nil {
		r.Recorder.Event(obj, corev1.EventTypeWarning, why.Reason, why.Message)
		return nil
	}
	carrier := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Generation: obj.GetGeneration()}}
	conditions, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "conditions")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"conditions": conditions}, &carrier.Status); err != nil {
		return fmt.Errorf("the conditions of %s %s: %w", r.GVK.Kind, obj.GetName(), err)
	}
	before := carrier.Status.DeepCopy()
	setReadiness(carrier, why)
	if equality.Semantic.DeepEqual(before.Conditions, carrier.Status.Conditions) {
		return nil
	}
	written, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&carrier.Status)
	if err != nil {
		return err
	}
	patched := obj.DeepCopy()
	if err := unstructured.SetNestedField(patched.Object, written["conditions"], "status", "conditions"); err != nil {
		return err
	}
	return client.IgnoreNotFound(patchStatus(ctx, r.Client, obj, patched))
}

// SetupWithManager registers the controller of the kind: woken by its
// objects' changes of spec and deletion, by their Instances' changes, and by new
// OperatorVersions, which an object waiting for one needs.
func (r *TypedReconciler) SetupWithManager(mgr ctrl.Manager, maxConcurrentReconciles int, name string) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.GVK)
	return ctrl.NewControllerManagedBy(mgr).
		For(obj, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, deleting))).
		Owns(&kudov1beta1.Instance{}).
		Watches(&kudov1beta1.OperatorVersion{}, handler.EnqueueRequestsFromMapFunc(r.objectsOfNamespace),
			builder.WithPredicates(predicate.Funcs{
				UpdateFunc: func(event.UpdateEvent) bool { return false }, DeleteFunc: func(event.DeleteEvent) bool { return false },
			})).
		WithOptions(controller.Options{MaxConcurrentReconciles: maxConcurrentReconciles}).
		Named("typed-" + name).
		Complete(r)
}

// objectsOfNamespace are the kind's objects in the namespace of a new
// OperatorVersion of the Operator.
func (r *TypedReconciler) objectsOfNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	if o.(*kudov1beta1.OperatorVersion).Spec.Operator.Name != r.Operator {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.GVK.GroupVersion().WithKind(r.GVK.Kind + "List"))
	if err := r.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing typed objects", "kind", r.GVK.Kind)
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for _, item := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&item)})
	}
	return requests
}
