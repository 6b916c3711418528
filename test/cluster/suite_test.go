// Package cluster tests the local control plane of `make cluster-up`: that it
// starts, that workloads progress on its simulated nodes, that its real node
// runs containers, that claims bind, that failures can be asked for, that
// `make install run` works against it, and that `make cluster-down` leaves no
// process, mount or bridge behind.
package cluster

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/test/localcluster"
)

var (
	cluster   *localcluster.Cluster
	k8sClient client.Client
)

func TestCluster(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "Local control plane")
}

var _ = BeforeSuite(func() {
	start := time.Now()
	var err error
	cluster, err = localcluster.Start("test-cluster", 16540)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		Expect(cluster.Stop()).To(Succeed())
		Expect(localcluster.ProcessesUnder(cluster.Dir)).To(BeEmpty(), "make cluster-down left processes behind")
		Expect(cluster.Dir).NotTo(BeADirectory())
		mounts, err := os.ReadFile("/proc/self/mountinfo")
		Expect(err).NotTo(HaveOccurred())
		Expect(string(mounts)).NotTo(ContainSubstring(cluster.Dir+"/"), "make cluster-down left mounts behind")
		Expect(exec.Command("ip", "link", "show", "kudong0").Run()).To(HaveOccurred(), "make cluster-down left the bridge behind")
	})
	GinkgoWriter.Printf("cluster-up took %s\n", time.Since(start))
	k8sClient = cluster.Client
})

// kubectl runs the toolchain's kubectl against the test cluster.
func kubectl(args ...string) string {
	GinkgoHelper()
	out, err := cluster.Kubectl(args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// newNamespace creates a namespace of its own for one test.
func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}
