package controllers_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

var _ = Describe("An Instance's plan meeting an object it does not own", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("leaves a colleague's ConfigMap of the same name as it is, failing the step until it is handed over with kudo.dev/adopt", func() {
		colleague := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-a"}, Data: map[string]string{"owner": "colleague"}}
		Expect(k8sClient.Create(ctx, colleague)).To(Succeed())
		Expect(k8sClient.Create(ctx, configMapsOperator(ns, "cms"))).To(Succeed())
		i := newInstance(ns, "demo", "cms-0.1.0")
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key := client.ObjectKeyFromObject(i)

		Eventually(func(g Gomega) {
			phases := getInstance(ctx, g, key).Status.PlanStatus["deploy"].Phases
			g.Expect(phases).NotTo(BeEmpty())
			steps := phases[0].Steps
			g.Expect(steps[0].Status).To(Equal(kudov1beta1.ExecutionError))
			g.Expect(steps[0].Message).To(ContainSubstring(fmt.Sprintf("ConfigMap %s/demo-a exists and is not Instance %s/demo's", ns, ns)))
		}).Should(Succeed())
		live := &corev1.ConfigMap{}
		Consistently(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(colleague), live)).To(Succeed())
			g.Expect(live.Data).To(Equal(map[string]string{"owner": "colleague"}))
			g.Expect(live.OwnerReferences).To(BeEmpty())
		}, "2s").Should(Succeed())

		patch := client.MergeFrom(live.DeepCopy())
		live.Annotations = map[string]string{kudov1beta1.AdoptAnnotation: ns + "/demo"}
		Expect(k8sClient.Patch(ctx, live, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(colleague), live)).To(Succeed())
			g.Expect(live.Data).To(HaveKeyWithValue("greeting", "hello"))
			g.Expect(live.OwnerReferences).To(ConsistOf(HaveField("Name", "demo")))
		}).Should(Succeed())
	})
})
