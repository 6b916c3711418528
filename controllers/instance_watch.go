package controllers

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/healthrule"
	"github.com/kudo-ng/kudo/internal/objects"
)

// watchSyncTimeout bounds the wait for a new kind's informer to list the
// cluster's objects.
const watchSyncTimeout = time.Minute

// kindWatches owns which kinds wake the Instance controller beyond the
// Instances and OperatorVersions it is built with: the kinds packages apply,
// known only at run time, and the Secrets of secret parameters. The object
// layer tells it each kind before it reads or writes objects of it
// (objects.Watcher); it starts a kind's informer once, after checking that
// the manager may list and watch it, for the life of the manager: the kinds
// are as many as the API server serves.
type kindWatches struct {
	controller controller.Controller
	cache      cache.Cache
	// secretsCache holds the metadata of the Secrets of secret parameters.
	secretsCache cache.Cache
	mapper       meta.RESTMapper
	// client reviews the manager's access and lists Instances.
	client client.Client
	// secretReaders maps a Secret to the Instances whose parameters read it.
	secretReaders handler.EventHandler
	// namespace, when set, is the only namespace cache holds (a remote
	// cluster's: instance_remote.go); "" all.
	namespace string
	// owners, when set, maps an object to the Instances it wakes instead of
	// ownerOf.
	owners func(context.Context, client.Object) []reconcile.Request

	mu             sync.Mutex
	watched        map[schema.GroupVersionKind]bool
	secretsWatched bool
	// judges are the health rules that judge the objects of each kind, by
	// schema.GroupKind.
	judges sync.Map
}

// JudgedBy makes the changes of objects of kind gk that judge sees wake
// their Instance (judgedChange), for the life of the manager.
func (k *kindWatches) JudgedBy(gk schema.GroupKind, judge *healthrule.Judge) {
	judges, _ := k.judges.LoadOrStore(gk, &kindJudges{byKey: map[string]*healthrule.Judge{}})
	judges.(*kindJudges).add(judge)
}

// wakeup is when a change of an object wakes its Instance.
type wakeup int

const (
	stayAsleep wakeup = iota
	// wakeLater: after progressInterval, when the progress of a waiting
	// step would be written anyway.
	wakeLater
	wakeNow
)

// judgedChange tells when a change of an object of kind gk wakes its
// Instance by the health rules judging the kind: at once when their verdict
// changes (its status, or the rule that decides), where kstatus's, which
// mayMovePlan follows, would not; later when only the values they read do,
// to show them in the waiting step. Waking at once on every new value of a
// StatefulSet's status made a plan judged by a rule 11% slower: the
// reconcile of a value in between delayed that of the verdict.
func (k *kindWatches) judgedChange(gk schema.GroupKind) func(e event.UpdateEvent) wakeup {
	return func(e event.UpdateEvent) wakeup {
		judges, ok := k.judges.Load(gk)
		if !ok {
			return stayAsleep
		}
		oldU, errOld := objects.Unstructured(e.ObjectOld)
		curU, errCur := objects.Unstructured(e.ObjectNew)
		if errOld != nil || errCur != nil {
			return wakeNow
		}
		return judges.(*kindJudges).changed(oldU, curU)
	}
}

// maxJudges bounds the judges noted of a kind, each a distinct set of rules;
// past it, any change of an object's spec or status counts.
const maxJudges = 16

// kindJudges are the health rules that judge a kind's objects, by their
// sources.
type kindJudges struct {
	mu    sync.RWMutex
	byKey map[string]*healthrule.Judge
	all   bool
}

