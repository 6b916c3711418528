package controllers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/remote"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/task"
)

// An Instance with spec.kubeConfig acts on another cluster: the manager
// applies, watches, judges and deletes its objects there, with a client and
// a cache of that cluster's (internal/remote), as the kubeconfig's user or,
// with spec.serviceAccountName, as that ServiceAccount of the Instance's
// namespace there, impersonated. Only the Instance and its status are
// written here. Each object there is marked kudo.dev/owner: no owner
// reference can name an Instance of another cluster.

// remoteClusters is what the Instance controller keeps of the clusters
// Instances name.
type remoteClusters struct {
	*remote.Clusters
	// backoff spaces the reconciles of an Instance whose cluster does not
	// answer.
	backoff workqueue.TypedRateLimiter[types.NamespacedName]

	mu sync.Mutex
	// kinds are the watches of each running cluster.
	kinds map[*remote.Cluster]*kindWatches
	// capabilities are what Helm charts' .Capabilities say of each.
	capabilities map[*remote.Cluster]*chartrender.Discovered
}

// Unreachable clusters are asked again after 1 s, doubling to 5 minutes.
const (
	unreachableFirstRetry = time.Second
	unreachableLastRetry  = 5 * time.Minute
)

// newRemoteClusters makes the clusters Instances name as the manager's own
// cluster is made: the same scheme, the cache's transform and kind of cache,
// but of the Instance's namespace only there, where a kubeconfig's user is
// often allowed no more.
func newRemoteClusters(policy remote.Policy, scheme *runtime.Scheme, trim objects.Trim) *remoteClusters {
	rc := &remoteClusters{
		backoff:      workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](unreachableFirstRetry, unreachableLastRetry),
		kinds:        map[*remote.Cluster]*kindWatches{},
		capabilities: map[*remote.Cluster]*chartrender.Discovered{},
	}
	rc.Clusters = &remote.Clusters{Policy: policy, Stopped: rc.forget,
		Options: func(ref remote.Ref) cluster.Options {
			return cluster.Options{Scheme: scheme, NewCache: objects.NewCache,
				Cache:  cache.Options{DefaultTransform: trim.ForCache, DefaultNamespaces: map[string]cache.Config{ref.Namespace: {}}},
				Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}}}
		}}
	return rc
}

// retryAfter is how long the Instance waits for its cluster to answer.
func (rc *remoteClusters) retryAfter(instance types.NamespacedName) time.Duration {
	if rc == nil {
		return unreachableFirstRetry
	}
	return rc.backoff.When(instance)
}

// answered: the Instance's cluster answered, or it names none; the next
// time it does not, the back-off starts over.
func (rc *remoteClusters) answered(instance types.NamespacedName) {
	if rc != nil {
		rc.backoff.Forget(instance)
	}
}

// release: the Instance is gone, and its cluster stops unless another
// Instance names it.
func (rc *remoteClusters) release(instance types.NamespacedName) {
	if rc != nil {
		rc.Release(instance)
		rc.backoff.Forget(instance)
	}
}

// forget drops what was kept for a cluster that stopped.
func (rc *remoteClusters) forget(cl *remote.Cluster) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	delete(rc.kinds, cl)
	delete(rc.capabilities, cl)
}

// capabilitiesOf are a cluster's Capabilities, read as its kubeconfig's
// user, whom discovery is open to as to every user of a cluster.
func (rc *remoteClusters) capabilitiesOf(cl *remote.Cluster) (*chartrender.Discovered, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if d := rc.capabilities[cl]; d != nil {
		return d, nil
	}
	discoverer, err := discovery.NewDiscoveryClientForConfig(cl.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("a discovery client of %s: %w", cl.Server, err)
	}
	d := chartrender.NewDiscovered(discoverer, chartrender.DiscoveryTTL, clock.RealClock{})
	rc.capabilities[cl] = d
	return d, nil
}

// kindsOf are the watches of a cluster's objects, made on first use.
func (r *InstanceReconciler) kindsOf(cl *remote.Cluster) *kindWatches {
	rc := r.clusters
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if k := rc.kinds[cl]; k != nil {
		return k
	}
	k := newKindWatches(r.kinds.controller, cl.GetCache(), nil, cl.GetRESTMapper(), cl.GetClient(), nil)
	k.namespace, k.owners = cl.Ref.Namespace, remoteOwners(cl.Ref.Namespace)
	rc.kinds[cl] = k
	return k
}

// remoteOwners maps an object of a remote cluster to the Instance of
// namespace that applied it, by its kudo.dev/owner annotation, or, for a
// workload's pod, which has none, by its kudo.dev/instance label. Either
// only wakes the Instance: whose the object is, objects.ClaimOf says.
func remoteOwners(namespace string) func(context.Context, client.Object) []reconcile.Request {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		name := obj.GetLabels()[kudov1beta1.InstanceLabel]
		if owner, ok := obj.GetAnnotations()[kudov1beta1.OwnerAnnotation]; ok {
			ns, n, found := strings.Cut(owner, "/")
			if !found || ns != namespace {
				return nil
			}
			name = n
		}
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}}
	}
}

