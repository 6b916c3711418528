package e2e

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// The manager of this suite acts as config/rbac's service account.
var _ = Describe("The manager's RBAC", func() {
	It("acts as the service account config/rbac binds, not as an admin", func() {
		whoami, err := cluster.Kubectl("--kubeconfig", managerKubeconfigPath(), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
		Expect(err).NotTo(HaveOccurred())
		Expect(whoami).To(Equal("system:serviceaccount:kudo-system:kudo-controller-manager"))
		// kubectl prints a warning for a cluster-scoped resource before its answer.
		canListNodes, _ := cluster.Kubectl("--kubeconfig", managerKubeconfigPath(), "auth", "can-i", "list", "nodes")
		Expect(canListNodes).To(HaveSuffix("\nno\n"))
	})

	It("fails a step whose kind is not granted, and runs it once a ClusterRole labelled for aggregation grants it", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "ungranted-kind"), "limits", nil)
		Eventually(func(g Gomega) {
			_, step := firstDeployStep(ctx, g, i)
			g.Expect(step.Status).To(Equal(kudov1beta1.ExecutionError))
			g.Expect(step.Message).To(ContainSubstring(`the manager may not list limitranges: grant them to it with a ClusterRole labelled kudo.dev/aggregate-to-manager: "true"`))
		}).Should(Succeed())

		grant := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-package-limitranges", Labels: map[string]string{"kudo.dev/aggregate-to-manager": "true"}},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"limitranges"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
			}},
		}
		Expect(k8sClient.Create(ctx, grant)).To(Succeed())
		DeferCleanup(func() { Expect(k8sClient.Delete(context.Background(), grant)).To(Succeed()) })
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
	})
})
