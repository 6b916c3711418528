package controllers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/healthrule"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/remote"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/task"
	"github.com/kudo-ng/kudo/internal/trust"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// operatorVersionIndex indexes Instances by the namespace/name of their
// OperatorVersion (which may live in another namespace), so a new or changed
// OperatorVersion wakes exactly the Instances that use it.
const operatorVersionIndex = ".spec.operatorVersion"

// InstanceReconciler runs an Instance's plans: it picks the plan to run,
// runs the tasks of its due steps, and records the status tree, conditions
// and events. It is woken by changes to the Instance, its OperatorVersion,
// its child Instances and every object it applied.
type InstanceReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
	Mapper   meta.RESTMapper
	// Files copies the files of Pipe tasks out of their pods.
	Files task.FileCopier
	Clock clock.PassiveClock
	// MaxConcurrentReconciles is how many Instances reconcile at once.
	MaxConcurrentReconciles int
	// DriftCorrection is whether objects someone else changed are applied
	// again, for Instances that do not say (kudov1beta1.DriftCorrectionAnnotation).
	DriftCorrection bool
	// PlanTimeout bounds the runs of plans that declare no timeout; zero:
	// none, as KUDO.
	PlanTimeout time.Duration
	// CleanupTimeout bounds the cleanup runs of deleted Instances whose
	// plan declares no timeout; zero: PlanTimeout's.
	CleanupTimeout time.Duration
	// APIReader reads from the API server what the cache should not hold.
	APIReader client.Reader
	// Config is the manager's, from which clients that impersonate an
	// Instance's service account are made.
	Config *rest.Config
	// RequireServiceAccount runs no plan of an Instance without
	// spec.serviceAccountName.
	RequireServiceAccount bool
	// MultiTenant runs every Instance's work as a service account of its
	// namespace, "default" when it names none: never as the manager.
	MultiTenant bool
	// MaskKeys mask the values of sensitive parameters in the status
	// (internal/maskkey).
	MaskKeys params.MaskKeys
	// Trim is how the manager's cache trims objects (its DefaultTransform),
	// which the inventory must see alike.
	Trim objects.Trim
	// RenderLimits bound each render of a template; none set:
	// render.DefaultLimits.
	RenderLimits render.Limits
	// ServesTyped tells the kinds of the typed APIs the manager serves,
	// whose objects hold the records of their Instances (typedapi.ReadRecord);
	// nil: none.
	ServesTyped func(context.Context, schema.GroupVersionKind) bool
	// ShardCache, when set, says that the manager's cache holds only its
	// shard's objects (objects.Options.ConfirmMisses), and watches what the
	// shard's Instances read whole: the metadata of the Secrets of secret
	// parameters, which no shard label marks.
	ShardCache cache.Cache
	// RemoteClusters are the API servers Instances' kubeconfigs may name
	// (--remote-clusters); none: no Instance acts on another cluster.
	RemoteClusters remote.Policy

	cache cache.Cache
	// clusters are the remote clusters Instances name.
	clusters *remoteClusters
	// kinds starts the watches of the kinds the Instances' objects are of.
	kinds *kindWatches
	// corrections paces the drift corrections of each object.
	corrections *inventory.Limiter
	// warned are the API migrations already reported, by plan run.
	warned *utilcache.LRUExpireCache
	// notServed are the kinds the server does not serve.
	notServed *utilcache.LRUExpireCache
	// impersonated are the identities of service accounts, by user name.
	impersonated *utilcache.LRUExpireCache
	// healthRules are the compiled health rules of OperatorVersions, by
	// their uid and resourceVersion.
	healthRules *utilcache.LRUExpireCache
	// redactors hide the sensitive values of Instances in their events.
	redactors redactors
	// capabilities are what Helm charts' .Capabilities say of this cluster.
	capabilities *chartrender.Discovered
}

// The caches reconciles fill are bounded in size, and each entry lives for
// a while: a manager that runs for months, with Instances, service accounts
// and packages coming and going, holds its recent work only.
const (
	maxCacheEntries = 4096
	// warnedFor: a plan run's API migrations are reported at most once a day.
	warnedFor = 24 * time.Hour
	// notServedFor is how long a kind found not served is believed so: the
	// REST mapper asks the API server again on every miss, and old packages
	// use removed API versions on every pass of their plans.
	notServedFor = 5 * time.Minute
	// impersonatedFor is how long the clients of a service account are
	// kept; making them again is cheap, as they share the manager's
	// connections.
	impersonatedFor = 10 * time.Minute
)

