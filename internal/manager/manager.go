// Package manager wires the kudo-ng manager once: its cache, the indexes,
// reconcilers and webhooks, the keys and the health checks. main.go calls
// it with its flags, the envtest suite with its own server, so the suite
// runs the manager users run.
package manager

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"oras.land/oras-go/v2/registry/remote/auth"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/controllers"
	"github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/planmetrics"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/task"
	"github.com/kudo-ng/kudo/internal/typedapi"
	kudowebhook "github.com/kudo-ng/kudo/internal/webhook"
)

// Config is what the manager runs with.
type Config struct {
	// Rest reaches the API server.
	Rest *rest.Config
	// Options are the controller-runtime manager's: scheme, servers,
	// leader election, the cache's sync period and selectors. New sets how
	// the cache holds objects.
	Options ctrl.Options
	// MaskKeys mask sensitive values; the key of the digests of Secrets'
	// data is derived from them.
	MaskKeys params.MaskKeys
	// RegistryCredentials are those packages are pulled with to verify
	// their signatures, unless a TrustPolicy names its own; nil:
	// anonymously.
	RegistryCredentials auth.CredentialFunc
	// Namespace is the manager's own, which holds the Secrets
	// TrustPolicies name.
	Namespace string
	// RenderLimits bound each render of a template; none set:
	// render.DefaultLimits.
	RenderLimits render.Limits
	// Instances are the Instance controller's settings (its flags); New
	// fills in what comes from the manager. Files, when nil, copies Pipe
	// tasks' files out of their pods with exec.
	Instances controllers.InstanceReconciler
	// Webhooks serves the admission webhooks.
	Webhooks bool
}

