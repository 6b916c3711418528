package controllers_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/controllers"
	"github.com/kudo-ng/kudo/internal/manager"
	"github.com/kudo-ng/kudo/internal/maskkey"
	"github.com/kudo-ng/kudo/internal/remote"
	"github.com/kudo-ng/kudo/internal/render"
)

// The suite runs a real kube-apiserver and etcd (KUBEBUILDER_ASSETS, set by
// `make test-unit`) with the generated CRDs, and the three controllers.
var (
	k8sClient client.Client
	// files serves the Pipe tasks' files: envtest runs no pods.
	files   = &fakeFiles{content: map[string]string{}}
	testEnv *envtest.Environment
	cancel  context.CancelFunc
	// instances is the Instance controller the suite's manager runs, and
	// managerCache its cache.
	instances    *controllers.InstanceReconciler
	managerCache cache.Cache
	// remoteEnv is a second API server, the cluster Instances with
	// spec.kubeConfig act on; remoteClient reaches it as its admin, and
	// remoteKubeConfig is a kubeconfig of it the manager may use.
	remoteEnv        *envtest.Environment
	remoteClient     client.Client
	remoteKubeConfig []byte
	// remoteProxy forwards to the remote API server, and
	// proxiedKubeConfig reaches it through it: a test takes it away.
	remoteProxy       *tcpProxy
	proxiedKubeConfig []byte
)

// managerNamespace is the manager's own namespace in the suite: its mask
// key's, and that of the Secrets TrustPolicies name.
const managerNamespace = "kudo-system"

// suiteRenderLimits are the manager's render limits in the suite: smaller
// than the defaults, so that a test sees they are its own.
var suiteRenderLimits = render.Limits{MaxOutput: 3 << 20, Timeout: 2 * time.Second}

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	RunSpecs(t, "Controller Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())

	Expect(kudov1beta1.AddToScheme(scheme.Scheme)).To(Succeed())
	Expect(kudov1alpha1.AddToScheme(scheme.Scheme)).To(Succeed())
	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		// The real API server calls the webhooks, as on a cluster.
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{filepath.Join("..", "config", "webhook")}},
	}
	cfg, err := testEnv.Start()
	Expect(err).NotTo(HaveOccurred())

	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())

	remoteEnv = &envtest.Environment{}
	remoteCfg, err := remoteEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	remoteClient, err = client.New(remoteCfg, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	remoteAdmin, err := remoteEnv.ControlPlane.AddUser(envtest.User{Name: "remote-admin", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	remoteKubeConfig, err = remoteAdmin.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	remoteServer, err := url.Parse(remoteCfg.Host)
	Expect(err).NotTo(HaveOccurred())
	remoteProxy, err = newTCPProxy(remoteServer.Host)
	Expect(err).NotTo(HaveOccurred())
	proxiedKubeConfig = bytes.ReplaceAll(remoteKubeConfig, []byte(remoteServer.Host), []byte(remoteProxy.addr))

	// As main does: the manager makes its mask key in its namespace.
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace}})).To(Succeed())
	maskKeys, err := maskkey.Load(ctx, k8sClient, types.NamespacedName{Namespace: managerNamespace, Name: maskkey.DefaultName})
	Expect(err).NotTo(HaveOccurred())
	// The manager users run (internal/manager), with the suite's servers.
	mgr, reconciler, err := manager.New(ctx, &manager.Config{
		Rest: cfg,
		Options: ctrl.Options{
			Scheme:                 scheme.Scheme,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			WebhookServer: webhook.NewServer(webhook.Options{
				Host: testEnv.WebhookInstallOptions.LocalServingHost, Port: testEnv.WebhookInstallOptions.LocalServingPort,
				CertDir: testEnv.WebhookInstallOptions.LocalServingCertDir,
			}),
		},
		MaskKeys: maskKeys, RenderLimits: suiteRenderLimits, Namespace: managerNamespace,
		Instances: controllers.InstanceReconciler{Files: files, MaxConcurrentReconciles: 4,
			RemoteClusters: remote.Policy{Servers: []string{remoteServer.Host, remoteProxy.addr}}},
		Webhooks: true,
	})
	Expect(err).NotTo(HaveOccurred())
	instances, managerCache = reconciler, mgr.GetCache()
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
})

var _ = AfterSuite(func() {
	cancel()
	Expect(testEnv.Stop()).To(Succeed())
	Expect(remoteEnv.Stop()).To(Succeed())
})

// newNamespace creates a namespace of its own for one test.
func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// fakeFiles stands in for exec into a pipe pod, which neither envtest nor
// simulated nodes can do.
type fakeFiles struct {
	mu      sync.Mutex
	content map[string]string
}

func (f *fakeFiles) CopyFile(_ context.Context, _ *corev1.Pod, _, path string, _ int) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.content[path]
	if !ok {
		return nil, fmt.Errorf("no such file %s", path)
	}
	return []byte(c), nil
}
