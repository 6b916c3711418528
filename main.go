// Command manager runs kudo-ng's controllers: Operator, OperatorVersion and
// Instance.
package main

import (
	"context"
	"flag"
	"os"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/controllers"
	"github.com/kudo-ng/kudo/internal/apimetrics"
	"github.com/kudo-ng/kudo/internal/maskkey"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/planmetrics"
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
	var opts options
	opts.bindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts.logging)))
	if err := opts.validate(); err != nil {
		setupLog.Error(err, "invalid flags")
		os.Exit(2)
	}

	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = float32(opts.kubeAPIQPS), opts.kubeAPIBurst
	cfg.Wrap(apimetrics.Wrap)
	ctx := ctrl.SetupSignalHandler()
	maskKeys, err := loadMaskKeys(ctx, cfg, &opts)
	if err != nil {
		setupLog.Error(err, "unable to read the mask key")
		os.Exit(1)
	}
	trim := objects.Trim{DigestKey: maskKeys.SecretDigestKey()}
	mgr, err := ctrl.NewManager(cfg, opts.managerOptions(scheme, trim))
	if err != nil {
		setupLog.Error(err, "unable to create manager")
		os.Exit(1)
	}
	if err := (&controllers.OperatorReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", "Operator")
		os.Exit(1)
	}
	operatorVersions := &controllers.OperatorVersionReconciler{Client: mgr.GetClient(), RenderLimits: opts.renderLimits}
	if err := operatorVersions.SetupWithManager(mgr); err != nil {
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
		MaxConcurrentReconciles: opts.maxConcurrentReconciles,
		DriftCorrection:         opts.driftCorrection,
		PlanTimeout:             opts.planTimeout,
		CleanupTimeout:          opts.cleanupTimeout,
		Config:                  cfg,
		RequireServiceAccount:   opts.requireServiceAccount,
		MultiTenant:             opts.multiTenant,
		APIReader:               mgr.GetAPIReader(),
		MaskKeys:                maskKeys,
		Trim:                    trim,
		RenderLimits:            opts.renderLimits,
	}
	metrics.Registry.MustRegister(planmetrics.RunningSteps{List: func(ctx context.Context) ([]kudov1beta1.Instance, error) {
		list := &kudov1beta1.InstanceList{}
		// Read only, from the cache: no copy of every Instance at each scrape.
		err := mgr.GetClient().List(ctx, list, client.UnsafeDisableDeepCopy)
		return list.Items, err
	}})
	if err := instances.SetupWithManager(ctx, mgr); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", "Instance")
		os.Exit(1)
	}

	if opts.enableWebhooks {
		if err := kudowebhook.SetupWithManager(mgr, opts.requireServiceAccount, opts.renderLimits); err != nil {
			setupLog.Error(err, "unable to create webhooks")
			os.Exit(1)
		}
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	// Ready once the webhooks serve: the API server calls them from a
	// pod's first admission on.
	ready := healthz.Ping
	if opts.enableWebhooks {
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", ready); err != nil {
		setupLog.Error(err, "unable to set up ready check")
		os.Exit(1)
	}

	setupLog.Info("starting manager", "version", version.Get())
	if err := mgr.Start(ctx); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}

// loadMaskKeys reads the keys that mask sensitive values, once: a rotation
// restarts the manager. The client reads from the API server, as the
// manager's cache holds no Secret's data.
func loadMaskKeys(ctx context.Context, cfg *rest.Config, opts *options) (params.MaskKeys, error) {
	key, err := opts.maskKey(serviceAccountNamespaceFile)
	if err != nil {
		return params.MaskKeys{}, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return params.MaskKeys{}, err
	}
	keys, err := maskkey.Load(ctx, c, key)
	if err != nil {
		return params.MaskKeys{}, err
	}
	setupLog.Info("Read the mask key", "Secret", klog.KRef(key.Namespace, key.Name), "previousKey", len(keys.Previous) > 0)
	return keys, nil
}
