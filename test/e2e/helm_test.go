package e2e

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// A chart nobody here wrote: operator-framework/helm-operator-plugins'
// test chart (v0.8.0), as its authors packaged it. Its nginx pods do not
// tolerate the real node's taint: they run on simulated nodes.
var _ = Describe("A Helm chart imported as a package", func() {
	It("installs, updates a value, corrects drift and uninstalls, as kubectl kudo drives it", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		dir := filepath.Join(GinkgoT().TempDir(), "web-operator")
		chart := filepath.Join("..", "..", "internal", "chartrender", "testdata", "test-chart-1.2.3.tgz")
		Expect(mustKudo(ns, "package", "import", chart, "--directory", dir)).
			To(ContainSubstring("package test-chart 1.2.3 written in " + dir + ": 14 parameters from the chart's values"))

		Expect(mustKudo(ns, "install", dir, "--instance", "web", "--wait")).To(ContainSubstring("instance web is deployed"))
		deployment := func(g Gomega) *appsv1.Deployment {
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-test-chart"}, d)).To(Succeed())
			return d
		}
		Expect(*deployment(Default).Spec.Replicas).To(BeEquivalentTo(1))
		Expect(deployment(Default).Labels).To(HaveKeyWithValue(kudov1beta1.InstanceLabel, "web"))

		Expect(mustKudo(ns, "update", "--instance", "web", "-p", "replicaCount=2", "--wait")).To(ContainSubstring("instance.kudo.dev/web updated"))
		Expect(*deployment(Default).Spec.Replicas).To(BeEquivalentTo(2))

		By("correcting drift: the chart's Service deleted is applied again")
		_, err := cluster.Kubectl("annotate", "-n", ns, "instance", "web", kudov1beta1.DriftCorrectionAnnotation+"=true")
		Expect(err).NotTo(HaveOccurred())
		svc := &corev1.Service{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-test-chart"}, svc)).To(Succeed())
		Expect(k8sClient.Delete(ctx, svc)).To(Succeed())
		Eventually(func(g Gomega) {
			again := &corev1.Service{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-test-chart"}, again)).To(Succeed())
			g.Expect(again.UID).NotTo(Equal(svc.UID))
		}).Should(Succeed())

		Expect(mustKudo(ns, "uninstall", "--instance", "web", "--wait")).To(ContainSubstring("instance.kudo.dev/web deleted"))
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-test-chart"}, &appsv1.Deployment{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		}).Should(Succeed())
	})
	It("runs its chart's upgrade hook Job again at each upgrade, before the chart's objects, as helm upgrade does", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		Expect(mustKudo(ns, "install", filepath.Join("testdata", "hooked-chart"), "--instance", "app", "--wait")).
			To(ContainSubstring("instance app is deployed"))
		migration := func() *batchv1.Job {
			job := &batchv1.Job{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-migrate"}, job)).To(Succeed())
			return job
		}
		installed := migration()
		Expect(installed.Status.Succeeded).To(BeEquivalentTo(1))

		Expect(mustKudo(ns, "update", "--instance", "app", "-p", "GREETING=hey", "--wait")).To(ContainSubstring("instance.kudo.dev/app updated"))
		upgraded := migration()
		Expect(upgraded.UID).NotTo(Equal(installed.UID), "the hook Job is made anew")
		Expect(upgraded.Status.Succeeded).To(BeEquivalentTo(1))
		settings := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-settings"}, settings)).To(Succeed())
		Expect(settings.Data).To(HaveKeyWithValue("greeting", "hey"))
		Expect(upgraded.Status.CompletionTime.Time).NotTo(BeTemporally(">", updatedAt(settings)), "the hook ran before the chart's objects")
	})

	It("renders its chart with the cluster's .Capabilities, as helm install does: its version picks policy/v1, a CRD is served", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		dir := filepath.Join("testdata", "capable-chart")
		preview, err := kudo(ns, "install", dir, "--instance", "app", "--diff")
		Expect(exitCode(err)).To(Equal(1), "--diff says there are changes:\n%s", preview)
		Expect(preview).To(ContainSubstring("+apiVersion: policy/v1\n"), "the preview renders as the manager does")
		Expect(preview).NotTo(ContainSubstring("policy/v1beta1"))

		Expect(mustKudo(ns, "install", dir, "--instance", "app", "--wait")).To(ContainSubstring("instance app is deployed"))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-budget"}, &policyv1.PodDisruptionBudget{})).To(Succeed())
		capabilities := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-capabilities"}, capabilities)).To(Succeed())
		Expect(capabilities.Data).To(HaveKeyWithValue("servesInstances", "true"))
	})
})

// updatedAt is when the manager last applied obj.
func updatedAt(obj client.Object) time.Time {
	GinkgoHelper()
	for _, m := range obj.GetManagedFields() {
		if m.Manager == "kudo-ng" && m.Time != nil {
			return m.Time.Time
		}
	}
	Fail("no apply of kudo-ng recorded on " + obj.GetName())
	return time.Time{}
}
