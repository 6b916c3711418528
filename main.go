// Command manager runs kudo-ng's controllers: Operator, OperatorVersion and
// Instance.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/controllers"
	"github.com/kudo-ng/kudo/internal/apimetrics"
	"github.com/kudo-ng/kudo/internal/manager"
	"github.com/kudo-ng/kudo/internal/maskkey"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/version"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kudov1beta1.AddToScheme(scheme))
	utilruntime.Must(kudov1alpha1.AddToScheme(scheme))
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

	if opts.memoryLimitRatio > 0 {
		// Outside a container, or in one without a limit, nothing is set.
		if _, err := memlimit.SetGoMemLimitWithOpts(memlimit.WithRatio(opts.memoryLimitRatio),
			memlimit.WithLogger(slog.New(logr.ToSlogHandler(setupLog)))); err != nil {
			setupLog.Error(err, "unable to set the soft memory limit")
			os.Exit(1)
		}
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
	registryCredentials, err := opts.registryCredentials()
	if err != nil {
		setupLog.Error(err, "unable to read the registries' credentials")
		os.Exit(1)
	}
	remotePolicy, _ := opts.remotePolicy() // validate checked it
	namespace, err := ownNamespace(serviceAccountNamespaceFile)
	if err != nil {
		setupLog.Error(err, "unable to read the manager's namespace")
		os.Exit(1)
	}
	mgr, _, err := manager.New(ctx, &manager.Config{
		Rest: cfg, Options: opts.managerOptions(scheme), MaskKeys: maskKeys, RenderLimits: opts.renderLimits,
		RegistryCredentials: registryCredentials, Namespace: namespace,
		Instances: controllers.InstanceReconciler{
			MaxConcurrentReconciles: opts.maxConcurrentReconciles,
			DriftCorrection:         opts.driftCorrection,
			PlanTimeout:             opts.planTimeout,
			CleanupTimeout:          opts.cleanupTimeout,
			RequireServiceAccount:   opts.requireServiceAccount,
			MultiTenant:             opts.multiTenant,
			RemoteClusters:          remotePolicy,
		},
		Webhooks: opts.enableWebhooks,
	})
	if err != nil {
		setupLog.Error(err, "unable to set up the manager")
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