func (j *kindJudges) add(judge *healthrule.Judge) {
	j.mu.RLock()
	_, known := j.byKey[judge.Key]
	known = known || j.all
	j.mu.RUnlock()
	if known {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.byKey[judge.Key] = judge
	if len(j.byKey) > maxJudges {
		j.byKey, j.all = nil, true
	}
}

// changed evaluates each rule on both objects: each takes at most a rule's
// cost and time (healthrule.CostLimit, EvalTimeout).
func (j *kindJudges) changed(old, cur *unstructured.Unstructured) wakeup {
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.all {
		if !equality.Semantic.DeepEqual(old.Object["status"], cur.Object["status"]) ||
			!equality.Semantic.DeepEqual(old.Object["spec"], cur.Object["spec"]) {
			return wakeNow
		}
		return stayAsleep
	}
	when := stayAsleep
	for _, judge := range j.byKey {
		before, after := judge.Check(old), judge.Check(cur)
		switch {
		case before.Status != after.Status || before.Rule != after.Rule:
			return wakeNow
		case !slices.Equal(before.Observed, after.Observed):
			when = wakeLater
		}
	}
	return when
}

func newKindWatches(c controller.Controller, informers, secrets cache.Cache, mapper meta.RESTMapper, cl client.Client,
	secretReaders handler.EventHandler) *kindWatches {
	return &kindWatches{controller: c, cache: informers, secretsCache: secrets, mapper: mapper, client: cl,
		secretReaders: secretReaders, watched: map[schema.GroupVersionKind]bool{}}
}

// Watch makes changes to objects of a kind wake the Instance that owns them,
// the first time an Instance applies that kind: packages apply kinds known
// only at run time, and a step must finish as soon as its objects are
// healthy, without polling. It returns once the kind's informer has listed
// the cluster and wakes the owners of what changes after: an object applied
// before that would arrive in the list already healthy, as a create that
// mayMovePlan holds back, and its step would wait for an event that never
// comes.
func (k *kindWatches) Watch(ctx context.Context, gvk schema.GroupVersionKind) error {
	if err := k.start(ctx, gvk); err != nil {
		return err
	}
	// A controller not started yet keeps the source until it starts.
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	syncCtx, cancel := context.WithTimeout(ctx, watchSyncTimeout)
	defer cancel()
	if _, err := k.cache.GetInformer(syncCtx, obj); err != nil {
		return fmt.Errorf("waiting for the cache of %s to sync: %w", gvk.Kind, err)
	}
	return nil
}

// start starts the watch of a kind, once.
func (k *kindWatches) start(ctx context.Context, gvk schema.GroupVersionKind) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.watched[gvk] {
		return nil
	}
	if err := k.mayWatch(ctx, gvk); err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	isPod := gvk == corev1.SchemeGroupVersion.WithKind("Pod")
	moves, judged := predicate.Predicate(mayMovePlan), k.judgedChange(gvk.GroupKind())
	if isPod {
		moves = podMayMovePlan
	}
	if err := k.controller.Watch(k.ownerSource(obj, moves, judged)); err != nil {
		return err
	}
	if isPod {
		if err := k.cache.IndexField(ctx, obj, objects.PodInstanceIndex, objects.PodInstance); err != nil {
			return err
		}
	}
	k.watched[gvk] = true
	return nil
}

// ownerSource wakes the owners of the kind's objects on the changes moves
// lets through, and on those judged says (nil: none). Unlike source.Kind,
// which adds its handler to the informer in a goroutine of its own, it has
// added it, and the objects listed have been through it, when the
// controller's Watch returns: a reconcile that started the watch, and
// applies and judges an object right after, would otherwise miss the object
// becoming healthy in between, as the handler's first list replays it as a
// create, which moves holds back; its step then waited for an event that
// never came (seen after a manager's restart, with many Instances
// reconciling at once).
func (k *kindWatches) ownerSource(obj client.Object, moves predicate.Predicate, judged func(event.UpdateEvent) wakeup) source.Source {
	return source.Func(func(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		syncCtx, cancel := context.WithTimeout(ctx, watchSyncTimeout)
		defer cancel()
		informer, err := k.cache.GetInformer(syncCtx, obj)
		if err != nil {
			return fmt.Errorf("waiting for the cache of %s to sync: %w", obj.GetObjectKind().GroupVersionKind().Kind, err)
		}
		registration, err := informer.AddEventHandler(k.ownerHandler(ctx, queue, moves, judged))
		if err != nil {
			return err
		}
		if !toolscache.WaitForCacheSync(syncCtx.Done(), registration.HasSynced) {
			return fmt.Errorf("waiting for the objects of %s to reach the Instances' watch: %w",
				obj.GetObjectKind().GroupVersionKind().Kind, syncCtx.Err())
		}
		return nil
	})
}

