// Package olm installs kudo-ng as OperatorHub does: OLM on the local control
// plane (its real node alone), the bundle in a file-based catalog served from
// the cluster's registry, a Subscription, an upgrade to the next bundle
// version while a plan runs, and the uninstall; and as operator-sdk does:
// run bundle, cleanup, and the scorecard's basic and OLM suites.
package olm

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/test/localcluster"
	"github.com/kudo-ng/kudo/test/olm/olmtest"
)

const (
	// OLM's namespaces, as its upstream install makes them: the global
	// catalogs' and the one whose OperatorGroup watches all namespaces.
	olmNamespace       = "olm"
	operatorsNamespace = "operators"
	catalogName        = "kudo-ng"
)

var (
	cluster   *localcluster.Cluster
	k8sClient client.Client
)

func TestOLM(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(time.Second)
	RunSpecs(t, "kudo-ng through OLM")
}

var _ = BeforeSuite(func() {
	cluster = olmtest.StartWithFirstRelease("test-olm", 16940, "OLM=true")
	Expect(operatorsv1alpha1.AddToScheme(scheme.Scheme)).To(Succeed())
	k8sClient = cluster.Client
})

var _ = ReportAfterEach(func(report SpecReport) {
	if !report.Failed() {
		return
	}
	out, _ := cluster.Kubectl("get", "catalogsources,subscriptions,installplans,csv,deployments,pods,jobs", "-A", "-o", "wide")
	AddReportEntry("OLM's objects", out)
	objects, logs := cluster.Diagnose(operatorsNamespace, olmNamespace)
	AddReportEntry("cluster", objects)
	AddReportEntry("logs", logs)
	for _, deployment := range []string{"olm-operator", "catalog-operator"} {
		out, _ := cluster.Kubectl("logs", "-n", olmNamespace, "deployment/"+deployment, "--tail=60")
		AddReportEntry(deployment, out)
	}
})
