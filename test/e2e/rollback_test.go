package e2e

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

var _ = Describe("kubectl kudo rollback", func() {
	It("returns an upgraded Instance to its previous OperatorVersion and parameters, and refuses one that was removed", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		config := func(g Gomega) map[string]string {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rb-config"}, cm)).To(Succeed())
			return cm.Data
		}
		mustKudo(ns, "install", filepath.Join("testdata", "rollback-v1"), "--instance", "rb", "-p", "COLOR=red", "--wait")
		mustKudo(ns, "upgrade", filepath.Join("testdata", "rollback-v2"), "--instance", "rb", "-p", "COLOR=green", "--wait")
		Eventually(func(g Gomega) {
			g.Expect(config(g)).To(Equal(map[string]string{"version": "2", "color": "green", "zone": "a"}))
		}).Should(Succeed())

		history := mustKudo(ns, "plan", "history", "--instance", "rb")
		Expect(history).To(MatchRegexp(`2\s+deploy\s+COMPLETE\s+rollback-0\.2\.0\s+\S+ \S+\s+COLOR=green,ZONE=a`))
		Expect(history).To(MatchRegexp(`1\s+deploy\s+COMPLETE\s+rollback-0\.1\.0\s+\S+ \S+\s+COLOR=red,ZONE=a`))

		out := mustKudo(ns, "rollback", "--instance", "rb", "--wait")
		Expect(out).To(HavePrefix("Instance rb rolled back to revision 1: OperatorVersion rollback-0.1.0, parameters COLOR=red,ZONE=a\n"))
		Expect(out).To(HaveSuffix("Plan deploy [COMPLETE]\n"), "--wait prints the plan's progress")
		i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rb"}}
		got := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		Expect(got.Status.AppliedOperatorVersion).To(Equal("rollback-0.1.0"))
		Expect(got.Status.Revisions).To(HaveLen(3))
		Expect(got.Status.Revisions[2]).To(And(HaveField("OperatorVersion", "rollback-0.1.0"), HaveField("Status", kudov1beta1.ExecutionComplete)))
		Eventually(func(g Gomega) {
			g.Expect(config(g)).To(Equal(map[string]string{"version": "1", "color": "red", "zone": "a"}))
		}).Should(Succeed())

		// Revision 2's OperatorVersion is gone: rolling back to it is refused,
		// and nothing changes.
		Expect(k8sClient.Delete(ctx, &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rollback-0.2.0"}})).To(Succeed())
		out, err := kudo(ns, "rollback", "--instance", "rb")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("revision 2 ran OperatorVersion rollback-0.2.0, which cannot be read"))
		Expect(out).To(ContainSubstring("install it again to roll back to it"))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), i)).To(Succeed())
		Expect(i.Spec.OperatorVersion.Name).To(Equal("rollback-0.1.0"))
		Expect(i.Spec.Parameters).To(HaveKeyWithValue("COLOR", "red"))
	})
})