// +kubebuilder:rbac:groups=kudo.dev,resources=instances,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kudo.dev,resources=instances/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kudo.dev,resources=instances/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// The manager watches every Instance's objects and judges their health with
// its own informers, whoever applied them, with config/rbac/reader_role.yaml
// (every built-in kind by name: "*" would take in pods/exec). It writes them
// with config/rbac/manager_privileged_role.yaml, or, with --multi-tenant, as
// the Instances' service accounts (config/tenancy).

// Reconcile gathers the Instance and its OperatorVersion, runs its plans,
// and writes what changed through the reconcile's one patcher.
func (r *InstanceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	instance := &kudov1beta1.Instance{}
	if err := r.Get(ctx, req.NamespacedName, instance); err != nil {
		if apierrors.IsNotFound(err) {
			r.redactors.forget(req.NamespacedName)
			r.clusters.release(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("Instance", klog.KObj(instance)))
	holder, err := typedapi.ReadRecord(ctx, r.Client, instance, r.servesTyped)
	if err != nil {
		return ctrl.Result{}, err
	}
	run := r.newPlanRun(instance, holder)
	defer func() {
		result, retErr = r.finish(ctx, run, result, retErr)
	}()

	if goOn, err := r.admitOperatorVersion(ctx, run); err != nil || !goOn {
		return ctrl.Result{}, err
	}
	if goOn, err := r.prepare(ctx, run); err != nil || !goOn {
		return ctrl.Result{RequeueAfter: run.requeue}, r.clusterTrouble(run, err)
	}
	if !instance.DeletionTimestamp.IsZero() {
		// A cleanup step in ERROR is tried again after its backoff, as a
		// live plan's is.
		err := r.clusterTrouble(run, r.reconcileDelete(ctx, run))
		return ctrl.Result{RequeueAfter: run.requeue}, err
	}
	for _, sub := range r.subReconcilers() {
		if err := r.clusterTrouble(run, sub(ctx, run)); err != nil || run.unreachable != nil {
			return ctrl.Result{RequeueAfter: run.requeue}, err
		}
	}
	return ctrl.Result{RequeueAfter: run.requeue}, nil
}

// admitOperatorVersion reads the Instance's OperatorVersion into run, and
// judges whether its code may run for the Instance: it exists, the
// TrustPolicies let it run, and it is the content the Instance ran with. It
// returns whether the reconcile goes on: an Instance being deleted goes on
// to remove what it applied when only the last fails.
func (r *InstanceReconciler) admitOperatorVersion(ctx context.Context, run *planRun) (bool, error) {
	instance := run.instance
	ov := &kudov1beta1.OperatorVersion{}
	ovKey := instance.OperatorVersionKey()
	if err := r.Get(ctx, ovKey, ov); err != nil {
		if !apierrors.IsNotFound(err) {
			return false, err
		}
		// Not terminal: the OperatorVersion watch wakes the Instance when it appears.
		run.judge(&engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.OperatorVersionNotFoundReason,
			Message: fmt.Sprintf("OperatorVersion %q not found in namespace %q", ovKey.Name, ovKey.Namespace)})
		if !instance.DeletionTimestamp.IsZero() {
			controllerutil.RemoveFinalizer(instance, kudov1beta1.InstanceCleanupFinalizer)
		}
		return false, nil
	}
	run.ov = ov
	policies := &kudov1alpha1.TrustPolicyList{}
	if err := r.List(ctx, policies); err != nil {
		return false, err
	}
	if refused := trust.Refusal(policies.Items, ov); refused != nil {
		// The OperatorVersion watch wakes the Instance once it is judged.
		// Its code is not run, its cleanup plan neither.
		readiness := &engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: trust.UnsignedReason, Message: refused.Error()}
		if refused.Pending {
			readiness.Ready, readiness.Stalled = metav1.ConditionUnknown, false
		} else {
			r.warnOnRefusal(instance, readiness)
		}
		run.judge(readiness)
		if !instance.DeletionTimestamp.IsZero() && !refused.Pending {
			controllerutil.RemoveFinalizer(instance, kudov1beta1.InstanceCleanupFinalizer)
		}
		return false, nil
	}
	engine.PinOperatorVersion(instance, ov)
	if replaced := engine.OperatorVersionReplaced(instance, ov); replaced != nil {
		// Its code is not run: no plan, no drift correction, and, when
		// the Instance goes, no cleanup plan; what the Instance applied
		// goes with it.
		readiness := &engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true,
			Reason: kudov1beta1.OperatorVersionChangedReason, Message: replaced.Error()}
		r.warnOnRefusal(instance, readiness)
		run.judge(readiness)
		run.replaced = true
		return !instance.DeletionTimestamp.IsZero(), nil
	}
	return true, nil
}

