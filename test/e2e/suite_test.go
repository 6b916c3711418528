// Package e2e runs kudo-ng end to end on the local control plane: the
// manager as its own process or, built into its image, as a pod on the real
// node; real KUDO packages, on simulated nodes; our own on the real one.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/corpus"
	"github.com/kudo-ng/kudo/test/localcluster"
)

// conformancePackage is the operator/ directory of the corpus' package
// name; the spec is skipped when the corpus is absent.
func conformancePackage(name string) string {
	if conformance == "" {
		Skip(corpus.SkipReason)
	}
	return filepath.Join(conformance, name, "operator")
}

const (
	metricsAddress = "127.0.0.1:16650"
	webhookPort    = "16651"
)

var (
	cluster       *localcluster.Cluster
	k8sClient     client.Client
	managerOutput *gbytes.Buffer
	// conformance is the corpus of KUDO's real packages, "" when absent:
	// the specs that need it skip (conformancePackage).
	conformance string
	// hello is the project's own first package.
	hello = filepath.Join(corpus.Examples(), "hello", "operator")
	// specNamespaces are the namespaces the running spec made, for its
	// report if it fails.
	specNamespaces []string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	RunSpecs(t, "kudo-ng end to end")
}

var _ = BeforeSuite(func() {
	var err error
	cluster, err = localcluster.Start("e2e-cluster", 16640)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cluster.Stop()).To(Succeed()) })
	k8sClient = cluster.Client
	conformance, err = corpus.Dir()
	Expect(err).NotTo(HaveOccurred())
	Expect(cluster.Make("install")).To(Succeed())

	manager := filepath.Join(cluster.Dir, "manager")
	build := exec.Command("go", "build", "-o", manager, ".")
	build.Dir = cluster.Root
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))

	webhooks := filepath.Join(cluster.Dir, "webhook")
	serveWebhooksLocally()

	managerOutput = gbytes.NewBuffer()
	managerArgs = []string{manager, "--kubeconfig", managerKubeconfig(), "--leader-elect=false",
		"--health-probe-bind-address=0", "--metrics-bind-address=" + metricsAddress, "--metrics-secure=false",
		"--webhook-cert-dir", webhooks, "--webhook-host", "127.0.0.1", "--webhook-port", webhookPort}
	startManager()
	DeferCleanup(stopManager)
})

// managerArgs is the manager's command line; managerCmd the process.
var (
	managerArgs []string
	managerCmd  *exec.Cmd
)

// startManager starts the manager and waits until its Instance workers run.
func startManager() {
	GinkgoHelper()
	managerCmd = startManagerProcess(managerArgs, managerOutput)
}

// startManagerProcess starts a manager and waits until its Instance
// workers run.
func startManagerProcess(args []string, output *gbytes.Buffer) *exec.Cmd {
	GinkgoHelper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = output, output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Expect(cmd.Start()).To(Succeed())
	Eventually(output, "1m").Should(gbytes.Say(`Starting workers.*"controller": "instance"`))
	return cmd
}

// stopManager stops the manager as a rollout would, and waits for it.
func stopManager() {
	stopManagerProcess(managerCmd)
	managerCmd = nil
}

func stopManagerProcess(cmd *exec.Cmd) {
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	_ = cmd.Wait()
}

// serveWebhooksLocally points the admission webhooks at the manager on
// loopback.
func serveWebhooksLocally() {
	GinkgoHelper()
	setup := exec.Command(filepath.Join(cluster.Root, "hack", "webhook-local.sh"))
	setup.Env = append(cluster.Env(), "WEBHOOK_DIR="+filepath.Join(cluster.Dir, "webhook"), "WEBHOOK_PORT="+webhookPort,
		"KUBECTL="+filepath.Join(os.Getenv("ENVTEST_ASSETS"), "kubectl"))
	out, err := setup.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
}

// grantManager applies the manager's RBAC from config/rbac, in its
// namespace.
func grantManager() {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kudo-system"}}
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(context.Background(), ns))).To(Succeed())
	_, err := cluster.Kubectl("apply", "--server-side", "-k", filepath.Join(cluster.Root, "test", "e2e", "testdata", "rbac"))
	Expect(err).NotTo(HaveOccurred())
}