// kubeConfigRef is the Secret and key an Instance's kubeconfig is in.
func kubeConfigRef(i *kudov1beta1.Instance) remote.Ref {
	ref := i.Spec.KubeConfig.SecretRef
	return remote.Ref{Namespace: i.Namespace, Secret: ref.Name, Key: cmp.Or(ref.Key, kudov1beta1.DefaultKubeConfigKey)}
}

// invalidKubeConfig is a kubeconfig that cannot be used until its Secret
// changes, which wakes the Instance (secretsReadBy).
type invalidKubeConfig struct{ err error }

func (e *invalidKubeConfig) Error() string { return e.err.Error() }
func (e *invalidKubeConfig) Unwrap() error { return e.err }

// remoteIdentity is whom the manager acts as for an Instance in the cluster
// its kubeconfig names; secrets reads the kubeconfig's Secret here.
func (r *InstanceReconciler) remoteIdentity(ctx context.Context, i *kudov1beta1.Instance, secrets client.Reader) (identity, error) {
	ref := kubeConfigRef(i)
	secret := &corev1.Secret{}
	if err := secrets.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Secret}, secret); err != nil {
		return identity{}, &invalidKubeConfig{fmt.Errorf("spec.kubeConfig: %s: %w", ref, err)}
	}
	data, ok := secret.Data[ref.Key]
	if !ok {
		return identity{}, &invalidKubeConfig{fmt.Errorf("spec.kubeConfig: Secret %s/%s has no key %s", ref.Namespace, ref.Secret, ref.Key)}
	}
	cl, err := r.clusters.Use(client.ObjectKeyFromObject(i), ref, data)
	if err != nil {
		return identity{}, &invalidKubeConfig{fmt.Errorf("spec.kubeConfig: %w", err)}
	}
	id, err := r.clusterIdentity(cl, i.Namespace, i.Spec.ServiceAccountName)
	id.secrets = secrets
	return id, err
}

// clusterIdentity is the kubeconfig's user in a remote cluster, or, when
// account is set, that service account of namespace there, impersonated.
func (r *InstanceReconciler) clusterIdentity(cl *remote.Cluster, namespace, account string) (identity, error) {
	key := fmt.Sprintf("%p %s", cl, account)
	if id, ok := r.impersonated.Get(key); ok {
		return id.(identity), nil
	}
	cfg := rest.CopyConfig(cl.GetConfig())
	if account != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: serviceAccountUser(namespace, account)}
	}
	mapper := cl.GetRESTMapper()
	writer, err := client.New(cfg, client.Options{Scheme: r.Scheme, Mapper: mapper,
		Cache: &client.CacheOptions{Reader: cl.GetCache(), Unstructured: true}})
	if err != nil {
		return identity{}, fmt.Errorf("a client of %s: %w", cl.Server, err)
	}
	reader, err := client.New(cfg, client.Options{Scheme: r.Scheme, Mapper: mapper})
	if err != nil {
		return identity{}, fmt.Errorf("a client of %s: %w", cl.Server, err)
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return identity{}, fmt.Errorf("a client of %s: %w", cl.Server, err)
	}
	capabilities, err := r.clusters.capabilitiesOf(cl)
	if err != nil {
		return identity{}, err
	}
	id := identity{writer: writer, reader: reader, files: &task.ExecCopier{Config: cfg, Clientset: clientset},
		target: target{cluster: cl, kinds: r.kindsOf(cl), apiReader: cl.GetAPIReader(), served: servedBy(mapper),
			scope: render.MapperScope(mapper), capabilities: capabilities.Get}}
	r.impersonated.Add(key, id, impersonatedFor)
	return id, nil
}

// servedBy says whether a remote cluster serves a kind; one that does not
// answer is asked again by the apply, whose error says so.
func servedBy(mapper meta.RESTMapper) func(schema.GroupVersionKind) bool {
	return func(gvk schema.GroupVersionKind) bool {
		_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		return err == nil || !meta.IsNoMatchError(err)
	}
}

// clusterTrouble makes of an error of the Instance's cluster what the
// Instance says, and returns what is left of it: a kubeconfig that cannot
// be used stalls the Instance until its Secret changes; a cluster that does
// not answer is asked again, ever less often, and the plan resumes where it
// stopped when it answers. Any other error is returned as it is.
func (r *InstanceReconciler) clusterTrouble(run *planRun, err error) error {
	i := run.instance
	if i.Spec.KubeConfig == nil || err == nil {
		return err
	}
	var invalid *invalidKubeConfig
	switch {
	case errors.As(err, &invalid):
		run.judge(&engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.InvalidKubeConfigReason,
			Message: invalid.Error()})
		return nil
	case remote.Unreachable(err):
		run.waitForCluster(err)
		return nil
	}
	return err
}

// waitForCluster notes that the Instance's cluster did not answer: its
// conditions say so, and the Instance is reconciled again after the back-off.
func (p *planRun) waitForCluster(err error) {
	where := kubeConfigRef(p.instance).String()
	if p.cluster != nil {
		where = p.cluster.Server + " (" + where + ")"
	}
	p.unreachable = &engine.Readiness{Ready: metav1.ConditionFalse, Reason: kudov1beta1.ClusterUnreachableReason,
		Message: fmt.Sprintf("cluster %s is unreachable: %v", where, err)}
	p.requeueAfter(p.clusterBackoff())
}
