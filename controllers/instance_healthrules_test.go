package controllers_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
)

// widgetOperatorVersion is the example package whose Widgets say how they
// are in status.phase (examples/widget), in namespace ns, with the Widget
// CRD installed once for the suite: two Instances cannot both own the
// cluster's one CRD, so the plan leaves out the step that applies it. The
// suite runs no Widget controller: the tests write the Widgets' status.
func widgetOperatorVersion(ctx context.Context, ns string) *kudov1beta1.OperatorVersion {
	GinkgoHelper()
	p, err := packages.Read(filepath.Join("..", "examples", "widget", "operator"))
	Expect(err).NotTo(HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(yaml.Unmarshal([]byte(p.Templates["crd.yaml"]), crd)).To(Succeed())
	if err := k8sClient.Create(ctx, crd); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
		g.Expect(crd.Status.Conditions).To(ContainElement(And(
			HaveField("Type", apiextensionsv1.Established), HaveField("Status", apiextensionsv1.ConditionTrue))))
	}).Should(Succeed())
	_, ov, err := p.Convert(ns)
	Expect(err).NotTo(HaveOccurred())
	deploy := ov.Spec.Plans["deploy"]
	deploy.Phases[0].Steps = deploy.Phases[0].Steps[1:]
	Expect(k8sClient.Create(ctx, ov)).To(Succeed())
	return ov
}

// setWidgetStatus writes a Widget's status, as its controller would.
func setWidgetStatus(ctx context.Context, key types.NamespacedName, status map[string]any) {
	GinkgoHelper()
	w := &unstructured.Unstructured{}
	w.SetAPIVersion("example.kudo.dev/v1")
	w.SetKind("Widget")
	Eventually(func() error { return k8sClient.Get(ctx, key, w) }).Should(Succeed())
	patch := client.MergeFrom(w.DeepCopy())
	w.Object["status"] = status
	Expect(k8sClient.Status().Patch(ctx, w, patch)).To(Succeed())
}

// waitingStep is the deploy plan's widget step, once the plan started.
func waitingStep(i *kudov1beta1.Instance) kudov1beta1.StepStatus {
	if phases := i.Status.PlanStatus["deploy"].Phases; len(phases) > 0 {
		return phases[0].Steps[0]
	}
	return kudov1beta1.StepStatus{}
}

var _ = Describe("Health rules shipped in a package", func() {
	const (
		current   = "healthChecks[0].current: status.phase == 'Ready'"
		readyWhen = "tasks[1].spec.readyWhen[0]: status.size == spec.size"
	)

	It("waits on a custom resource while its status.phase is Pending, saying why, and fails at once on Failed", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		ov := widgetOperatorVersion(ctx, ns)
		Expect(k8sClient.Create(ctx, newInstance(ns, "w", ov.Name))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "w"}

		Eventually(func(g Gomega) {
			step := waitingStep(getInstance(ctx, g, key))
			g.Expect(step.Status).To(Equal(kudov1beta1.ExecutionInProgress))
			g.Expect(step.WaitingOn).To(ConsistOf(And(
				HaveField("Kind", "Widget"), HaveField("Name", "w"), HaveField("Status", "InProgress"), HaveField("Rule", current),
				HaveField("Observed", ConsistOf(kudov1beta1.ObservedField{Field: "status.phase", Value: "<absent>"})),
				HaveField("Since", Not(BeNil())))))
		}).Should(Succeed())

		setWidgetStatus(ctx, key, map[string]any{"phase": "Pending"})
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, key)
			step := waitingStep(i)
			g.Expect(step.Status).To(Equal(kudov1beta1.ExecutionInProgress))
			g.Expect(step.Message).To(Equal(`waiting for Widget w: ` + current + ` does not hold yet (status.phase="Pending")`))
			g.Expect(step.WaitingOn).To(ConsistOf(HaveField("Observed",
				ConsistOf(kudov1beta1.ObservedField{Field: "status.phase", Value: `"Pending"`}))))
			ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Message).To(ContainSubstring(current))
		}).Should(Succeed())

		setWidgetStatus(ctx, key, map[string]any{"phase": "Failed"})
		Eventually(func(g Gomega) {
			ps := getInstance(ctx, g, key).Status.PlanStatus["deploy"]
			g.Expect(ps.Status).To(Equal(kudov1beta1.ExecutionFatalError))
			g.Expect(ps.Phases[0].Steps[0].Message).To(Equal(
				`task widget: Widget w has failed: healthChecks[0].failed: status.phase == 'Failed' holds (status.phase="Failed")`))
			g.Expect(ps.Phases[0].Steps[0].WaitingOn).To(BeEmpty())
		}).Should(Succeed())
	})

	It("completes when every rule holds, and the Instance's readiness after the plan follows the rule", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		ov := widgetOperatorVersion(ctx, ns)
		Expect(k8sClient.Create(ctx, newInstance(ns, "w", ov.Name))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "w"}

		By("the kind's rule holds, the task's readyWhen not yet")
		setWidgetStatus(ctx, key, map[string]any{"phase": "Ready", "size": int64(0)})
		Eventually(func(g Gomega) {
			step := waitingStep(getInstance(ctx, g, key))
			g.Expect(step.Status).To(Equal(kudov1beta1.ExecutionInProgress))
			g.Expect(step.WaitingOn).To(ConsistOf(And(HaveField("Rule", readyWhen), HaveField("Observed", ConsistOf(
				kudov1beta1.ObservedField{Field: "status.size", Value: "0"}, kudov1beta1.ObservedField{Field: "spec.size", Value: "1"})))))
		}).Should(Succeed())

		setWidgetStatus(ctx, key, map[string]any{"phase": "Ready", "size": int64(1)})
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, key)
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(waitingStep(i).WaitingOn).To(BeEmpty())
			g.Expect(meta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
		}).Should(Succeed())

		By("after the plan, the rule judges the Widget again")
		setWidgetStatus(ctx, key, map[string]any{"phase": "Pending", "size": int64(1)})
		Eventually(func(g Gomega) {
			ready := meta.FindStatusCondition(getInstance(ctx, g, key).Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(kudov1beta1.ResourceNotReadyReason))
			g.Expect(ready.Message).To(ContainSubstring(current + ` does not hold yet (status.phase="Pending")`))
		}).Should(Succeed())
		setWidgetStatus(ctx, key, map[string]any{"phase": "Ready", "size": int64(1)})
		Eventually(func(g Gomega) {
			g.Expect(meta.IsStatusConditionTrue(getInstance(ctx, g, key).Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
		}).Should(Succeed())
	})

	It("stalls an Instance whose OperatorVersion has a rule that does not compile, naming it, and runs nothing", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		ov := configMapsOperator(ns, "broken-rule")
		ov.Spec.HealthChecks = []kudov1beta1.HealthCheck{{APIVersion: "v1", Kind: "ConfigMap", Current: "data.size() =="}}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		Expect(k8sClient.Create(ctx, newInstance(ns, "broken", ov.Name))).To(Succeed())
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, types.NamespacedName{Namespace: ns, Name: "broken"})
			ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal(kudov1beta1.InvalidReason))
			g.Expect(ready.Message).To(ContainSubstring("healthChecks[0].current: Syntax error"))
			g.Expect(meta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.StalledCondition)).To(BeTrue())
		}).Should(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "broken-a"}, &corev1.ConfigMap{})).
			To(Satisfy(apierrors.IsNotFound))
	})
})
