package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/maskkey"
	"github.com/kudo-ng/kudo/internal/remote"
	"github.com/kudo-ng/kudo/internal/render"
)

// options are the manager's flags.
type options struct {
	metricsAddr             string
	secureMetrics           bool
	enableHTTP2             bool
	probeAddr               string
	pprofAddr               string
	enableLeaderElection    bool
	leaderElectionNamespace string
	maxConcurrentReconciles int
	kubeAPIQPS              float64
	kubeAPIBurst            int
	syncPeriod              time.Duration
	driftCorrection         bool
	planTimeout             time.Duration
	cleanupTimeout          time.Duration
	renderLimits            render.Limits
	requireServiceAccount   bool
	multiTenant             bool
	shard                   string
	sharded                 bool
	maskKeyNamespace        string
	registryConfig          string
	maskKeySecret           string
	enableWebhooks          bool
	webhookCertDir          string
	webhookHost             string
	webhookPort             int
	memoryLimitRatio        float64
	remoteClusters          string
	logging                 zap.Options
}

func (o *options) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "The address of the pprof endpoint (default off).")
	fs.BoolVar(&o.enableLeaderElection, "leader-elect", true,
		"Enable leader election for controller manager, so that only one manager is active at a time.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election lease; outside a cluster it defaults to kube-system.")
	// A reconcile mostly waits, for the API server and for the cache to show
	// its writes: many more workers than cores. With 16, a burst of 1,000
	// Instances kept every worker waiting and the queue ~10 s long.
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 64, "How many Instances are reconciled at once.")
	// The API server's priority and fairness protects it; a client-side limit
	// only slows a manager with many Instances to start.
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", -1, "Requests per second to the API server, sustained (-1: no client-side limit).")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 0, "Requests to the API server in a burst, with --kube-api-qps.")
	fs.DurationVar(&o.syncPeriod, "sync-period", 10*time.Hour,
		"How often every Instance is reconciled even though nothing changed.")
	fs.BoolVar(&o.driftCorrection, "drift-correction", false, "Apply again what an Instance's plans applied when someone "+
		"else changes or deletes it, for Instances without the annotation "+kudov1beta1.DriftCorrectionAnnotation+" (\"true\" or \"false\").")
	fs.DurationVar(&o.planTimeout, "plan-timeout", 0, "How long a plan run may take when its plan declares no timeout "+
		"(past it, its running steps end in FATAL_ERROR); 0: no limit.")
	fs.DurationVar(&o.cleanupTimeout, "cleanup-timeout", 15*time.Minute, "How long the cleanup plan of a deleted Instance may "+
		"take when it declares no timeout; past it, it ends in FATAL_ERROR and the Instance's objects are removed, so that "+
		"a cleanup that cannot finish (its namespace being deleted) holds neither the Instance nor the namespace. 0: --plan-timeout's.")
	// Templates are code that whoever creates an OperatorVersion writes and
	// the manager runs: bounded, one cannot take the manager's memory or time.
	fs.IntVar(&o.renderLimits.MaxOutput, "render-max-bytes", render.DefaultLimits.MaxOutput, "The most bytes one template may "+
		"render (4 MiB, above the 1.5 MiB etcd takes in one object); nothing a template makes or prints on the way may be larger, "+
		"and all its functions make together at most 16 times that. A template past it, or past --render-timeout, fails its "+
		"plan step (FATAL_ERROR), and an OperatorVersion with one is not Ready.")
	fs.DurationVar(&o.renderLimits.Timeout, "render-timeout", render.DefaultLimits.Timeout, "How long one template may take to render.")
	fs.BoolVar(&o.requireServiceAccount, "require-service-account", false, "Refuse Instances without spec.serviceAccountName "+
		"and run no plan of them, so that every Instance's objects are applied with the permissions of a ServiceAccount of its namespace.")
	// An environment variable too, for OLM: a Subscription's spec.config.env
	// sets it, where nothing sets the manager's arguments.
	fs.BoolVar(&o.multiTenant, "multi-tenant", os.Getenv("KUDO_MULTI_TENANT") == "true", "Run every Instance's work "+
		"(plans, drift correction, pruning, cleanup, Pipe pods, reading secret parameters) as a ServiceAccount of its namespace: "+
		"spec.serviceAccountName, or \"default\" when it names none; never with the manager's own rights (default $KUDO_MULTI_TENANT).")
	fs.StringVar(&o.shard, "shard", "", "Reconcile only the Instances labelled "+kudov1beta1.ShardLabel+"=SHARD, with a leader "+
		"election of this shard's own; without it, the Instances without the label (as Flux's sharding). It caches only "+
		"the objects its Instances applied, which carry the label too.")
	fs.BoolVar(&o.sharded, "sharded", false, "For the manager without --shard, when shards run beside it: cache only the "+
		"objects of the Instances without the shard label, as each shard's manager caches its own, not every shard's.")
	fs.StringVar(&o.registryConfig, "registry-config", "", "Docker configuration file (config.json, as docker login writes it, "+
		"or a kubernetes.io/dockerconfigjson Secret's .dockerconfigjson, mounted) whose credentials the manager pulls packages with "+
		"to verify their signatures (TrustPolicies); none: anonymously.")
	fs.StringVar(&o.maskKeyNamespace, "mask-key-namespace", "", "Namespace of the Secret with the key that masks the values "+
		"of sensitive parameters in Instances' status (default: the manager's own; outside a cluster, "+outsideClusterNamespace+").")
	fs.StringVar(&o.maskKeySecret, "mask-key-secret", maskkey.DefaultName, "Name of that Secret; the manager makes it, with a "+
		"random key, when it does not exist.")
	fs.BoolVar(&o.enableWebhooks, "enable-webhooks", true,
		"Serve the Instance and OperatorVersion admission webhooks (they need a serving certificate in --webhook-cert-dir).")
	fs.StringVar(&o.webhookCertDir, "webhook-cert-dir", "", "Directory with tls.crt and tls.key of the webhook server "+
		"(default: controller-runtime's, where config/default mounts cert-manager's certificate).")
	fs.StringVar(&o.webhookHost, "webhook-host", "", "Address the webhook server binds to (default all).")
	fs.IntVar(&o.webhookPort, "webhook-port", 9443, "Port of the webhook server.")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, behind Kubernetes authentication and authorization.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Enable HTTP/2 for the metrics and webhook servers (off because of CVE-2023-44487 and CVE-2023-39325).")
	// Go's collector lets the heap grow to twice what is live before it
	// runs: at 10,000 Instances that passed the Deployment's 512 MiB limit
	// with 234 MB live (docs/benchmarks.md). A soft limit under the
	// container's makes it collect sooner instead.
	fs.StringVar(&o.remoteClusters, "remote-clusters", "", "The API servers, as HOST:PORT, comma-separated, that Instances may "+
		"act on with spec.kubeConfig (https only); none: no Instance acts on another cluster.")
	fs.Float64Var(&o.memoryLimitRatio, "memory-limit-ratio", 0.9, "Hold the manager's memory under this fraction of its "+
		"container's memory limit (its cgroup's), as Go's soft memory limit: near it, garbage is collected more often. "+
		"0: no soft limit; GOMEMLIMIT, when set, wins.")
	o.logging = zap.Options{Development: true}
	o.logging.BindFlags(fs)
}

