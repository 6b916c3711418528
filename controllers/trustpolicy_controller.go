package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/trust"
)

// TrustPolicyReconciler reports whether a TrustPolicy can verify anything:
// its keys and trusted roots read, its CA bundle too. One that cannot
// verifies nothing, so in Enforce it keeps every package it covers from
// running; the OperatorVersion controller applies the policies.
type TrustPolicyReconciler struct {
	client.Client
}

// +kubebuilder:rbac:groups=kudo.dev,resources=trustpolicies/status,verbs=get;update;patch

// Reconcile reads the policy's authorities and registry access.
func (r *TrustPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &kudov1alpha1.TrustPolicy{}
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := p.DeepCopy()
	p.Status.ObservedGeneration = p.Generation
	_, err := trust.Authorities(p)
	if err == nil {
		_, err = trust.Client(p, nil)
	}
	if err != nil {
		setReadiness(p, engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.InvalidReason, Message: err.Error()})
	} else {
		setReadiness(p, engine.Readiness{Ready: metav1.ConditionTrue, Reason: kudov1beta1.SucceededReason,
			Message: "Every authority's key or trusted root reads"})
	}
	return ctrl.Result{}, patchStatus(ctx, r.Client, before, p)
}

// SetupWithManager registers the controller; status writes do not wake it.
func (r *TrustPolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&kudov1alpha1.TrustPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("trustpolicy").
		Complete(r)
}
