package controllers_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// The admission webhook keeps an OperatorVersion in use from changing or
// going; the pin holds where the webhook did not ask (its configuration
// deleted, a restore of other content). Its record of other content is what
// such a replacement leaves, and is made here by writing the status.
var _ = Describe("An Instance whose OperatorVersion was made again with other content", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	// pinOtherContent makes the Instance's pin other content than its
	// OperatorVersion's.
	pinOtherContent := func(key types.NamespacedName) {
		GinkgoHelper()
		i := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, key, i)).To(Succeed())
		Expect(i.Status.AppliedOperatorVersionDigest).To(HavePrefix("sha256:"), "the deploy plan pins its OperatorVersion")
		patch := client.MergeFrom(i.DeepCopy())
		i.Status.AppliedOperatorVersionDigest = "sha256:" + strings.Repeat("0", 64)
		Expect(k8sClient.Status().Patch(ctx, i, patch)).To(Succeed())
	}

	It("runs none of its plans, says why, and goes without its cleanup plan", func() {
		instance, key := deployDemo(ctx, ns)
		pinOtherContent(key)
		setParameters(ctx, key, map[string]string{"GREETING": "hi"})

		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, key)
			ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal(kudov1beta1.OperatorVersionChangedReason))
			g.Expect(ready.Message).To(ContainSubstring("OperatorVersion " + ns + "/cms-0.1.0 is not the one this Instance ran with"))
			g.Expect(meta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.StalledCondition)).To(BeTrue())
			g.Expect(reasons(ctx, g, key)).To(HaveKeyWithValue(kudov1beta1.OperatorVersionChangedReason, BeEquivalentTo(1)))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			i := getInstance(ctx, g, key)
			g.Expect(i.Status.PlanStatus["mood"].Status).To(Equal(kudov1beta1.ExecutionNeverRun))
			g.Expect(i.Status.PlanStatus["update"].Status).To(Equal(kudov1beta1.ExecutionNeverRun))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-a"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("greeting", "hello"))
		}, "2s").Should(Succeed())

		Expect(k8sClient.Delete(ctx, instance)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key, &kudov1beta1.Instance{}))
		}).Should(BeTrue())
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-farewell"}, &corev1.ConfigMap{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the cleanup plan of other content ran: %v", err)
	})

	It("runs again once a user accepts the content by removing the pin", func() {
		_, key := deployDemo(ctx, ns)
		pinOtherContent(key)
		setParameters(ctx, key, map[string]string{"GREETING": "hi"})
		Eventually(func(g Gomega) {
			g.Expect(meta.FindStatusCondition(getInstance(ctx, g, key).Status.Conditions, kudov1beta1.ReadyCondition)).
				To(HaveField("Reason", kudov1beta1.OperatorVersionChangedReason))
		}).Should(Succeed())

		i := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, key, i)).To(Succeed())
		patch := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/status/appliedOperatorVersionDigest"}]`))
		Expect(k8sClient.Status().Patch(ctx, i, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, key)
			g.Expect(i.Status.PlanStatus["update"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(i.Status.AppliedOperatorVersionDigest).NotTo(HaveSuffix(strings.Repeat("0", 64)))
			g.Expect(meta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
		}).Should(Succeed())
	})
})