// prepare gives run what the plans work with: the Instance's identity, the
// OperatorVersion's health rules, the objects' manager, the parameters. It
// returns whether the reconcile goes on.
func (r *InstanceReconciler) prepare(ctx context.Context, run *planRun) (bool, error) {
	instance, ov := run.instance, run.ov
	// Before the kubeconfig is read: a change of its Secret wakes the Instance.
	if len(instance.Spec.SecretParameters) > 0 || instance.Spec.KubeConfig != nil {
		if err := r.kinds.WatchSecrets(); err != nil {
			return false, err
		}
	}
	id, err := r.identityFor(ctx, instance)
	if err != nil {
		return false, err
	}
	// An Instance being deleted runs its cleanup judged by kstatus: rules
	// that do not compile must not keep it for ever.
	rules, err := r.healthRulesOf(ov)
	if err != nil && instance.DeletionTimestamp.IsZero() {
		// The OperatorVersion check says so too; a new OperatorVersion wakes the Instance.
		run.judge(&engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.InvalidReason,
			Message: fmt.Sprintf("OperatorVersion %s has health rules that do not compile: %v", ov.Name, err)})
		return false, nil
	}
	run.writer, run.reader, run.files = id.writer, id.reader, id.files
	run.cluster, run.served, run.scope, run.capabilities = id.target.cluster, id.target.served, id.target.scope, id.target.capabilities
	if run.cluster != nil {
		run.cached = id.writer
	}
	run.objects = objects.NewManager(instance, id.writer,
		objects.Options{APIReader: id.target.apiReader, Kinds: id.target.kinds, Writes: run.writes, Trim: r.Trim, Rules: rules,
			ConfirmMisses: r.ShardCache != nil && id.target.cluster == nil})
	run.home, run.homeObjects = id.home, run.objects
	if run.cluster != nil {
		run.homeObjects = objects.NewManager(instance, id.home,
			objects.Options{APIReader: r.APIReader, Kinds: r.kinds, Writes: run.writes, Trim: r.Trim, Rules: rules,
				ConfirmMisses: r.ShardCache != nil})
	}
	run.params = r.resolveParameters(ctx, instance, ov, id.secrets)
	// Before a plan is chosen: a mask made with another key would read as a
	// changed value.
	if engine.RekeyMasks(&instance.Status, run.params.values, run.params.keys) {
		ctrl.LoggerFrom(ctx).Info("Masks of sensitive values made again with the current mask key")
	}
	return true, nil
}

// warnOnRefusal says, as a warning event, why the manager refuses the
// Instance's OperatorVersion, once: when its Ready condition does not say
// so yet.
func (r *InstanceReconciler) warnOnRefusal(i *kudov1beta1.Instance, refusal *engine.Readiness) {
	if ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition); ready == nil ||
		ready.Status != metav1.ConditionFalse || ready.Reason != refusal.Reason {
		r.Recorder.Event(i, corev1.EventTypeWarning, refusal.Reason, refusal.Message)
	}
}

// servesTyped tells whether the kind is a typed API the manager serves:
// the one an Instance's record may be read from and written to, whatever
// else its owner references name.
func (r *InstanceReconciler) servesTyped(ctx context.Context, gvk schema.GroupVersionKind) bool {
	return r.ServesTyped != nil && r.ServesTyped(ctx, gvk)
}

// healthRulesOf compiles the health rules of ov, once for each of its
// versions; nil when it has none.
func (r *InstanceReconciler) healthRulesOf(ov *kudov1beta1.OperatorVersion) (*healthrule.Set, error) {
	key := string(ov.UID) + "/" + ov.ResourceVersion
	if rules, ok := r.healthRules.Get(key); ok {
		return rules.(*healthrule.Set), nil
	}
	rules, err := healthrule.Compile(&ov.Spec)
	if err != nil {
		return nil, err
	}
	r.healthRules.Add(key, rules, time.Hour)
	return rules, nil
}

// newPlanRun is the scope of one reconcile of the Instance, with what of
// the reconciler's configuration its plans follow.
func (r *InstanceReconciler) newPlanRun(i *kudov1beta1.Instance, holder *unstructured.Unstructured) *planRun {
	return &planRun{
		instance: i, patcher: newInstancePatcher(r.Client, i, holder), writes: &objects.Writes{}, cached: r.Client,
		events: r.Recorder, clock: r.Clock, warned: r.warned, served: r.served, scope: r.scope,
		requireServiceAccount: r.RequireServiceAccount, defaultTimeout: r.defaultTimeout(i), renderLimits: r.RenderLimits,
		readyBefore:    meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition).DeepCopy(),
		clusterBackoff: func() time.Duration { return r.clusters.retryAfter(client.ObjectKeyFromObject(i)) },
	}
}

