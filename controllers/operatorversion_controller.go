package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/validation"
)

// OperatorVersionReconciler reports whether an OperatorVersion can run: every
// plan names defined tasks, every task defined templates, every trigger a plan.
type OperatorVersionReconciler struct {
	client.Client
}

// +kubebuilder:rbac:groups=kudo.dev,resources=operatorversions,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kudo.dev,resources=operatorversions/status,verbs=get;update;patch

// Reconcile validates the OperatorVersion's references and records the result
// as conditions; an invalid OperatorVersion is Stalled until its spec changes.
func (r *OperatorVersionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ov := &kudov1beta1.OperatorVersion{}
	if err := r.Get(ctx, req.NamespacedName, ov); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := ov.DeepCopy()
	ov.Status.ObservedGeneration = ov.Generation
	if errs := validation.OperatorVersion(&ov.Spec); len(errs) > 0 {
		ctrl.LoggerFrom(ctx).Info("OperatorVersion cannot run", "OperatorVersion", klog.KObj(ov), "reason", errs.ToAggregate().Error())
		setReadiness(ov, metav1.ConditionFalse, true, kudov1beta1.InvalidReason, errs.ToAggregate().Error())
	} else {
		setReadiness(ov, metav1.ConditionTrue, false, kudov1beta1.SucceededReason, "All plans refer to defined tasks and templates")
	}
	return ctrl.Result{}, patchStatus(ctx, r.Client, before, ov)
}

// SetupWithManager registers the controller; status writes do not wake it.
func (r *OperatorVersionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&kudov1beta1.OperatorVersion{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("operatorversion").
		Complete(r)
}
