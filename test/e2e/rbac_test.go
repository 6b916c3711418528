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
	It("acts as the service account config/rbac binds, which may manage any kind, as KUDO's manager could", func() {
		whoami, err := cluster.Kubectl("--kubeconfig", managerKubeconfigPath(), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
		Expect(err).NotTo(HaveOccurred())
		Expect(whoami).To(Equal("system:serviceaccount:kudo-system:kudo-controller-manager"))
		canAnything, err := cluster.Kubectl("--kubeconfig", managerKubeconfigPath(), "auth", "can-i", "*", "*")
		Expect(err).NotTo(HaveOccurred())
		Expect(canAnything).To(HaveSuffix("yes\n"))
	})

	It("runs a package of a kind no role names", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "any-kind"), "limits", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
	})

	It("leaves supplying packages to cluster admins: edit and admin create Instances, not Operators or OperatorVersions", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		for _, role := range []string{"edit", "admin"} {
			user := "e2e-" + role
			Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
			})).To(Succeed())
			Eventually(func(g Gomega) {
				for resource, want := range map[string]string{"instances.kudo.dev": "yes", "operatorversions.kudo.dev": "no", "operators.kudo.dev": "no"} {
					got, _ := cluster.Kubectl("auth", "can-i", "create", resource, "-n", ns, "--as", user)
					g.Expect(got).To(Equal(want+"\n"), "%s may create %s", role, resource)
				}
			}).Should(Succeed())
		}
	})
})
