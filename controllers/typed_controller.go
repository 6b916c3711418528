package controllers

import (
	"context"
	"fmt"
	"maps"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// typedFieldOwner is the field manager of the Instances that run typed
// objects: the spec it applies is the typed object's, and wins.
const typedFieldOwner = "kudo-ng-typed-api"

// TypedAPIs starts, once each, the controller of every typed API the
// Operators serve (OperatorReconciler): the manager runs, so the kinds are
// known only as their CustomResourceDefinitions are established.
type TypedAPIs struct {
	mgr ctrl.Manager
	// MaxConcurrentReconciles is how many typed objects of a kind reconcile
	// at once.
	MaxConcurrentReconciles int

	mu      sync.Mutex
	started map[schema.GroupVersionKind]bool
}

// NewTypedAPIs serves typed APIs with mgr.
func NewTypedAPIs(mgr ctrl.Manager, maxConcurrentReconciles int) *TypedAPIs {
	return &TypedAPIs{mgr: mgr, MaxConcurrentReconciles: maxConcurrentReconciles, started: map[schema.GroupVersionKind]bool{}}
}

// Serve starts the controller of the kind, for the Operator, unless it runs.
func (t *TypedAPIs) Serve(names typedapi.Names, operator string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	gvk := names.GroupVersionKind()
	if t.started[gvk] {
		return nil
	}
	r := &TypedReconciler{Client: t.mgr.GetClient(), GVK: gvk, Operator: operator}
	if err := r.SetupWithManager(t.mgr, t.MaxConcurrentReconciles, names.CRDName()); err != nil {
		return err
	}
	t.started[gvk] = true
	return nil
}

// TypedReconciler runs the objects of one typed API (docs/typed-apis.md) as
// Instances: for each it keeps an Instance of the same name, which it
// controls — the engine's record, which the Instance controller runs, and
// which kubectl kudo plan finds by the object's name — with the object's
// parameters; and it writes the Instance's plans and conditions to the
// object's status. Deleting the object deletes the Instance, which runs its
// cleanup.
type TypedReconciler struct {
	client.Client
	GVK schema.GroupVersionKind
	// Operator whose OperatorVersions run the objects.
	Operator string
}

// +kubebuilder:rbac:groups=packages.kudo.dev,resources=*,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=packages.kudo.dev,resources=*/status,verbs=get;update;patch

// Reconcile applies the object's Instance when its spec differs, and
// copies the Instance's status to the object's.
func (r *TypedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.GVK)
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil || !obj.GetDeletionTimestamp().IsZero() {
		// Once deleted, the garbage collector deletes its Instance.
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
		return ctrl.Result{}, r.writeStatus(ctx, obj, nil, &engine.Readiness{
			Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.InvalidReason,
			Message: fmt.Sprintf("an Instance named %s exists and is not this %s's: delete it, or name this %s otherwise",
				obj.GetName(), r.GVK.Kind, r.GVK.Kind),
		})
	}
	desired, refused, err := r.instanceOf(ctx, obj, instance)
	if err != nil {
		return ctrl.Result{}, err
	}
	if refused != nil {
		return ctrl.Result{}, r.writeStatus(ctx, obj, instance, refused)
	}
	if instance == nil || !runsAsDesired(instance, desired) {
		applied, err := r.apply(ctx, desired)
		if err != nil {
			// Admission refuses what it would refuse of an Instance: a
			// change while a plan runs that may not, for one.
			ctrl.LoggerFrom(ctx).Info("The Instance of the object refused its change", "reason", err.Error())
			return ctrl.Result{}, kerrors.NewAggregate([]error{err, r.writeStatus(ctx, obj, instance, &engine.Readiness{
				Ready: metav1.ConditionFalse, Reason: kudov1beta1.InvalidReason,
				Message: fmt.Sprintf("Instance %s refused the change: %v", obj.GetName(), err),
			})})
		}
		instance = applied
	}
	return ctrl.Result{}, r.writeStatus(ctx, obj, instance, nil)
}