// finish ends a reconcile: it derives the conditions once, hides the
// sensitive values in what it writes, and writes the Instance. A status
// held back as progress is written when the reconcile comes back, which is
// never later than the reconcile asked for.
func (r *InstanceReconciler) finish(ctx context.Context, run *planRun, result ctrl.Result, reconcileErr error) (ctrl.Result, error) {
	i := run.instance
	redactor := run.redactor()
	run.conclude()
	if run.unreachable == nil {
		r.clusters.answered(client.ObjectKeyFromObject(i))
	}
	redactStatus(&i.Status, redactor)
	held, patchErr := run.patcher.patch(ctx, i, reconcileErr == nil, r.Clock.Now())
	result.RequeueAfter = sooner(result.RequeueAfter, held)
	// After the status write, so that waiting for the cache overlaps it.
	awaitErr := run.writes.Await(ctx, run.cached)
	return result, redactor.Error(kerrors.NewAggregate([]error{reconcileErr, patchErr, awaitErr}))
}

// sooner is the sooner of two requeues, zero being none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// subReconciler is one part of reconciling a live Instance (not a KUDO
// plan's phase); an error ends the reconcile, and the patcher still writes
// what it found.
type subReconciler func(ctx context.Context, run *planRun) error

// subReconcilers are the parts of reconciling a live Instance, in order.
func (r *InstanceReconciler) subReconcilers() []subReconciler {
	return []subReconciler{r.reconcileFinalizer, r.reconcilePlans, r.reconcileInventory, r.reconcileFinalizer}
}

// reconcileFinalizer puts the cleanup finalizer on the Instance before any
// plan runs when it needs the manager before it goes (needsCleanup). It
// runs again after the inventory, which may adopt objects that need it; a
// step that is about to apply one puts it on first (admit).
func (r *InstanceReconciler) reconcileFinalizer(ctx context.Context, run *planRun) error {
	i := run.instance
	if run.patcher.hasFinalizer(i) || !needsCleanup(i, run.ov) {
		return nil
	}
	return run.patcher.addFinalizer(ctx, i)
}

// needsCleanup reports whether the Instance needs the manager before it
// goes: for the OperatorVersion's cleanup plan, and to delete what it
// applied that owner references cannot reach (cluster-scoped objects,
// objects in other namespaces, everything in another cluster).
func needsCleanup(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) bool {
	_, hasCleanup := engine.PlanForDelete(ov.Spec.Plans)
	return hasCleanup || i.Spec.KubeConfig != nil || inventory.OwnersCannotCover(i.Status.Inventory, i.Namespace)
}

// reconcilePlans runs the plans; while one runs, or when one fails, the
// conditions come from them.
func (r *InstanceReconciler) reconcilePlans(ctx context.Context, run *planRun) error {
	err := run.plans(ctx)
	if err != nil {
		run.judge(nil)
	}
	return err
}

// reconcileDelete runs the cleanup plan, if the OperatorVersion has one,
// then deletes what the plans applied, then lets the Instance go.
func (r *InstanceReconciler) reconcileDelete(ctx context.Context, run *planRun) error {
	i := run.instance
	if !controllerutil.ContainsFinalizer(i, kudov1beta1.InstanceCleanupFinalizer) {
		return nil
	}
	if cleanup, ok := engine.PlanForDelete(run.ov.Spec.Plans); ok && !run.replaced {
		ended, err := run.cleanup(ctx, cleanup)
		run.judge(nil)
		if err != nil || !ended {
			return err
		}
	}
	// The objects' deletion events wake the Instance until all are gone.
	if gone, err := r.removeInventory(ctx, run); err != nil || !gone {
		return err
	}
	controllerutil.RemoveFinalizer(i, kudov1beta1.InstanceCleanupFinalizer)
	return nil
}

