// Package migration switches a cluster from KUDO v0.19 to kudo-ng as a KUDO
// user would, with kubectl kudo init --upgrade, against KUDO itself: its
// own manager, built from kudobuilder/kudo's module, runs the packages
// first. The switch must run nothing: no pod, Job or ReplicaSet created or
// deleted, no workload's generation moved, no plan started.
package migration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/internal/webhookcert"
	"github.com/kudo-ng/kudo/test/localcluster"
)

const (
	// The cluster's registry (hack/cluster/node.sh), the Makefile's LOCAL_REGISTRY.
	localRegistry = "10.244.0.1:5000"
	kudoModule    = "github.com/kudobuilder/kudo@v0.19.0"
	kudoNamespace = "kudo-system"
)

var (
	cluster   *localcluster.Cluster
	k8sClient client.Client
	// The images the Makefile pushes: KUDO v0.19's manager, and kudo-ng's.
	kudoImage    = localRegistry + "/kudo-v0.19-manager:v0.19.0"
	kudoNGImage  = localRegistry + "/kudo:v0.1.0"
	kudoManifest = filepath.Join("testdata", "kudo-v0.19.yaml")
)

func TestMigration(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(time.Second)
	RunSpecs(t, "switching from KUDO v0.19")
}

var _ = BeforeSuite(func() {
	start := time.Now()
	var err error
	cluster, err = localcluster.Start("test-migration", 17040)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cluster.Stop()).To(Succeed()) })
	k8sClient = cluster.Client
	Expect(cluster.Make("docker-push", "kudo-v0.19-push")).To(Succeed())
	GinkgoWriter.Printf("cluster up and images pushed in %s\n", time.Since(start))
	mirrorBusybox()
	installKUDO(context.Background())
	GinkgoWriter.Printf("KUDO v0.19 running at %s\n", time.Since(start))
})

var _ = ReportAfterEach(func(report SpecReport) {
	if !report.Failed() {
		return
	}
	objects, logs := cluster.Diagnose(kudoNamespace)
	AddReportEntry("cluster", objects)
	AddReportEntry("logs", logs)
})

// installKUDO installs KUDO v0.19 as its init did: its CRDs, from its
// module, and testdata/kudo-v0.19.yaml with a webhook certificate of a CA of
// its own; then waits until its manager is ready: its webhook's port answers.
func installKUDO(ctx context.Context) {
	GinkgoHelper()
	download, err := exec.Command("go", "mod", "download", "-json", kudoModule).Output()
	Expect(err).NotTo(HaveOccurred())
	var module struct{ Dir string }
	Expect(json.Unmarshal(download, &module)).To(Succeed())
	out, err := cluster.Kubectl("apply", "--server-side", "--field-manager", "kudo-v0.19", "-f", filepath.Join(module.Dir, "config", "crds"))
	Expect(err).NotTo(HaveOccurred(), out)
	Expect(cluster.Kubectl("wait", "--for", "condition=Established", "crd/instances.kudo.dev", "crd/operatorversions.kudo.dev",
		"crd/operators.kudo.dev")).Error().NotTo(HaveOccurred())

	bundle, err := webhookcert.Issue("kudo-controller-manager-service", kudoNamespace, time.Now())
	Expect(err).NotTo(HaveOccurred())
	manifest, err := os.ReadFile(kudoManifest)
	Expect(err).NotTo(HaveOccurred())
	filled := strings.NewReplacer("IMAGE", kudoImage, "CA_BUNDLE", base64.StdEncoding.EncodeToString(bundle.CA)).Replace(string(manifest))
	path := filepath.Join(GinkgoT().TempDir(), "kudo-v0.19.yaml")
	Expect(os.WriteFile(path, []byte(filled), 0o600)).To(Succeed())
	out, err = cluster.Kubectl("apply", "--server-side", "--field-manager", "kudo-v0.19", "-f", path)
	Expect(err).NotTo(HaveOccurred(), out)
	Expect(k8sClient.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: kudoNamespace, Name: "kudo-webhook-server-secret"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: bundle.Cert, corev1.TLSPrivateKeyKey: bundle.Key},
	})).To(Succeed())
	Eventually(func(g Gomega) {
		s := &appsv1.StatefulSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: kudoNamespace, Name: "kudo-controller-manager"}, s)).To(Succeed())
		g.Expect(s.Status.ReadyReplicas).To(BeNumerically("==", 1))
	}).Should(Succeed())
}

// mirrorBusybox serves the image KUDO's Pipe pods run beside the package's
// container, busybox:latest of Docker Hub, which no pod here can reach: the
// node's own busybox, pushed to the cluster's registry, which containerd is
// told to pull docker.io's images from.
func mirrorBusybox() {
	GinkgoHelper()
	node := filepath.Join(cluster.Dir, "node")
	busybox, err := name.NewTag("kudo-ng.local/busybox:1")
	Expect(err).NotTo(HaveOccurred())
	img, err := tarball.ImageFromPath(filepath.Join(node, "images.tar"), &busybox)
	Expect(err).NotTo(HaveOccurred())
	transport, err := cluster.RegistryTransport()
	Expect(err).NotTo(HaveOccurred())
	Expect(remote.Write(name.MustParseReference(localRegistry+"/library/busybox:latest"), img, remote.WithTransport(transport))).To(Succeed())
	hosts := fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n",
		"https://registry-1.docker.io", "https://"+localRegistry, cluster.RegistryCA())
	Expect(os.MkdirAll(filepath.Join(node, "certs.d", "docker.io"), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(node, "certs.d", "docker.io", "hosts.toml"), []byte(hosts), 0o644)).To(Succeed())
}

// kudo runs the kubectl-kudo plugin against the cluster, in a namespace.
func kudo(ns string, args ...string) string {
	GinkgoHelper()
	out, err := cluster.Kudo(ns, args...)
	Expect(err).NotTo(HaveOccurred(), "kubectl kudo %s:\n%s", strings.Join(args, " "), out)
	return out
}

// newNamespace creates a namespace of its own for one package.
func newNamespace(ctx context.Context, ns string) string {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	return ns
}
