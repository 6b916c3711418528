// Package cluster tests the local control plane of `make cluster-up`: that it
// starts, that workloads progress on its simulated nodes, that claims bind,
// that failures can be asked for, that `make install run` works against it,
// and that `make cluster-down` leaves no process behind.
package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

var (
	root       string
	clusterDir string
	kubeconfig string
	k8sClient  client.Client
)

func TestCluster(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "Local control plane")
}

var _ = BeforeSuite(func() {
	var err error
	root, err = filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	// A cluster of its own, on ports of its own, so that the tests never touch
	// the developer's `make cluster-up` cluster.
	clusterDir = filepath.Join(root, "bin", "test-cluster")
	kubeconfig = filepath.Join(clusterDir, "kubeconfig")
	DeferCleanup(func() {
		runMake("cluster-down")
		Expect(processesUnder(clusterDir)).To(BeEmpty(), "make cluster-down left processes behind")
		Expect(clusterDir).NotTo(BeADirectory())
	})
	start := time.Now()
	runMake("cluster-up")
	GinkgoWriter.Printf("cluster-up took %s\n", time.Since(start))

	Expect(kudov1beta1.AddToScheme(scheme.Scheme)).To(Succeed())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
})

// runMake runs a target of the project's Makefile against the test cluster.
func runMake(args ...string) {
	GinkgoHelper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-C", root}, args...)...)
	cmd.Env = append(os.Environ(), "CLUSTER_DIR="+clusterDir, "CLUSTER_PORT_BASE=16540", "KUBECONFIG="+kubeconfig)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "make %s:\n%s", strings.Join(args, " "), out)
}

// kubectl runs the toolchain's kubectl against the test cluster.
func kubectl(args ...string) string {
	GinkgoHelper()
	bin := filepath.Join(os.Getenv("ENVTEST_ASSETS"), "kubectl")
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	Expect(cmd.Run()).To(Succeed(), "kubectl %s:\n%s", strings.Join(args, " "), out.String())
	return out.String()
}

// processesUnder lists the processes whose command line names a path under dir.
func processesUnder(dir string) []string {
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	var found []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if line := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})); strings.Contains(line, dir+"/") {
			found = append(found, fmt.Sprintf("%s: %s", e.Name(), line))
		}
	}
	return found
}

// newNamespace creates a namespace of its own for one test.
func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}