// SetupWithManager registers the controller with its static watches; the
// kinds packages apply are watched as they are first applied (watch).
func (r *InstanceReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if len(r.MaskKeys.Current) == 0 || len(r.Trim.DigestKey) == 0 {
		// An empty key would mask, or digest Secrets, with a key anyone can use.
		return errors.New("the Instance controller needs a mask key and a Secret digest key (internal/maskkey)")
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &kudov1beta1.Instance{}, operatorVersionIndex,
		func(o client.Object) []string {
			return []string{o.(*kudov1beta1.Instance).OperatorVersionKey().String()}
		}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &kudov1beta1.Instance{}, secretParametersIndex, secretsReadBy); err != nil {
		return err
	}
	r.Recorder = redactingRecorder{EventRecorder: r.Recorder, redactors: &r.redactors}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.corrections = inventory.NewLimiter()
	r.warned = utilcache.NewLRUExpireCacheWithClock(maxCacheEntries, r.Clock)
	r.notServed = utilcache.NewLRUExpireCacheWithClock(maxCacheEntries, r.Clock)
	r.impersonated = utilcache.NewLRUExpireCacheWithClock(maxCacheEntries, r.Clock)
	r.healthRules = utilcache.NewLRUExpireCacheWithClock(maxCacheEntries, r.Clock)
	r.cache = mgr.GetCache()
	discoverer, err := discovery.NewDiscoveryClientForConfig(r.Config)
	if err != nil {
		return err
	}
	r.capabilities = chartrender.NewDiscovered(discoverer, chartrender.DiscoveryTTL, r.Clock)
	r.clusters = newRemoteClusters(r.RemoteClusters, r.Scheme, r.Trim)
	if err := mgr.Add(r.clusters.Clusters); err != nil {
		return err
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&kudov1beta1.Instance{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deleting, pinRemoved, resync),
			skipPlanExecutionCleared)).
		// A child Instance of a KudoOperator task wakes its parent when its plan moves.
		Watches(&kudov1beta1.Instance{}, handler.EnqueueRequestsFromMapFunc(ownerInstance)).
		Watches(&kudov1beta1.OperatorVersion{}, handler.EnqueueRequestsFromMapFunc(r.instancesIndexedBy(operatorVersionIndex))).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Named("instance").
		Build(r)
	secrets := r.cache
	if r.ShardCache != nil {
		secrets = r.ShardCache
	}
	r.kinds = newKindWatches(c, r.cache, secrets, r.Mapper, r.Client,
		handler.EnqueueRequestsFromMapFunc(r.instancesIndexedBy(secretParametersIndex)))
	return err
}

// resync lets through the periodic resync of an Instance (--sync-period):
// an update event that changes nothing.
var resync = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
}}

// skipPlanExecutionCleared holds back an update that only empties
// spec.planExecution: the manager's own when a plan ends, made by the
// reconcile that writes the end, which leaves nothing for another to do.
var skipPlanExecutionCleared = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, okOld := e.ObjectOld.(*kudov1beta1.Instance)
	cur, okNew := e.ObjectNew.(*kudov1beta1.Instance)
	return !okOld || !okNew || !onlyClearsPlanExecution(old, cur)
}}

func onlyClearsPlanExecution(old, cur *kudov1beta1.Instance) bool {
	if old.Spec.PlanExecution.PlanName == "" || cur.Spec.PlanExecution != (kudov1beta1.PlanExecution{}) {
		return false
	}
	spec := old.Spec.DeepCopy()
	spec.PlanExecution = kudov1beta1.PlanExecution{}
	return equality.Semantic.DeepEqual(spec, &cur.Spec) && maps.Equal(old.Annotations, cur.Annotations) &&
		old.DeletionTimestamp.IsZero() == cur.DeletionTimestamp.IsZero()
}

// pinRemoved lets through the status update by which a user accepts the
// content of an OperatorVersion made again (engine.OperatorVersionReplaced).
var pinRemoved = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, okOld := e.ObjectOld.(*kudov1beta1.Instance)
	cur, okNew := e.ObjectNew.(*kudov1beta1.Instance)
	return okOld && okNew && old.Status.AppliedOperatorVersionDigest != "" && cur.Status.AppliedOperatorVersionDigest == ""
}}

// deleting lets through the update that marks an Instance for deletion.
var deleting = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectNew.GetDeletionTimestamp() != nil
}}

// instancesIndexedBy maps an object to the Instances an index of theirs
// files under its namespace/name: the OperatorVersion they use (in any
// namespace), the Secrets they read.
func (r *InstanceReconciler) instancesIndexedBy(index string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		instances := &kudov1beta1.InstanceList{}
		if err := r.List(ctx, instances,
			client.MatchingFields{index: client.ObjectKeyFromObject(obj).String()}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing Instances", "index", index, "object", klog.KObj(obj))
			return nil
		}
		requests := make([]reconcile.Request, 0, len(instances.Items))
		for _, i := range instances.Items {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&i)})
		}
		return requests
	}
}
