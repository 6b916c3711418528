package e2e

import (
	"context"
	"net/url"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/localcluster"
)

// remotePortBase is the second cluster's: simulated nodes only.
const remotePortBase = 16840

var _ = Describe("An Instance acting on another cluster", Ordered, func() {
	var (
		ctx    context.Context
		remote *localcluster.Cluster
		ns     string
	)
	BeforeAll(func() {
		ctx = context.Background()
		var err error
		remote, err = localcluster.Start("e2e-remote", remotePortBase, "CLUSTER_REAL_NODE=false")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(remote.Stop()).To(Succeed()) })
		server, err := url.Parse(remote.Config.Host)
		Expect(err).NotTo(HaveOccurred())

		// The admin lets the manager reach the second cluster's API server.
		stopManager()
		local := managerArgs
		managerArgs = append(append([]string{}, local...), "--remote-clusters="+server.Host)
		startManager()
		DeferCleanup(func() {
			stopManager()
			managerArgs = local
			startManager()
		})

		ns = newNamespace(ctx)
		Expect(remote.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		kubeconfig, err := os.ReadFile(remote.Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote"},
			Data: map[string][]byte{"value": kubeconfig}})).To(Succeed())
	})

	remoteDeployment := func(g Gomega) *appsv1.Deployment {
		deployments := &appsv1.DeploymentList{}
		g.Expect(remote.Client.List(ctx, deployments, client.InNamespace(ns),
			client.MatchingLabels{kudov1beta1.InstanceLabel: "hello"})).To(Succeed())
		g.Expect(deployments.Items).To(HaveLen(1))
		return &deployments.Items[0]
	}

	It("installs examples' hello there, and nothing of it here", func() {
		out, err := cluster.Kudo(ns, "install", hello, "--instance", "hello", "--kubeconfig-secret", "remote", "--wait")
		Expect(err).NotTo(HaveOccurred(), out)
		d := remoteDeployment(Default)
		Expect(d.Annotations).To(HaveKeyWithValue(kudov1beta1.OwnerAnnotation, ns+"/hello"))
		Expect(d.OwnerReferences).To(BeEmpty())
		here := &appsv1.DeploymentList{}
		Expect(k8sClient.List(ctx, here, client.InNamespace(ns))).To(Succeed())
		Expect(here.Items).To(BeEmpty(), "the Instance's objects are in the other cluster only")
		out, err = cluster.Kudo(ns, "plan", "status", "--instance", "hello")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring(`acting on the cluster of kubeconfig Secret "remote:value"`))
		AddReportEntry("plan status", out)
	})

	It("updates it there", func() {
		out, err := cluster.Kudo(ns, "update", "--instance", "hello", "-p", "replicas=3", "--wait")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func(g Gomega) {
			g.Expect(*remoteDeployment(g).Spec.Replicas).To(BeEquivalentTo(3))
		}).Should(Succeed())
	})

	It("uninstalls it there", func() {
		out, err := cluster.Kudo(ns, "uninstall", "--instance", "hello", "--wait")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, &kudov1beta1.Instance{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
			deployments := &appsv1.DeploymentList{}
			g.Expect(remote.Client.List(ctx, deployments, client.InNamespace(ns))).To(Succeed())
			g.Expect(deployments.Items).To(BeEmpty())
			services := &corev1.ServiceList{}
			g.Expect(remote.Client.List(ctx, services, client.InNamespace(ns),
				client.MatchingLabels{kudov1beta1.InstanceLabel: "hello"})).To(Succeed())
			g.Expect(services.Items).To(BeEmpty())
		}).Should(Succeed())
	})
})
