package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// OperatorReconciler reports an Operator's observed generation. An Operator
// only describes a package; its versions and Instances carry the work.
type OperatorReconciler struct {
	client.Client
}

// +kubebuilder:rbac:groups=kudo.dev,resources=operators,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kudo.dev,resources=operators/status,verbs=get;update;patch

// Reconcile marks the Operator Ready for its current generation.
func (r *OperatorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	operator := &kudov1beta1.Operator{}
	if err := r.Get(ctx, req.NamespacedName, operator); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := operator.DeepCopy()
	operator.Status.ObservedGeneration = operator.Generation
	setReadiness(operator, metav1.ConditionTrue, false, kudov1beta1.SucceededReason, "Operator accepted")
	return ctrl.Result{}, patchStatus(ctx, r.Client, before, operator)
}

// SetupWithManager registers the controller; status writes do not wake it.
func (r *OperatorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&kudov1beta1.Operator{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("operator").
		Complete(r)
}
