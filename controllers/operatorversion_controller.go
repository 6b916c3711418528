package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"oras.land/oras-go/v2/registry/remote/auth"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/fair"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/trust"
)

// OperatorVersionReconciler reports whether an OperatorVersion can run:
// whether the TrustPolicies covering it verify its signature (its Verified
// condition), then, by the rules of package verify, so a broken one is
// visible before an Instance uses it.
type OperatorVersionReconciler struct {
	client.Client
	// RenderLimits bound each render of a template; none set:
	// render.DefaultLimits.
	RenderLimits render.Limits
	// RegistryCredentials are those the manager pulls packages with to
	// verify them, unless a policy names its own; nil: anonymously.
	RegistryCredentials auth.CredentialFunc
	// Namespace is the manager's, which holds the Secrets TrustPolicies
	// name as their registries' credentials.
	Namespace string
	// APIReader reads those Secrets, which the cache does not hold.
	APIReader client.Reader
	// Recorder says when an OperatorVersion's verification changes.
	Recorder record.EventRecorder

	// shares is each namespace's share of the workers.
	shares *fair.Share
}

// unverifiedRetry is how soon an OperatorVersion its policies do not verify
// is verified again: its package may be signed since, or its registry back.
const unverifiedRetry = 2 * time.Minute

// verifyingWorkers is how many OperatorVersions are judged at once, and
// verifyingShare how many of one namespace: a package author's flood of
// OperatorVersions, each rendering until its timeout or waiting on a slow
// registry, takes two workers, and another namespace's are judged beside
// it. The rest of a namespace's wait their turn, shareWait apart, holding
// no worker.
const (
	verifyingWorkers = 4
	verifyingShare   = 2
	shareWait        = 2 * time.Second
)

// +kubebuilder:rbac:groups=kudo.dev,resources=operatorversions,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kudo.dev,resources=operatorversions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kudo.dev,resources=trustpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get

// Reconcile verifies the OperatorVersion and records the first error as
// conditions; an invalid OperatorVersion is Stalled until its spec changes.
// One a TrustPolicy enforces signatures on and does not verify is not
// rendered at all.
func (r *OperatorVersionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if !r.shares.TryEnter(req.Namespace) {
		return ctrl.Result{RequeueAfter: shareWait}, nil
	}
	defer r.shares.Leave(req.Namespace)
	ov := &kudov1beta1.OperatorVersion{}
	if err := r.Get(ctx, req.NamespacedName, ov); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := ov.DeepCopy()
	ov.Status.ObservedGeneration = ov.Generation
	policies := &kudov1alpha1.TrustPolicyList{}
	if err := r.List(ctx, policies); err != nil {
		return ctrl.Result{}, err
	}
	result := ctrl.Result{}
	if covering := trust.Covering(policies.Items, ov); len(covering) == 0 {
		meta.RemoveStatusCondition(&ov.Status.Conditions, trust.VerifiedCondition)
	} else {
		verified := trust.Condition(trust.Verify(ctx, ov, covering, r.credentials), ov.Generation)
		verified.Message = engine.TruncateMessage(verified.Message, maxConditionMessage)
		if verified.Status != metav1.ConditionTrue {
			ctrl.LoggerFrom(ctx).Info("OperatorVersion not verified", "OperatorVersion", klog.KObj(ov), "reason", verified.Message)
			result.RequeueAfter = unverifiedRetry
		}
		if was := meta.FindStatusCondition(ov.Status.Conditions, trust.VerifiedCondition); was == nil || was.Status != verified.Status {
			r.Recorder.Event(ov, eventType(verified.Status), verified.Reason, verified.Message)
		}
		meta.SetStatusCondition(&ov.Status.Conditions, verified)
	}
	if refusal := trust.Refusal(policies.Items, ov); refusal != nil {
		setReadiness(ov, engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: trust.UnsignedReason, Message: refusal.Error()})
	} else if report := packages.VerifyOperatorVersion(ov, r.RenderLimits); len(report.Errors) > 0 {
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
	return result, patchStatus(ctx, r.Client, before, ov)
}

// credentials are those of the Secret a policy names, read anew each time
// so that a rotated one is used at once, else the manager's.
func (r *OperatorVersionReconciler) credentials(ctx context.Context, p *kudov1alpha1.TrustPolicy) (auth.CredentialFunc, error) {
	login := p.Spec.Registry.Authentication
	if login == nil {
		return r.RegistryCredentials, nil
	}
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: r.Namespace, Name: login.PullSecretRef.Name}
	if err := r.APIReader.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("spec.registry.authentication.pullSecretRef: %w", err)
	}
	return trust.PullSecretCredentials(secret)
}

// eventType is that of an event saying a condition's new status.
func eventType(status metav1.ConditionStatus) string {
	if status == metav1.ConditionTrue {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

// SetupWithManager registers the controller; status writes do not wake it,
// a changed package digest or TrustPolicy does.
func (r *OperatorVersionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.shares = fair.NewShare(verifyingShare)
	return ctrl.NewControllerManagedBy(mgr).
		For(&kudov1beta1.OperatorVersion{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&kudov1alpha1.TrustPolicy{}, handler.EnqueueRequestsFromMapFunc(r.allOperatorVersions),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// A registry slow to answer one OperatorVersion's verification
		// holds one worker, not the others' verdicts.
		WithOptions(controller.Options{MaxConcurrentReconciles: verifyingWorkers}).
		Named("operatorversion").
		Complete(r)
}

// allOperatorVersions are every OperatorVersion, which a changed
// TrustPolicy may cover.
func (r *OperatorVersionReconciler) allOperatorVersions(ctx context.Context, _ client.Object) []reconcile.Request {
	ovs := &kudov1beta1.OperatorVersionList{}
	if err := r.List(ctx, ovs); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the OperatorVersions a TrustPolicy may cover")
		return nil
	}
	requests := make([]reconcile.Request, len(ovs.Items))
	for k := range ovs.Items {
		requests[k] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ovs.Items[k])}
	}
	return requests
}