// instanceOf is the Instance that runs obj: its OperatorVersion is the one
// the spec names, else the one the Instance runs, else the Operator's
// newest in the namespace. What makes it impossible is returned as the
// object's readiness.
func (r *TypedReconciler) instanceOf(
	ctx context.Context, obj *unstructured.Unstructured, instance *kudov1beta1.Instance,
) (*kudov1beta1.Instance, *engine.Readiness, error) {
	spec, _ := obj.Object["spec"].(map[string]any)
	current := ""
	if instance != nil {
		current = instance.Spec.OperatorVersion.Name
	}
	versions := &kudov1beta1.OperatorVersionList{}
	if err := r.List(ctx, versions, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, nil, err
	}
	ov, err := typedapi.OperatorVersionOf(spec, current, r.Operator, versions.Items)
	if err != nil {
		// Not terminal: a new OperatorVersion wakes the object.
		return nil, &engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.OperatorVersionNotFoundReason,
			Message: err.Error()}, nil
	}
	instanceSpec, err := typedapi.InstanceSpec(spec, ov)
	if err != nil {
		return nil, &engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.InvalidReason, Message: err.Error()}, nil
	}
	desired := &kudov1beta1.Instance{
		TypeMeta: metav1.TypeMeta{APIVersion: kudov1beta1.GroupVersion.String(), Kind: "Instance"},
		ObjectMeta: metav1.ObjectMeta{
			Name: obj.GetName(), Namespace: obj.GetNamespace(),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(obj, r.GVK)},
		},
		Spec: instanceSpec,
	}
	if shard, ok := obj.GetLabels()[kudov1beta1.ShardLabel]; ok {
		desired.Labels = map[string]string{kudov1beta1.ShardLabel: shard}
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
		i.Labels[kudov1beta1.ShardLabel] == desired.Labels[kudov1beta1.ShardLabel]
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
func (r *TypedReconciler) apply(ctx context.Context, desired *kudov1beta1.Instance) (*kudov1beta1.Instance, error) {
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
	owner, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&desired.OwnerReferences[0])
	if err != nil {
		return nil, err
	}
	metadata := map[string]any{"name": desired.Name, "namespace": desired.Namespace, "ownerReferences": []any{owner}}
	if len(desired.Labels) > 0 {
		metadata["labels"] = desired.Labels
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": desired.APIVersion, "kind": desired.Kind, "metadata": metadata, "spec": spec,
	}}
	if err := r.Patch(ctx, u, client.Apply, client.FieldOwner(typedFieldOwner), client.ForceOwnership); err != nil {
		return nil, err
	}
	applied := &kudov1beta1.Instance{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, applied); err != nil {
		return nil, err
	}
	ctrl.LoggerFrom(ctx).Info("Applied the Instance of the object", "Instance", klog.KObj(applied),
		"operatorVersion", applied.Spec.OperatorVersion.Name)
	return applied, nil
}

// writeStatus writes to the object's status the plans and conditions of its
// Instance, or, when it has none or it cannot run, why.
func (r *TypedReconciler) writeStatus(
	ctx context.Context, obj *unstructured.Unstructured, i *kudov1beta1.Instance, why *engine.Readiness,
) error {
	if why == nil && i != nil && len(i.Status.Conditions) == 0 {
		// The Instance has not been reconciled yet: nothing to tell.
		return nil
	}
	status := map[string]any{}
	carrier := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Generation: obj.GetGeneration()}}
	if i != nil {
		carrier.Status = kudov1beta1.InstanceStatus{
			PlanStatus: i.Status.PlanStatus, ActivePlan: i.Status.ActivePlan, Conditions: i.Status.Conditions,
		}
		status[typedapi.OperatorVersionField] = i.Spec.OperatorVersion.Name
	}
	if why != nil {
		setReadiness(carrier, *why)
	}
	if why == nil && i != nil && i.Status.ObservedGeneration == i.Generation {
		// The Instance's conditions describe the spec it was applied with
		// from this generation of the object.
		status["observedGeneration"] = obj.GetGeneration()
		for c := range carrier.Status.Conditions {
			carrier.Status.Conditions[c].ObservedGeneration = obj.GetGeneration()
		}
	} else if previous, ok, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); ok {
		status["observedGeneration"] = previous
	}
	copied, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&carrier.Status)
	if err != nil {
		return err
	}
	maps.Copy(status, copied)
	previous, _ := obj.Object["status"].(map[string]any)
	if summaryOf(previous) == summaryOf(status) {
		// A step's progress alone is not written: it would double the
		// writes of a plan (kubectl kudo plan status shows it).
		return nil
	}
	before := obj.DeepCopy()
	obj.Object["status"] = status
	if err := r.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ready := meta.FindStatusCondition(carrier.Status.Conditions, kudov1beta1.ReadyCondition); ready != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Status written", "ready", ready.Status, "reason", ready.Reason)
	}
	return nil
}

// summaryOf is what of a typed object's status is written when it changes:
// the OperatorVersion, the generation observed, the active plan and its
// state, and each condition's status and reason; the plans' trees and the
// conditions' messages go with it.
func summaryOf(status map[string]any) string {
	conditions, _ := status["conditions"].([]any)
	summary := []any{status[typedapi.OperatorVersionField], status["observedGeneration"], status["activePlan"]}
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok {
			summary = append(summary, c["type"], c["status"], c["reason"])
		}
	}
	return fmt.Sprint(summary...)
}

// SetupWithManager registers the controller of the kind: woken by its
// objects' changes of spec, by their Instances' changes, and by new
// OperatorVersions, which an object waiting for one needs.
func (r *TypedReconciler) SetupWithManager(mgr ctrl.Manager, maxConcurrentReconciles int, name string) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.GVK)
	return ctrl.NewControllerManagedBy(mgr).
		For(obj, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
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
