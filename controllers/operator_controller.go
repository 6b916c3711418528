package controllers

import (
	"context"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
)

// OperatorReconciler reports what of an Operator is installed: its
// OperatorVersions and the Instances using each, so that `kubectl get
// operators -o yaml` answers "what runs here".
type OperatorReconciler struct {
	client.Client
	// APIReader reads from the API server what the cache may not hold yet.
	APIReader client.Reader
	// TypedAPIs runs the objects of the kinds Operators are served as.
	TypedAPIs *TypedAPIs

	migrations storageMigrations
}

// +kubebuilder:rbac:groups=kudo.dev,resources=operators,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kudo.dev,resources=operators/status,verbs=get;update;patch

// Reconcile lists the Operator's versions and their Instances from the cache.
func (r *OperatorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	operator := &kudov1beta1.Operator{}
	if err := r.Get(ctx, req.NamespacedName, operator); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	versions := &kudov1beta1.OperatorVersionList{}
	if err := r.List(ctx, versions, client.InNamespace(operator.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	// Only names are read: no copy of every Instance, statuses and all, on
	// each of the many reconciles a thousand new Instances cause. All
	// namespaces: an Instance may use an OperatorVersion of another.
	instances := &kudov1beta1.InstanceList{}
	if err := r.List(ctx, instances, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	typed, err := r.serveTypedAPI(ctx, operator)
	before := operator.DeepCopy()
	operator.Status.ObservedGeneration = operator.Generation
	operator.Status.Versions = summarize(operator.Name, versions.Items, instances.Items)
	message := "Operator accepted"
	if typed.message != "" {
		message += "; " + typed.message
	}
	setReadiness(operator, engine.Readiness{Ready: metav1.ConditionTrue, Reason: kudov1beta1.SucceededReason, Message: message})
	return ctrl.Result{RequeueAfter: typed.requeue}, kerrors.NewAggregate([]error{err, patchStatus(ctx, r.Client, before, operator)})
}

func summarize(
	operator string, versions []kudov1beta1.OperatorVersion, instances []kudov1beta1.Instance,
) []kudov1beta1.OperatorVersionSummary {
	var out []kudov1beta1.OperatorVersionSummary
	for _, ov := range versions {
		if ov.Spec.Operator.Name != operator {
			continue
		}
		s := kudov1beta1.OperatorVersionSummary{Name: ov.Name, Version: ov.Spec.Version, AppVersion: ov.Spec.AppVersion}
		for _, i := range instances {
			if i.OperatorVersionKey() != client.ObjectKeyFromObject(&ov) {
				continue
			}
			if i.Namespace == ov.Namespace {
				s.Instances = append(s.Instances, i.Name)
			} else {
				s.InstancesElsewhere++
			}
		}
		sort.Strings(s.Instances)
		out = append(out, s)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// instanceSummaryDelay is how long the Operator waits after an Instance of
// it is created, deleted or moved before it lists its Instances again: a
// thousand new Instances then cost a summary a second, not one each, which
// would list every Instance and write the growing list each time.
const instanceSummaryDelay = time.Second

// SetupWithManager registers the controller: a new, changed or deleted
// OperatorVersion wakes the Operator it belongs to, and so does an Instance
// of it, after instanceSummaryDelay.
func (r *OperatorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		// Not woken by its own status writes.
		For(&kudov1beta1.Operator{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&kudov1beta1.OperatorVersion{}, handler.EnqueueRequestsFromMapFunc(operatorOfVersion),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&kudov1beta1.Instance{}, r.summaryOfInstances(), builder.WithPredicates(versionChanged)).
		Named("operator").
		Complete(r)
}

// summaryOfInstances enqueues the Operator of an Instance after
// instanceSummaryDelay; the queue keeps one entry per Operator, so the
// Instances that change meanwhile are summed up together.
func (r *OperatorReconciler) summaryOfInstances() handler.EventHandler {
	later := func(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range r.operatorOfInstance(ctx, obj) {
			q.AddAfter(req, instanceSummaryDelay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			later(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			later(ctx, e.ObjectOld, q)
			later(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			later(ctx, e.Object, q)
		},
	}
}

// versionChanged lets through what changes an Operator's list of Instances:
// an Instance's creation, its deletion and a change of its OperatorVersion,
// not its plans (spec.planExecution) nor its parameters.
var versionChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectOld.(*kudov1beta1.Instance).OperatorVersionKey() != e.ObjectNew.(*kudov1beta1.Instance).OperatorVersionKey()
}}

func operatorOfVersion(_ context.Context, obj client.Object) []reconcile.Request {
	ov := obj.(*kudov1beta1.OperatorVersion)
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ov.Namespace, Name: ov.Spec.Operator.Name}}}
}

func (r *OperatorReconciler) operatorOfInstance(ctx context.Context, obj client.Object) []reconcile.Request {
	i := obj.(*kudov1beta1.Instance)
	ov := &kudov1beta1.OperatorVersion{}
	if err := r.Get(ctx, i.OperatorVersionKey(), ov); err != nil {
		return nil
	}
	return operatorOfVersion(ctx, ov)
}