// tlsOpts are the metrics and webhook servers': HTTP/1.1 only unless
// --enable-http2.
func (o *options) tlsOpts() []func(*tls.Config) {
	if o.enableHTTP2 {
		return nil
	}
	return []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
}

func (o *options) metricsOptions() metricsserver.Options {
	opts := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.secureMetrics,
		TLSOpts:       o.tlsOpts(),
	}
	if o.secureMetrics {
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return opts
}

// serviceAccountNamespaceFile names the namespace of the manager's pod; it
// is not there outside a cluster.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// outsideClusterNamespace is the manager's namespace when it runs outside
// a cluster (make run): make deploy's, whose manager then shares the mask
// key and the Secrets TrustPolicies name.
const outsideClusterNamespace = "kudo-system"

func (o *options) managerOptions(s *runtime.Scheme) ctrl.Options {
	leaderElectionNamespace := o.leaderElectionNamespace
	if o.enableLeaderElection && leaderElectionNamespace == "" {
		// Outside a cluster, the manager has no namespace of its own.
		if _, err := os.Stat(serviceAccountNamespaceFile); err != nil {
			leaderElectionNamespace = "kube-system"
		}
	}
	return ctrl.Options{
		Scheme:  s,
		Metrics: o.metricsOptions(),
		WebhookServer: webhook.NewServer(webhook.Options{
			TLSOpts: o.tlsOpts(), CertDir: o.webhookCertDir, Host: o.webhookHost, Port: o.webhookPort,
		}),
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.enableLeaderElection,
		LeaderElectionID:        o.leaderElectionID(),
		LeaderElectionNamespace: leaderElectionNamespace,
		// The process exits once the manager stops, so the lease can go at
		// once: a rollout's new pod leads without waiting for it to expire.
		LeaderElectionReleaseOnCancel: true,
		// Instances of this shard only, and the Rollouts that move them;
		// with shards, the objects of this shard only. How the cache holds
		// objects is internal/manager's.
		Cache: cache.Options{SyncPeriod: &o.syncPeriod, DefaultLabelSelector: o.objectSelector(),
			ByObject: map[client.Object]cache.ByObject{
				&kudov1beta1.Instance{}: {Label: o.shardSelector()}, &kudov1alpha1.Rollout{}: {Label: o.shardSelector()},
			}},
	}
}

