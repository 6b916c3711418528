package e2e

import (
	"context"
	"fmt"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

var _ = Describe("An Instance with a service account", func() {
	It("is applied with the service account's permissions: a missing verb fails its step, naming it, until it is granted", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}})).To(Succeed())
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}},
		}
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "deployer"}},
		})).To(Succeed())

		_, ov := installPackage(ctx, ns, filepath.Join("testdata", "rollback-v1"))
		i := &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}, ServiceAccountName: "deployer"},
		}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			_, step := firstDeployStep(ctx, g, i)
			g.Expect(step.Status).To(Equal(kudov1beta1.ExecutionError))
			g.Expect(step.Message).To(ContainSubstring(fmt.Sprintf(
				`User "system:serviceaccount:%s:deployer" cannot patch resource "configmaps" in API group "" in the namespace "%s"`, ns, ns)))
		}).Should(Succeed())

		patch := client.MergeFrom(role.DeepCopy())
		role.Rules[0].Verbs = append(role.Rules[0].Verbs, "create", "patch")
		Expect(k8sClient.Patch(ctx, role, patch)).To(Succeed())
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tenant-config"}, cm)).To(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("color", "blue"))
	})
})
