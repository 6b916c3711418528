package e2e

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/corpus"
)

var zookeeperKind = schema.GroupVersionKind{Group: "packages.kudo.dev", Version: "v1", Kind: "Zookeeper"}

// kubectlIn runs kubectl in a namespace, with input from a file when the
// manifest is given.
func kubectlIn(ns, manifest string, args ...string) (string, error) {
	if manifest != "" {
		file := filepath.Join(GinkgoT().TempDir(), "manifest.yaml")
		Expect(os.WriteFile(file, []byte(manifest), 0o600)).To(Succeed())
		args = append(args, "-f", file)
	}
	return cluster.Kubectl(append([]string{"-n", ns}, args...)...)
}

// typedZookeeper runs zookeeper of the conformance corpus as a typed
// object in ns, as a user of its typed API would: kubectl get, explain,
// apply and wait, and kubectl kudo update and uninstall by the name.
func typedZookeeper(ctx context.Context, ns string) {
	GinkgoHelper()
	mustKudo(ns, "install", conformancePackage("zookeeper"), "--skip-instance")
	// The manager serves the kind once the OperatorVersion exists.
	Eventually(func() error { _, err := kubectlIn(ns, "", "get", "zookeepers"); return err }).Should(Succeed())

	// The API server publishes the kind's OpenAPI a moment after it serves it.
	var explain string
	Eventually(func() (err error) { explain, err = cluster.Kubectl("explain", "zookeepers.spec"); return err }).Should(Succeed())
	Expect(explain).To(ContainSubstring("NODE_COUNT\t<string>"))
	Expect(explain).To(ContainSubstring("Number of nodes spun up for Zookeeper."))
	AddReportEntry("kubectl explain zookeepers.spec", explain)

	// The API server validates the fields, before any webhook.
	out, err := kubectlIn(ns, "apiVersion: packages.kudo.dev/v1\nkind: Zookeeper\nmetadata: {name: zk}\nspec: {NODE_COUNT: 3}\n",
		"create", "--dry-run=server")
	Expect(err).To(HaveOccurred())
	Expect(out).To(ContainSubstring(`spec.NODE_COUNT: Invalid value: "integer": spec.NODE_COUNT in body must be of type string: "integer"`))

	_, err = kubectlIn(ns, "apiVersion: packages.kudo.dev/v1\nkind: Zookeeper\nmetadata: {name: zk}\nspec: {NODE_COUNT: \"3\"}\n", "apply")
	Expect(err).NotTo(HaveOccurred())
	out, err = kubectlIn(ns, "", "wait", "--for=condition=Ready", "zookeeper/zk", "--timeout=5m")
	Expect(err).NotTo(HaveOccurred(), out)
	got, err := kubectlIn(ns, "", "get", "zookeepers")
	Expect(err).NotTo(HaveOccurred())
	Expect(got).To(MatchRegexp(`NAME\s+OPERATOR VERSION\s+PLAN\s+PLAN STATUS\s+READY\s+AGE\nzk\s+zookeeper-3.6.2-0.3.3\s+deploy\s+COMPLETE\s+True\s+`))
	AddReportEntry("kubectl get zookeepers", got)
	Expect(mustKudo(ns, "plan", "status", "--instance", "zk")).To(MatchRegexp(`Plan deploy \(serial strategy\) \[COMPLETE\]`))
	// kubectl get kudo lists the typed objects with the Instances; its
	// discovery cache may still name a kind whose Operator is gone since.
	Eventually(func() (string, error) { return kubectlIn(ns, "", "get", "kudo") }).Should(ContainSubstring("zookeeper.packages.kudo.dev/zk"))

	Expect(mustKudo(ns, "update", "--instance", "zk", "-p", "NODE_COUNT=5", "--wait")).To(ContainSubstring("zookeeper.packages.kudo.dev/zk updated"))
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(zookeeperKind)
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "zk"}, obj)).To(Succeed())
	Expect(obj.Object["spec"]).To(HaveKeyWithValue("NODE_COUNT", "5"))
	sts := &appsv1.StatefulSet{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "zk-zookeeper"}, sts)).To(Succeed())
	Expect(*sts.Spec.Replicas).To(BeEquivalentTo(5))

	// A rollback writes the typed object too: its Instance would be made again from it.
	mustKudo(ns, "rollback", "--instance", "zk", "--wait")
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "zk"}, obj)).To(Succeed())
	Expect(obj.Object["spec"]).To(HaveKeyWithValue("NODE_COUNT", "3"))
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "zk-zookeeper"}, sts)).To(Succeed())
	Expect(*sts.Spec.Replicas).To(BeEquivalentTo(3))

	Expect(mustKudo(ns, "uninstall", "--instance", "zk", "--wait")).To(ContainSubstring("zookeeper.packages.kudo.dev/zk deleted"))
	for _, gone := range []client.Object{obj, &kudov1beta1.Instance{}, &appsv1.StatefulSet{}} {
		name := "zk"
		if _, ok := gone.(*appsv1.StatefulSet); ok {
			name = "zk-zookeeper"
		}
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, gone))
		}).Should(BeTrue(), "%T %s", gone, name)
	}
}

// widgetEnumRefused shows the API server refusing a value outside a
// parameter's enum, naming the field and the values.
func widgetEnumRefused(ns string) {
	GinkgoHelper()
	mustKudo(ns, "install", filepath.Join(corpus.Examples(), "widget", "operator"), "--skip-instance")
	Eventually(func() error { _, err := kubectlIn(ns, "", "get", "widgetpackages"); return err }).Should(Succeed())
	out, err := kubectlIn(ns, "apiVersion: packages.kudo.dev/v1\nkind: WidgetPackage\nmetadata: {name: w}\nspec: {colour: purple}\n",
		"create", "--dry-run=server")
	Expect(err).To(HaveOccurred())
	Expect(out).To(ContainSubstring(`spec.colour: Unsupported value: "purple": supported values: "red", "green", "blue"`))
	AddReportEntry("an enum refused", out)
}