// New builds the manager and its controllers, and returns it with its
// Instance controller.
func New(ctx context.Context, cfg *Config) (ctrl.Manager, *controllers.InstanceReconciler, error) {
	trim := objects.Trim{DigestKey: cfg.MaskKeys.SecretDigestKey()}
	opts := cfg.Options
	// Objects that packages apply are read as unstructured, from the cache
	// too, which holds those of built-in kinds typed; cached objects keep
	// what plans read: no managed fields, pod templates nor pod specs.
	opts.Client.Cache = &client.CacheOptions{Unstructured: true}
	opts.NewCache = objects.NewCache
	opts.Cache.DefaultTransform = trim.ForCache
	sharded := opts.Cache.DefaultLabelSelector != nil
	if sharded {
		opts.Cache.ByObject = withShared(opts.Cache.ByObject)
	}
	mgr, err := ctrl.NewManager(cfg.Rest, opts)
	if err != nil {
		return nil, nil, err
	}
	if sharded {
		if cfg.Instances.ShardCache, err = secretsCache(mgr); err != nil {
			return nil, nil, err
		}
	}
	typedAPIs := controllers.NewTypedAPIs(mgr, cfg.Instances.MaxConcurrentReconciles)
	instances, err := setupControllers(ctx, mgr, cfg, trim, typedAPIs)
	if err != nil {
		return nil, nil, err
	}
	running := planmetrics.RunningSteps{Instances: runningInstances(mgr.GetCache(), mgr.GetClient(), typedAPIs)}
	if err := metrics.Registry.Register(running); err != nil {
		return nil, nil, err
	}
	if cfg.Webhooks {
		if err := kudowebhook.SetupWithManager(mgr, instances.RequireServiceAccount, cfg.RenderLimits, typedAPIs.Serves); err != nil {
			return nil, nil, fmt.Errorf("the webhooks: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, nil, err
	}
	// Ready once the webhooks serve: the API server calls them from a pod's
	// first admission on.
	ready := healthz.Ping
	if cfg.Webhooks {
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	return mgr, instances, mgr.AddReadyzCheck("readyz", ready)
}

// withShared adds to what a shard's cache holds whole: the kinds no shard
// label marks, which every shard's manager reads. Operators, their versions
// and TrustPolicies are shared by all shards, as are the
// CustomResourceDefinitions and webhooks of typed APIs; the pods of every
// Instance's workloads are those KUDO labels, whose templates get no shard
// label: changing it would restart them. (A Rollout is its shard's, as the
// Instances it moves: main.go selects both.)
func withShared(byObject map[client.Object]cache.ByObject) map[client.Object]cache.ByObject {
	out := maps.Clone(byObject)
	crds := &unstructured.Unstructured{}
	crds.SetGroupVersionKind(crd.V1.GroupVersion().WithKind("CustomResourceDefinition"))
	for _, obj := range []client.Object{&kudov1beta1.Operator{}, &kudov1beta1.OperatorVersion{}, &kudov1alpha1.TrustPolicy{},
		crds, &admissionregistrationv1.ValidatingWebhookConfiguration{}} {
		out[obj] = cache.ByObject{Label: labels.Everything()}
	}
	out[&corev1.Pod{}] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{kudov1beta1.HeritageLabel: "kudo"})}
	return out
}

// secretsCache is a cache of its own for the metadata of the Secrets that
// secret parameters read, which no shard label marks: a shard's cache holds
// only its own Secrets.
func secretsCache(mgr ctrl.Manager) (cache.Cache, error) {
	c, err := cache.New(mgr.GetConfig(), cache.Options{HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(),
		Mapper: mgr.GetRESTMapper(), DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, fmt.Errorf("the cache of secret parameters: %w", err)
	}
	return c, mgr.Add(c)
}

// setupControllers registers the four controllers; the typed objects'
// start as typedAPIs serves their kinds.
func setupControllers(ctx context.Context, mgr ctrl.Manager, cfg *Config, trim objects.Trim, typedAPIs *controllers.TypedAPIs) (
	*controllers.InstanceReconciler, error) {
	operators := &controllers.OperatorReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), TypedAPIs: typedAPIs}
	if err := operators.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("the Operator controller: %w", err)
	}
	operatorVersions := &controllers.OperatorVersionReconciler{Client: mgr.GetClient(), RenderLimits: cfg.RenderLimits,
		RegistryCredentials: cfg.RegistryCredentials, Namespace: cfg.Namespace, APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("kudo-ng")}
	if err := operatorVersions.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("the OperatorVersion controller: %w", err)
	}
	trustPolicies := &controllers.TrustPolicyReconciler{Client: mgr.GetClient()}
	if err := trustPolicies.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("the TrustPolicy controller: %w", err)
	}
	rollouts := &controllers.RolloutReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("kudo-ng"), Clock: time.Now}
	if err := rollouts.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("the Rollout controller: %w", err)
	}
	instances := &cfg.Instances
	instances.Client, instances.Scheme, instances.APIReader = mgr.GetClient(), mgr.GetScheme(), mgr.GetAPIReader()
	instances.Recorder, instances.Mapper, instances.Config = mgr.GetEventRecorderFor("kudo-ng"), mgr.GetRESTMapper(), cfg.Rest
	instances.MaskKeys, instances.Trim, instances.RenderLimits = cfg.MaskKeys, trim, cfg.RenderLimits
	instances.ServesTyped = typedAPIs.Serves
	if instances.Files == nil {
		clientset, err := kubernetes.NewForConfig(cfg.Rest)
		if err != nil {
			return nil, err
		}
		instances.Files = &task.ExecCopier{Config: cfg.Rest, Clientset: clientset}
	}
	if err := instances.SetupWithManager(ctx, mgr); err != nil {
		return nil, fmt.Errorf("the Instance controller: %w", err)
	}
	return instances, nil
}

// runningInstances yields the Instances, with their records, for the
// running-steps metric, from the store of the cache's informer itself: a
// List would copy each Instance into a new slice at each scrape (10 MB a
// scrape at 10,000 Instances, most of what the manager allocated in that
// bench run). What the store holds is read, never changed.
func runningInstances(
	informers cache.Informers, c client.Reader, typedAPIs *controllers.TypedAPIs,
) func(context.Context) iter.Seq2[*kudov1beta1.Instance, error] {
	return func(ctx context.Context) iter.Seq2[*kudov1beta1.Instance, error] {
		return func(yield func(*kudov1beta1.Instance, error) bool) {
			informer, err := informers.GetInformer(ctx, &kudov1beta1.Instance{}, cache.BlockUntilSynced(false))
			if err != nil {
				yield(nil, err)
				return
			}
			store, ok := informer.(interface{ GetStore() toolscache.Store })
			if !ok {
				yield(nil, fmt.Errorf("the Instances' informer, a %T, has no store to read", informer))
				return
			}
			for _, obj := range store.GetStore().List() {
				i, ok := obj.(*kudov1beta1.Instance)
				if !ok {
					continue
				}
				if typedapi.HolderOf(i) != nil {
					// The record of an Instance that runs a typed object is in
					// the object's status: read into a shallow copy, whose
					// status ReadRecord replaces.
					record := *i
					if _, err := typedapi.ReadRecord(ctx, c, &record, typedAPIs.Serves); err != nil {
						yield(nil, err)
						return
					}
					i = &record
				}
				if !yield(i, nil) {
					return
				}
			}
		}
	}
}