// ownerHandler queues the owners of the objects whose changes moves lets
// through, and of those judged says, at once or after progressInterval.
func (k *kindWatches) ownerHandler(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request],
	moves predicate.Predicate, judged func(event.UpdateEvent) wakeup) toolscache.ResourceEventHandlerFuncs {
	owners := k.ownerOf
	if k.owners != nil {
		owners = k.owners
	}
	wake := func(o any) {
		if o, ok := o.(client.Object); ok {
			for _, req := range owners(ctx, o) {
				queue.Add(req)
			}
		}
	}
	wakeSoon := func(o client.Object) {
		for _, req := range owners(ctx, o) {
			queue.AddAfter(req, progressInterval)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if o, ok := o.(client.Object); ok && moves.Create(event.CreateEvent{Object: o}) {
				wake(o)
			}
		},
		UpdateFunc: func(old, cur any) {
			oldObj, okOld := old.(client.Object)
			curObj, okCur := cur.(client.Object)
			if !okOld || !okCur {
				return
			}
			e := event.UpdateEvent{ObjectOld: oldObj, ObjectNew: curObj}
			if moves.Update(e) {
				wake(curObj)
				return
			}
			if judged == nil {
				return
			}
			switch judged(e) {
			case wakeNow:
				wake(curObj)
			case wakeLater:
				wakeSoon(curObj)
			case stayAsleep:
			}
		},
		DeleteFunc: func(o any) {
			if tombstone, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = tombstone.Obj
			}
			if o, ok := o.(client.Object); ok && moves.Delete(event.DeleteEvent{Object: o}) {
				wake(o)
			}
		},
	}
}

// WatchSecrets makes a change of any Secret that secret parameters read
// wake the Instances that read it, the first time an Instance has secret
// parameters. It watches the Secrets' metadata only: a new resourceVersion
// is enough to read the key again, and the cache holds no Secret's data.
func (k *kindWatches) WatchSecrets() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.secretsWatched {
		return nil
	}
	secrets := &metav1.PartialObjectMetadata{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := k.controller.Watch(source.Kind[client.Object](k.secretsCache, secrets, k.secretReaders,
		predicate.ResourceVersionChangedPredicate{})); err != nil {
		return err
	}
	k.secretsWatched = true
	return nil
}

// mayMovePlan lets through the changes of applied objects that can move a
// plan: a new health State or pod problem, a new spec, a new applied hash,
// labels, deletion. Each reconcile renders the plan's templates; an object's
// status alone changes many times more often than its health does.
var mayMovePlan = predicate.Funcs{
	// The reconcile that applied an object judged it from the API server's
	// answer: its arrival in the cache tells nothing new. Objects first seen
	// when their kind starts being watched belong to Instances that were
	// reconciled when the manager started.
	CreateFunc: func(e event.CreateEvent) bool {
		return e.Object.GetAnnotations()[kudov1beta1.AppliedHashAnnotation] == ""
	},
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, cur := e.ObjectOld, e.ObjectNew
		switch {
		// A resync: the Instance's own resync reconciles it, once.
		case old.GetResourceVersion() == cur.GetResourceVersion():
			return false
		// Kinds without a generation (ConfigMaps, Secrets) change their content unseen by it.
		case cur.GetGeneration() == 0 || cur.GetGeneration() != old.GetGeneration():
			return true
		// Other annotations, such as the revision a Deployment's controller
		// notes, do not make the object differ from what was applied.
		case old.GetAnnotations()[kudov1beta1.AppliedHashAnnotation] != cur.GetAnnotations()[kudov1beta1.AppliedHashAnnotation],
			!equality.Semantic.DeepEqual(old.GetLabels(), cur.GetLabels()),
			!equality.Semantic.DeepEqual(old.GetOwnerReferences(), cur.GetOwnerReferences()),
			old.GetDeletionTimestamp().IsZero() != cur.GetDeletionTimestamp().IsZero():
			return true
		}
		oldU, errOld := objects.Unstructured(old)
		curU, errCur := objects.Unstructured(cur)
		if errOld != nil || errCur != nil {
			return true
		}
		return health.State(oldU) != health.State(curU) || health.PodProblem(oldU) != health.PodProblem(curU)
	},
}

