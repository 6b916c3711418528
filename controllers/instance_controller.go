package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// operatorVersionIndex indexes Instances by the name of their OperatorVersion,
// so a new or changed OperatorVersion wakes exactly the Instances that use it.
const operatorVersionIndex = ".spec.operatorVersion.name"

// InstanceReconciler resolves an Instance's OperatorVersion and reports it in
// the Instance's conditions.
type InstanceReconciler struct {
	client.Client
}

// +kubebuilder:rbac:groups=kudo.dev,resources=instances,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kudo.dev,resources=instances/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kudo.dev,resources=instances/finalizers,verbs=update

// Reconcile reads the Instance and its OperatorVersion from the cache and
// writes the Instance's conditions in one status patch.
func (r *InstanceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	instance := &kudov1beta1.Instance{}
	if err := r.Get(ctx, req.NamespacedName, instance); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := instance.DeepCopy()
	instance.Status.ObservedGeneration = instance.Generation

	ov := &kudov1beta1.OperatorVersion{}
	ovKey := types.NamespacedName{Namespace: instance.Namespace, Name: instance.Spec.OperatorVersion.Name}
	switch err := r.Get(ctx, ovKey, ov); {
	case apierrors.IsNotFound(err):
		// Not terminal: the OperatorVersion watch wakes the Instance when it appears.
		msg := fmt.Sprintf("OperatorVersion %q not found in namespace %q", ovKey.Name, ovKey.Namespace)
		ctrl.LoggerFrom(ctx).Info("Waiting for OperatorVersion",
			"Instance", klog.KObj(instance), "OperatorVersion", klog.KRef(ovKey.Namespace, ovKey.Name))
		setReadiness(instance, metav1.ConditionFalse, true, kudov1beta1.OperatorVersionNotFoundReason, msg)
	case err != nil:
		return ctrl.Result{}, err
	default:
		setReadiness(instance, metav1.ConditionUnknown, false, kudov1beta1.PlanPendingReason,
			fmt.Sprintf("Waiting for the deploy plan of OperatorVersion %q", ov.Name))
	}
	return ctrl.Result{}, patchStatus(ctx, r.Client, before, instance)
}

// SetupWithManager registers the controller with an index and a watch that
// map an OperatorVersion to the Instances that use it.
func (r *InstanceReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &kudov1beta1.Instance{}, operatorVersionIndex,
		func(o client.Object) []string {
			return []string{o.(*kudov1beta1.Instance).Spec.OperatorVersion.Name}
		}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&kudov1beta1.Instance{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&kudov1beta1.OperatorVersion{}, handler.EnqueueRequestsFromMapFunc(r.instancesOf)).
		Named("instance").
		Complete(r)
}

func (r *InstanceReconciler) instancesOf(ctx context.Context, ov client.Object) []reconcile.Request {
	instances := &kudov1beta1.InstanceList{}
	if err := r.List(ctx, instances, client.InNamespace(ov.GetNamespace()),
		client.MatchingFields{operatorVersionIndex: ov.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Instances of OperatorVersion", "OperatorVersion", klog.KObj(ov))
		return nil
	}
	requests := make([]reconcile.Request, 0, len(instances.Items))
	for _, i := range instances.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&i)})
	}
	return requests
}
