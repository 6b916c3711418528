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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/test/localcluster"
	"github.com/kudo-ng/kudo/test/olm/olmtest"
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
	cluster = olmtest.StartWithFirstRelease("test-olm-v1", 17140, "OLM=v1")
	k8sClient = cluster.Client
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