// objectSelector selects the objects of this shard's Instances, which carry
// its label (render.Site.Shard): nil, every object, for the manager
// without --shard unless --sharded says that shards run beside it.
func (o *options) objectSelector() labels.Selector {
	if o.shard == "" && !o.sharded {
		return nil
	}
	return o.shardSelector()
}

// shardSelector selects the Instances of this manager's shard.
func (o *options) shardSelector() labels.Selector {
	op, values := selection.DoesNotExist, []string(nil)
	if o.shard != "" {
		op, values = selection.Equals, []string{o.shard}
	}
	req, err := labels.NewRequirement(kudov1beta1.ShardLabel, op, values)
	if err != nil {
		// validate refused the shard already.
		panic(err)
	}
	return labels.NewSelector().Add(*req)
}

// leaderElectionID is one per shard: the shards run side by side, each
// with its own leader.
func (o *options) leaderElectionID() string {
	if o.shard == "" {
		return "manager.kudo.dev"
	}
	return "manager-" + o.shard + ".kudo.dev"
}

// maskKey names the Secret of the mask key (internal/maskkey), by default in
// the manager's own namespace, which namespaceFile names.
func (o *options) maskKey(namespaceFile string) (types.NamespacedName, error) {
	key := types.NamespacedName{Namespace: o.maskKeyNamespace, Name: o.maskKeySecret}
	if key.Namespace != "" {
		return key, nil
	}
	ns, err := ownNamespace(namespaceFile)
	key.Namespace = ns
	return key, err
}

// ownNamespace is the manager's namespace, which namespaceFile names; out
// of a cluster, outsideClusterNamespace.
func ownNamespace(namespaceFile string) (string, error) {
	ns, err := os.ReadFile(namespaceFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return outsideClusterNamespace, nil
	case err != nil:
		return "", fmt.Errorf("reading the manager's namespace: %w", err)
	}
	return strings.TrimSpace(string(ns)), nil
}

// validate refuses a shard that is no label value, a mask key's Secret no
// object can be named, and render limits that would refuse every template.
func (o *options) validate() error {
	if errs := validation.IsValidLabelValue(o.shard); len(errs) > 0 {
		return fmt.Errorf("--shard %q: %s", o.shard, strings.Join(errs, "; "))
	}
	if o.shard != "" && o.sharded {
		return errors.New("--sharded is for the manager without --shard: a shard's manager caches its own objects already")
	}
	if errs := validation.IsDNS1123Subdomain(o.maskKeySecret); len(errs) > 0 {
		return fmt.Errorf("--mask-key-secret %q: %s", o.maskKeySecret, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(o.maskKeyNamespace); o.maskKeyNamespace != "" && len(errs) > 0 {
		return fmt.Errorf("--mask-key-namespace %q: %s", o.maskKeyNamespace, strings.Join(errs, "; "))
	}
	if o.memoryLimitRatio < 0 || o.memoryLimitRatio > 1 {
		return fmt.Errorf("--memory-limit-ratio %g: a fraction from 0 (off) to 1", o.memoryLimitRatio)
	}
	if _, err := o.remotePolicy(); err != nil {
		return err
	}
	if o.renderLimits.MaxOutput <= 0 || o.renderLimits.Timeout <= 0 {
		return fmt.Errorf("--render-max-bytes %d and --render-timeout %s must be positive", o.renderLimits.MaxOutput, o.renderLimits.Timeout)
	}
	return nil
}

// remotePolicy is where --remote-clusters lets Instances act.
func (o *options) remotePolicy() (remote.Policy, error) {
	var p remote.Policy
	for _, server := range strings.Split(o.remoteClusters, ",") {
		if server = strings.TrimSpace(server); server == "" {
			continue
		}
		host, port, err := net.SplitHostPort(server)
		if _, portErr := strconv.ParseUint(port, 10, 16); err != nil || host == "" || portErr != nil {
			return remote.Policy{}, fmt.Errorf("--remote-clusters: %q is not HOST:PORT", server)
		}
		p.Servers = append(p.Servers, server)
	}
	return p, nil
}

// registryCredentials are those of --registry-config, which must exist;
// nil without it.
func (o *options) registryCredentials() (auth.CredentialFunc, error) {
	if o.registryConfig == "" {
		return nil, nil
	}
	if _, err := os.Stat(o.registryConfig); err != nil {
		return nil, fmt.Errorf("--registry-config: %w", err)
	}
	store, err := credentials.NewStore(o.registryConfig, credentials.StoreOptions{})
	if err != nil {
		return nil, fmt.Errorf("--registry-config %s: %w", o.registryConfig, err)
	}
	return credentials.Credential(store), nil
}