// podMayMovePlan lets through the changes of a pod a package applied as
// mayMovePlan does, but those of a workload's pod (watched to explain why a
// rollout is stuck) only when its problem changes: the workload's own status
// says when its rollout moves, and each pod's start would otherwise cost its
// Instance two reconciles more.
var podMayMovePlan = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool {
		if controllingInstance(e.Object) != "" {
			return mayMovePlan.Create(e)
		}
		return podProblem(e.Object) != ""
	},
	UpdateFunc: func(e event.UpdateEvent) bool {
		if controllingInstance(e.ObjectNew) != "" {
			return mayMovePlan.Update(e)
		}
		return podProblem(e.ObjectOld) != podProblem(e.ObjectNew)
	},
	DeleteFunc: func(e event.DeleteEvent) bool {
		return controllingInstance(e.Object) != "" || podProblem(e.Object) != ""
	},
	GenericFunc: func(event.GenericEvent) bool { return true },
}

func podProblem(pod client.Object) string {
	u, err := objects.Unstructured(pod)
	if err != nil {
		return ""
	}
	return health.PodProblem(u)
}

// mayWatch refuses a kind the manager may not list and watch, naming the
// RBAC it lacks: its informer would never sync, and every read of the kind
// from the cache would wait for it.
func (k *kindWatches) mayWatch(ctx context.Context, gvk schema.GroupVersionKind) error {
	mapping, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	resource := mapping.Resource.GroupResource()
	namespace := ""
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		namespace = k.namespace
	}
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: resource.Group, Resource: resource.Resource,
				Namespace: namespace},
		}}
		if err := k.client.Create(ctx, review); err != nil {
			return fmt.Errorf("checking access to %s: %w", resource, err)
		}
		switch {
		case review.Status.Allowed:
		case k.namespace != "" && namespace != "":
			return fmt.Errorf("the kubeconfig's user may not %s %s in namespace %s of its cluster: the manager reads every kind "+
				"an Instance applies there; grant it get, list and watch on them", verb, resource, namespace)
		case k.namespace != "":
			return fmt.Errorf("the kubeconfig's user may not %s %s in its cluster: the manager reads every kind an Instance "+
				"applies there; grant it get, list and watch on them", verb, resource)
		default:
			return fmt.Errorf("the manager may not %s %s: it reads every kind it watches (config/rbac/role.yaml); "+
				"grant it get, list and watch on them", verb, resource)
		}
	}
	return nil
}

// ownerOf maps an object to its Instance: the controller owner of an
// object the Instance applied; else the Instance its kudo.dev/instance label
// names — in its namespace for the pods of the Instance's workloads, in any
// namespace for a cluster-scoped object or one a template put in another
// namespace, which cannot have an owner reference to it.
func (k *kindWatches) ownerOf(ctx context.Context, obj client.Object) []reconcile.Request {
	if reqs := ownerInstance(ctx, obj); len(reqs) > 0 {
		return reqs
	}
	name := obj.GetLabels()[kudov1beta1.InstanceLabel]
	switch {
	case name == "":
		return nil
	case obj.GetNamespace() != "" && obj.GetAnnotations()[kudov1beta1.NamespaceAnnotation] == "":
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
	}
	instances := &kudov1beta1.InstanceList{}
	if err := k.client.List(ctx, instances, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, i := range instances.Items {
		if i.Name == name {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&i)})
		}
	}
	return reqs
}

// ownerInstance maps an object to the Instance that controls it, if any.
func ownerInstance(_ context.Context, obj client.Object) []reconcile.Request {
	if name := controllingInstance(obj); name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
	}
	return nil
}

// controllingInstance is the name of the Instance that controls obj, if any.
func controllingInstance(obj client.Object) string {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "Instance" && ref.APIVersion == kudov1beta1.GroupVersion.String() {
			return ref.Name
		}
	}
	return ""
}
