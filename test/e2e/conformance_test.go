package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// workloadsReady checks that every Deployment and StatefulSet of the
// namespace is Available and every claim Bound.
func workloadsReady(ctx context.Context, g Gomega, ns string) {
	deployments := &appsv1.DeploymentList{}
	g.Expect(k8sClient.List(ctx, deployments, client.InNamespace(ns))).To(Succeed())
	for _, d := range deployments.Items {
		g.Expect(d.Status.AvailableReplicas).To(Equal(*d.Spec.Replicas), "Deployment %s", d.Name)
	}
	sets := &appsv1.StatefulSetList{}
	g.Expect(k8sClient.List(ctx, sets, client.InNamespace(ns))).To(Succeed())
	for _, s := range sets.Items {
		g.Expect(s.Status.ReadyReplicas).To(Equal(*s.Spec.Replicas), "StatefulSet %s", s.Name)
	}
	claims := &corev1.PersistentVolumeClaimList{}
	g.Expect(k8sClient.List(ctx, claims, client.InNamespace(ns))).To(Succeed())
	for _, c := range claims.Items {
		g.Expect(c.Status.Phase).To(Equal(corev1.ClaimBound), "PersistentVolumeClaim %s", c.Name)
	}
}

var _ = Describe("The conformance packages, unchanged", func() {
	DescribeTable("install and complete their deploy plan",
		func(name string) {
			ctx := context.Background()
			ns := newNamespace(ctx)
			start := time.Now()
			i := install(ctx, ns, conformancePackage(name), name+"-instance", nil)
			got := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
			AddReportEntry("deploy COMPLETE after", time.Since(start).String())
			Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
			Eventually(func(g Gomega) { workloadsReady(ctx, g, ns) }).Should(Succeed())
		},
		Entry(nil, "first-operator"),
		Entry(nil, "zookeeper"),
		Entry(nil, "redis"),
		Entry(nil, "mysql"),
		Entry(nil, "flink"),
		Entry(nil, "rabbitmq"),
		Entry(nil, "confluent-rest-proxy"),
		Entry(nil, "confluent-schema-registry"),
	)

	It("runs zookeeper's validation Job once, though the next step deletes it", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, conformancePackage("zookeeper"), "zk", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		Expect(jobUIDs(ctx, Default, ns, "zk-validation")).To(HaveLen(1), "the validation step ran its Job more than once")
	})

	// cowsay's Pipe pod fetches from the internet: it does not tolerate the
	// real node's taint, so it lands on a simulated node, where nothing runs.
	It("runs cowsay up to its Pipe step, whose pod never reaches the real node", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, conformancePackage("cowsay"), "cowsay-instance", nil)
		Eventually(func(g Gomega) {
			got := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
			g.Expect(got.Status.PlanStatus["deploy"].Phases).NotTo(BeEmpty())
			step := got.Status.PlanStatus["deploy"].Phases[0].Steps[0]
			g.Expect(step.Name).To(Equal("genfiles"))
			g.Expect(step.Status).To(Equal(kudov1beta1.ExecutionError))
			g.Expect(step.Message).To(ContainSubstring(
				"task genwww: copying /tmp/index.html out of pipe pod cowsay-instance-deploy-main-genfiles-genwww (this needs a node that runs containers)"))
			pod := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cowsay-instance-deploy-main-genfiles-genwww"}, pod)).To(Succeed())
			g.Expect(pod.Spec.NodeName).To(HavePrefix("kwok-node-"))
		}).Should(Succeed())
	})
})
