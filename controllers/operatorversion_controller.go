package controllers

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/render"
)

// OperatorVersionReconciler reports whether an OperatorVersion can run, by
// the rules of package verify, so a broken one is visible before an Instance
// uses it.
type OperatorVersionReconciler struct {
	client.Client
	// RenderLimits bound each render of a template; none set:
	// render.DefaultLimits.
	RenderLimits render.Limits
}

// +kubebuilder:rbac:groups=kudo.dev,resources=operatorversions,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kudo.dev,resources=operatorversions/status,verbs=get;update;patch

// Reconcile verifies the OperatorVersion and records the first error as
// conditions; an invalid OperatorVersion is Stalled until its spec changes.
func (r *OperatorVersionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ov := &kudov1beta1.OperatorVersion{}
	if err := r.Get(ctx, req.NamespacedName, ov); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := ov.DeepCopy()
	ov.Status.ObservedGeneration = ov.Generation
	if report := packages.VerifyOperatorVersion(ov, r.RenderLimits); len(report.Errors) > 0 {
		msg := report.Errors[0].String()
		if n := len(report.Errors); n > 1 {
			msg += fmt.Sprintf(" (and %d more errors: kubectl kudo package verify shows them all)", n-1)
		}
		ctrl.LoggerFrom(ctx).Info("OperatorVersion cannot run", "OperatorVersion", klog.KObj(ov), "reason", msg)
		setReadiness(ov, engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.InvalidReason, Message: msg})
	} else {
		setReadiness(ov, engine.Readiness{
			Ready: metav1.ConditionTrue, Reason: kudov1beta1.SucceededReason, Message: "The package passes the verify rules",
		})
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
