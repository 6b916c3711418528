package controllers_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// asKUDOLeftIt rewrites an Instance's status as KUDO v0.19 left it — its
// plan statuses, nothing of kudo-ng's — with the deploy plan's status
// merged from deploy, and wakes the Instance, as a manager starting does.
func asKUDOLeftIt(ctx context.Context, key types.NamespacedName, deploy string) {
	GinkgoHelper()
	kudoStatus := `{"status":{"inventory":null,"appliedParameters":null,"appliedOperatorVersion":null,"appliedGeneration":null,` +
		`"activePlan":null,"revisions":null,"planStatus":{"deploy":` + deploy + `}}}`
	Expect(k8sClient.Status().Patch(ctx, getInstance(ctx, Default, key),
		client.RawPatch(types.MergePatchType, []byte(kudoStatus)))).To(Succeed())
	Expect(getInstance(ctx, Default, key).Status.AppliedOperatorVersion).To(BeEmpty())
	wake(ctx, key)
}

// resourceVersions are those of the kept operator's ConfigMaps.
func resourceVersions(ctx context.Context, g Gomega, ns string) []string {
	var versions []string
	for _, name := range []string{"kept-a", "kept-extra", "kept-b"} {
		versions = append(versions, configMap(ctx, g, ns, name).ResourceVersion)
	}
	return versions
}

// Switching from KUDO v0.19 (kubectl kudo init --upgrade) runs nothing:
// docs/compatibility.md, "Switching from KUDO".
var _ = Describe("An Instance KUDO ran", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("is adopted as it is: its completed deploy plan does not run again, until a parameter changes", func() {
		key := deployKept(ctx, ns, nil)
		recorded := getInstance(ctx, Default, key).Status.Inventory
		versions := resourceVersions(ctx, Default, ns)
		asKUDOLeftIt(ctx, key, `{"status":"COMPLETE"}`)

		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.AppliedOperatorVersion).To(Equal("kept-0.1.0"))
			g.Expect(got.Status.Inventory).To(Equal(recorded))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
			g.Expect(instanceEvents(ctx, g, key)).To(HaveKey("Adopted: Adopted from KUDO as it was, with OperatorVersion kept-0.1.0 " +
				"and its current parameters: plan deploy is COMPLETE, and it runs again when a parameter that triggers it changes"))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(reasons(ctx, g, key)).To(HaveKeyWithValue("PlanStarted", BeNumerically("==", 1)))
			g.Expect(resourceVersions(ctx, g, ns)).To(Equal(versions))
		}, 2*time.Second).Should(Succeed())

		setParameters(ctx, key, map[string]string{"GREETING": "hi"})
		Eventually(func(g Gomega) {
			g.Expect(reasons(ctx, g, key)).To(HaveKeyWithValue("PlanStarted", BeNumerically("==", 2)))
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(configMap(ctx, g, ns, "kept-a").Data).To(HaveKeyWithValue("greeting", "hi"))
		}).Should(Succeed())
	})

	It("keeps a plan KUDO left in FATAL_ERROR there, Stalled, until a user acts", func() {
		key := deployKept(ctx, ns, nil)
		asKUDOLeftIt(ctx, key, `{"status":"FATAL_ERROR","message":"step b failed"}`)

		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.AppliedOperatorVersion).To(Equal("kept-0.1.0"))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.StalledCondition)).To(BeTrue())
			g.Expect(instanceEvents(ctx, g, key)).To(HaveKey(HaveSuffix("plan deploy is FATAL_ERROR, and it stays so " +
				"until it is retried or the Instance is updated")))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(reasons(ctx, g, key)).To(HaveKeyWithValue("PlanStarted", BeNumerically("==", 1)))
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionFatalError))
		}, 2*time.Second).Should(Succeed())
	})

	It("goes on with a plan KUDO left IN_PROGRESS from its steps, without starting it again", func() {
		key := deployKept(ctx, ns, nil)
		a := configMap(ctx, Default, ns, "kept-a").ResourceVersion
		Expect(k8sClient.Delete(ctx, configMap(ctx, Default, ns, "kept-b"))).To(Succeed())
		asKUDOLeftIt(ctx, key, `{"status":"IN_PROGRESS","phases":[{"name":"main","status":"IN_PROGRESS",`+
			`"steps":[{"name":"a","status":"COMPLETE"},{"name":"b","status":"PENDING"}]}]}`)

		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(reasons(ctx, g, key)).To(HaveKeyWithValue("PlanFinished", BeNumerically("==", 2)))
			configMap(ctx, g, ns, "kept-b")
		}).Should(Succeed())
		Expect(reasons(ctx, Default, key)).To(HaveKeyWithValue("PlanStarted", BeNumerically("==", 1)))
		Expect(configMap(ctx, Default, ns, "kept-a").ResourceVersion).To(Equal(a))
	})
})
