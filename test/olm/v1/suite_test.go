// Package olmv1 installs kudo-ng as OLM v1 does: operator-controller,
// catalogd and cert-manager on the local control plane (its real node
// alone), a ClusterCatalog of the file-based catalog image the OLM v0 suite
// serves, a ClusterExtension, a package through it, the upgrade to the next
// bundle version while a plan runs, and the removal.
package olmv1

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/test/localcluster"
)

const (
	// OLM v1's namespace, as its standard manifests make it.
	olmv1Namespace = "olmv1-system"
	// Where the ClusterExtension installs kudo-ng, as `make deploy` does.
	installNamespace = "kudo-system"
	extensionName    = "kudo-ng"
)

var (
	cluster   *localcluster.Cluster
	k8sClient client.Client
)

func TestOLMv1(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(time.Second)
	RunSpecs(t, "kudo-ng through OLM v1")
}

var _ = BeforeSuite(func() {
	start := time.Now()
	var err error
	cluster, err = localcluster.Start("test-olm-v1", 17140, "OLM=v1")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cluster.Stop()).To(Succeed()) })
	GinkgoWriter.Printf("cluster, OLM v1 and cert-manager up in %s\n", time.Since(start))
	Expect(apiextensionsv1.AddToScheme(scheme.Scheme)).To(Succeed())
	k8sClient = cluster.Client

	// The first release, as make docker-push bundle-push catalog-push
	// make it while the local registry answers: the catalog image the OLM
	// v0 suite's CatalogSource serves.
	Expect(cluster.Make("docker-push", "bundle-push", "catalog-push")).To(Succeed())
	GinkgoWriter.Printf("images, bundle and catalog pushed at %s\n", time.Since(start))
})

var _ = ReportAfterEach(func(report SpecReport) {
	if !report.Failed() {
		return
	}
	out, _ := cluster.Kubectl("get", "clustercatalogs,clusterextensions", "-o", "yaml")
	AddReportEntry("OLM v1's objects", out)
	objects, logs := cluster.Diagnose(installNamespace, olmv1Namespace, "cert-manager")
	AddReportEntry("cluster", objects)
	AddReportEntry("logs", logs)
	for _, deployment := range []string{"operator-controller-controller-manager", "catalogd-controller-manager"} {
		out, _ := cluster.Kubectl("logs", "-n", olmv1Namespace, "deployment/"+deployment, "--tail=60")
		AddReportEntry(deployment, out)
	}
})