// handOverToClusterManager stops the manager process, so that one in the
// cluster takes over, and removes what points the webhooks at it; the
// returned function removes the one in the cluster and starts the process
// again.
func handOverToClusterManager() func() {
	GinkgoHelper()
	stopManager()
	Expect(cluster.Make("undeploy-local-webhook")).To(Succeed())
	return func() {
		Expect(cluster.Make("undeploy", "ignore-not-found=true")).To(Succeed())
		Eventually(func() bool {
			err := k8sClient.Get(context.Background(), client.ObjectKey{Name: "kudo-system"}, &corev1.Namespace{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "make undeploy left namespace kudo-system")
		grantManager()
		serveWebhooksLocally()
		startManager()
	}
}

// managerKubeconfig applies the manager's RBAC and returns a kubeconfig that
// acts as its service account, as `make deploy` runs it.
func managerKubeconfig() string {
	GinkgoHelper()
	grantManager()
	config, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	for _, user := range config.AuthInfos {
		user.Impersonate = "system:serviceaccount:kudo-system:kudo-controller-manager"
	}
	path := managerKubeconfigPath()
	Expect(clientcmd.WriteToFile(*config, path)).To(Succeed())
	return path
}

func managerKubeconfigPath() string { return filepath.Join(cluster.Dir, "manager.kubeconfig") }

// After each spec, before the cleanups of its ordered container, so that a
// manager it ran in the cluster is still there to report on.
var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() {
		_ = os.WriteFile(filepath.Join(cluster.Root, "bin", "e2e-manager.log"), managerOutput.Contents(), 0o644)
		AddReportEntry("manager log", "bin/e2e-manager.log")
		objects, logs := cluster.Diagnose(specNamespaces...)
		AddReportEntry("objects and events", objects)
		AddReportEntry("component logs", logs)
	}
	specNamespaces = nil
})

// labelNodeForTest labels a node key=true until the test ends: what lets
// the pods of a package's gated workload be scheduled.
func labelNodeForTest(ctx context.Context, name, key string) {
	GinkgoHelper()
	label := func(change func(map[string]string)) {
		GinkgoHelper()
		node := &corev1.Node{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
		patch := client.MergeFrom(node.DeepCopy())
		change(node.Labels)
		Expect(k8sClient.Patch(ctx, node, patch)).To(Succeed())
	}
	label(func(l map[string]string) { l[key] = "true" })
	DeferCleanup(func() { label(func(l map[string]string) { delete(l, key) }) })
}

// newNamespace creates a namespace of its own for one test.
func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	specNamespaces = append(specNamespaces, ns.Name)
	return ns.Name
}

// install creates the package's Operator and OperatorVersion and an Instance
// of it, as `kubectl kudo install` does.
func install(ctx context.Context, ns, dir, instance string, params map[string]string) *kudov1beta1.Instance {
	GinkgoHelper()
	op, ov := installPackage(ctx, ns, dir)
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: instance, Labels: map[string]string{"kudo.dev/operator": op.Name}},
		Spec: kudov1beta1.InstanceSpec{
			OperatorVersion: corev1.ObjectReference{Name: ov.Name},
			Parameters:      params,
		},
	}
	Expect(k8sClient.Create(ctx, i)).To(Succeed())
	return i
}

// installPackage creates the package's Operator and OperatorVersion.
func installPackage(ctx context.Context, ns, dir string) (*kudov1beta1.Operator, *kudov1beta1.OperatorVersion) {
	GinkgoHelper()
	p, err := packages.Read(dir)
	Expect(err).NotTo(HaveOccurred())
	op, ov, err := p.Convert(ns)
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient.Create(ctx, op)).To(Succeed())
	Expect(k8sClient.Create(ctx, ov)).To(Succeed())
	return op, ov
}

// planStatus waits for the plan to reach a status and returns the Instance.
func planStatus(ctx context.Context, i *kudov1beta1.Instance, plan string, want kudov1beta1.ExecutionStatus) *kudov1beta1.Instance {
	GinkgoHelper()
	got := &kudov1beta1.Instance{}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
		ps := got.Status.PlanStatus[plan]
		g.Expect(ps.Status).To(Equal(want), "plan %s: %s", plan, describe(&ps))
	}).Should(Succeed())
	return got
}

// firstDeployStep reads the Instance and the first step of its deploy plan,
// inside an Eventually.
func firstDeployStep(ctx context.Context, g Gomega, i *kudov1beta1.Instance) (*kudov1beta1.Instance, kudov1beta1.StepStatus) {
	got := &kudov1beta1.Instance{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
	g.Expect(got.Status.PlanStatus["deploy"].Phases).NotTo(BeEmpty())
	return got, got.Status.PlanStatus["deploy"].Phases[0].Steps[0]
}

// describe prints a plan's status tree, for failure messages.
func describe(ps *kudov1beta1.PlanStatus) string {
	s := fmt.Sprintf("%s %q", ps.Status, ps.Message)
	for at, step := range ps.Steps() {
		s += fmt.Sprintf("\n  %s/%s %s %q", at.Phase.Name, step.Name, step.Status, step.Message)
	}
	return s
}
