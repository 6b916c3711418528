// Command manager runs kudo-ng's controllers: Operator, OperatorVersion and
// Instance.
package main

import (
	"crypto/tls"
	"flag"
	"os"
	"time"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/controllers"
	"github.com/kudo-ng/kudo/internal/apimetrics"
	"github.com/kudo-ng/kudo/internal/task"
	"github.com/kudo-ng/kudo/internal/version"
	kudowebhook "github.com/kudo-ng/kudo/internal/webhook"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kudov1beta1.AddToScheme(scheme))
}

func main() {
	var metricsAddr, probeAddr, pprofAddr, leaderElectionNamespace, webhookCertDir, webhookHost string
	var enableLeaderElection, secureMetrics, enableHTTP2, enableWebhooks bool
	var webhookPort int
	var maxConcurrentReconciles, kubeAPIBurst int
	var kubeAPIQPS float64
	var syncPeriod time.Duration
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "", "The address of the pprof endpoint (default off).")
	flag.BoolVar(&enableLeaderElection, "leader-elect", true,
		"Enable leader election for controller manager, so that only one manager is active at a time.")
	flag.StringVar(&leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election lease; outside a cluster it defaults to kube-system.")
	// A reconcile mostly waits, for the API server and for the cache to show
	// its writes: many more workers than cores. With 16, a burst of 1,000
	// Instances kept every worker waiting and the queue ~10 s long.
	flag.IntVar(&maxConcurrentReconciles, "max-concurrent-reconciles", 64, "How many Instances are reconciled at once.")
	// The API server's priority and fairness protects it; a client-side limit
	// only slows a manager with many Instances to start.
	flag.Float64Var(&kubeAPIQPS, "kube-api-qps", -1, "Requests per second to the API server, sustained (-1: no client-side limit).")
	flag.IntVar(&kubeAPIBurst, "kube-api-burst", 0, "Requests to the API server in a burst, with --kube-api-qps.")
	flag.DurationVar(&syncPeriod, "sync-period", 10*time.Hour,
		"How often every Instance is reconciled even though nothing changed.")
	flag.BoolVar(&enableWebhooks, "enable-webhooks", true,
		"Serve the Instance and OperatorVersion admission webhooks (they need a serving certificate in --webhook-cert-dir).")
	flag.StringVar(&webhookCertDir, "webhook-cert-dir", "", "Directory with tls.crt and tls.key of the webhook server "+
		"(default: controller-runtime's, where config/default mounts cert-manager's certificate).")
	flag.StringVar(&webhookHost, "webhook-host", "", "Address the webhook server binds to (default all).")
	flag.IntVar(&webhookPort, "webhook-port", 9443, "Port of the webhook server.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, behind Kubernetes authentication and authorization.")
	flag.BoolVar(&enableHTTP2, "enable-http2", false,
		"Enable HTTP/2 for the metrics and webhook servers (off because of CVE-2023-44487 and CVE-2023-39325).")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	var tlsOpts []func(*tls.Config)
	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOptions := metricsserver.Options{
		BindAddress:   metricsAddr,
		SecureServing: secureMetrics,
		TLSOpts:       tlsOpts,
	}
	if secureMetrics {
		metricsOptions.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	if enableLeaderElection && leaderElectionNamespace == "" {
		if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err != nil {
			leaderElectionNamespace = "kube-system"
		}
	}
	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = float32(kubeAPIQPS), kubeAPIBurst
	cfg.Wrap(apimetrics.Wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsOptions,
		WebhookServer: webhook.NewServer(webhook.Options{
			TLSOpts: tlsOpts, CertDir: webhookCertDir, Host: webhookHost, Port: webhookPort,
		}),
		HealthProbeBindAddress:  probeAddr,
		PprofBindAddress:        pprofAddr,
		LeaderElection:          enableLeaderElection,
		LeaderElectionID:        "manager.kudo.dev",
		LeaderElectionNamespace: leaderElectionNamespace,
		// Objects that packages apply are read as unstructured, from the cache too.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		// Cached objects keep what plans read: no managed fields, pod templates nor pod specs.
		Cache: cache.Options{SyncPeriod: &syncPeriod, DefaultTransform: task.TrimForCache},
	})
	if err != nil {
		setupLog.Error(err, "unable to create manager")
		os.Exit(1)
	}

	ctx := ctrl.SetupSignalHandler()
	if err := (&controllers.OperatorReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", "Operator")
		os.Exit(1)
	}
	if err := (&controllers.OperatorVersionReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", "OperatorVersion")
		os.Exit(1)
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		setupLog.Error(err, "unable to create clientset")
		os.Exit(1)
	}
	instances := &controllers.InstanceReconciler{
		Client:                  mgr.GetClient(),
		Scheme:                  mgr.GetScheme(),
		Recorder:                mgr.GetEventRecorderFor("kudo-ng"),
		Mapper:                  mgr.GetRESTMapper(),
		Files:                   &task.ExecCopier{Config: cfg, Clientset: clientset},
		MaxConcurrentReconciles: maxConcurrentReconciles,
	}
	if err := instances.SetupWithManager(ctx, mgr); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", "Instance")
		os.Exit(1)
	}

	if enableWebhooks {
		if err := kudowebhook.SetupWithManager(mgr); err != nil {
			setupLog.Error(err, "unable to create webhooks")
			os.Exit(1)
		}
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up ready check")
		os.Exit(1)
	}

	setupLog.Info("starting manager", "version", version.Get())
	if err := mgr.Start(ctx); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}
