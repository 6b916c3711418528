package cluster

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// The cluster has no cert-manager: `make deploy` takes its self-signed path.
// Its nodes are simulated, so "Available" means the pod was scheduled and
// reported ready — the manager's own container does not run here.
var _ = Describe("make deploy", Ordered, func() {
	const (
		namespace = "kudo-system"
		image     = "ghcr.io/kudo-ng/kudo:v0.0.0-test"
	)
	var (
		ctx       context.Context
		deployDir string
	)
	BeforeAll(func() {
		ctx = context.Background()
		deployDir = filepath.Join(cluster.Dir, "deploy")
		Expect(cluster.Make("deploy", "IMG="+image, "DEPLOY_DIR="+deployDir)).To(Succeed())
	})

	It("runs the manager Deployment, with the image asked for, until it is Available", func() {
		Eventually(func(g Gomega) {
			deployment := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "kudo-controller-manager"}, deployment)).To(Succeed())
			g.Expect(deployment.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
			g.Expect(deployment.Spec.Template.Spec.ServiceAccountName).To(Equal("kudo-controller-manager"))
			g.Expect(deployment.Status.AvailableReplicas).To(BeEquivalentTo(1))
		}).Should(Succeed())
	})

	It("makes the webhooks trust the CA that signed the serving certificate the manager mounts", func() {
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "webhook-server-cert"}, secret)).To(Succeed())
		ca, err := os.ReadFile(filepath.Join(deployDir, "certs", "ca.crt"))
		Expect(err).NotTo(HaveOccurred())
		roots := x509.NewCertPool()
		Expect(roots.AppendCertsFromPEM(ca)).To(BeTrue())
		block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
		Expect(block).NotTo(BeNil())
		cert, err := x509.ParseCertificate(block.Bytes)
		Expect(err).NotTo(HaveOccurred())
		_, err = cert.Verify(x509.VerifyOptions{DNSName: "kudo-webhook-service.kudo-system.svc", Roots: roots})
		Expect(err).NotTo(HaveOccurred())

		mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-mutating-webhook-configuration"}, mutating)).To(Succeed())
		validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-validating-webhook-configuration"}, validating)).To(Succeed())
		var configs []admissionregistrationv1.WebhookClientConfig
		for _, w := range mutating.Webhooks {
			configs = append(configs, w.ClientConfig)
		}
		for _, w := range validating.Webhooks {
			configs = append(configs, w.ClientConfig)
		}
		Expect(configs).To(HaveLen(3))
		for _, c := range configs {
			Expect(c.Service).NotTo(BeNil())
			Expect(c.Service.Namespace + "/" + c.Service.Name).To(Equal("kudo-system/kudo-webhook-service"))
			Expect(c.CABundle).To(Equal(ca))
		}
		Expect(mutating.Annotations).NotTo(HaveKey("cert-manager.io/inject-ca-from"))
	})

	It("grants the manager the objects packages apply through the aggregated ClusterRole", func() {
		Eventually(func(g Gomega) {
			role := &rbacv1.ClusterRole{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-package-objects"}, role)).To(Succeed())
			g.Expect(role.Rules).To(ContainElement(HaveField("Resources", ContainElement("statefulsets"))))
			g.Expect(role.Rules).To(ContainElement(HaveField("Resources", ContainElement("roles"))))
		}).Should(Succeed())
	})

	It("is removed by make undeploy, which keeps the CRDs and so every Instance", func() {
		Expect(cluster.Make("undeploy", "IMG="+image, "DEPLOY_DIR="+deployDir)).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s: %v", namespace, err)
		}).Should(Succeed())
		roles := &rbacv1.ClusterRoleList{}
		Expect(k8sClient.List(ctx, roles, client.MatchingLabels{"app.kubernetes.io/name": "kudo-ng"})).To(Succeed())
		Expect(roles.Items).To(BeEmpty())
		bindings := &rbacv1.ClusterRoleBindingList{}
		Expect(k8sClient.List(ctx, bindings, client.MatchingLabels{"app.kubernetes.io/name": "kudo-ng"})).To(Succeed())
		Expect(bindings.Items).To(BeEmpty())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-manager-role"}, &rbacv1.ClusterRole{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-validating-webhook-configuration"},
			&admissionregistrationv1.ValidatingWebhookConfiguration{}))).To(BeTrue())
		Expect(k8sClient.List(ctx, &kudov1beta1.InstanceList{})).To(Succeed(), "the Instance CRD is gone")
	})
})
