package controllers_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Behaviours of KUDO v0.19 that users' Instances, scripts and tests rely on
// (the KUDO v0.19 reference's "Details that existing Instances, packages and
// tests depend on"; docs/compatibility.md lists each and its test).
var _ = Describe("KUDO compatibility", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("completes a plan with no phases at once, and the plans after it", func() {
		ov := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "empty-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator:   corev1.ObjectReference{Name: "empty"},
				Parameters: []kudov1beta1.Parameter{{Name: "GREETING", Default: ptr.To("hello")}},
				Plans:      map[string]kudov1beta1.Plan{"deploy": {}, "update": {}},
			},
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i := newInstance(ns, "empty", ov.Name)
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key := client.ObjectKeyFromObject(i)
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
		}).Should(Succeed())

		setParameters(ctx, key, map[string]string{"GREETING": "hi"})
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["update"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(got.Spec.PlanExecution).To(Equal(kudov1beta1.PlanExecution{}))
		}).Should(Succeed())
	})

	It("admits an Instance leaving unset a parameter whose required is unset, which renders as empty", func() {
		ov := configMapsOperator(ns, "optional")
		ov.Spec.Parameters = append(ov.Spec.Parameters, kudov1beta1.Parameter{Name: "NOTE"})
		ov.Spec.Templates["a.yaml"] += "  note: \"{{ .Params.NOTE }}\"\n"
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i := newInstance(ns, "optional", ov.Name)
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "optional-a"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("note", ""))
		}).Should(Succeed())
	})

	It("records KUDO's PlanStarted and PlanFinished events on the Instance", func() {
		_, key := deployDemo(ctx, ns)
		Eventually(func(g Gomega) {
			g.Expect(instanceEvents(ctx, g, key)).To(SatisfyAll(
				HaveKey("PlanStarted: Execution of plan deploy started"),
				HaveKey("PlanFinished: Execution of plan deploy finished with status COMPLETE")))
		}).Should(Succeed())
	})

	It("starts the running plan over, with a new uid and the new values, when a change triggers it, and ends the run before as SUPERSEDED", func() {
		ov := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hold-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator:   corev1.ObjectReference{Name: "hold"},
				Parameters: []kudov1beta1.Parameter{{Name: "GREETING", Default: ptr.To("hello")}},
				Templates:  map[string]string{"a.yaml": fmt.Sprintf(configMapTemplate, "a")},
				Tasks: []kudov1beta1.Task{applyTask("a", "a.yaml"),
					{Name: "wait", Kind: kudov1beta1.DummyTaskKind}},
				// No update plan: a parameter change triggers deploy, which runs.
				Plans: map[string]kudov1beta1.Plan{
					"deploy": plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("a", "a"), step("wait", "wait"))),
				},
			},
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i := newInstance(ns, "hold", ov.Name)
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key := client.ObjectKeyFromObject(i)
		var firstUID string
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			deploy := got.Status.PlanStatus["deploy"]
			g.Expect(deploy.Status).To(Equal(kudov1beta1.ExecutionInProgress))
			g.Expect(deploy.Phases[0].Steps[1].Status).To(Equal(kudov1beta1.ExecutionInProgress))
			firstUID = string(deploy.UID)
		}).Should(Succeed())

		setParameters(ctx, key, map[string]string{"GREETING": "hi"})
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			deploy := got.Status.PlanStatus["deploy"]
			g.Expect(string(deploy.UID)).NotTo(Equal(firstUID))
			g.Expect(deploy.UID).To(Equal(got.Spec.PlanExecution.UID))
			g.Expect(got.Status.AppliedParameters).To(HaveKeyWithValue("GREETING", "hi"))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hold-a"}, cm)).To(Succeed())
			g.Expect(cm.Data["greeting"]).To(Equal("hi"))
			g.Expect(cm.Annotations).To(HaveKeyWithValue("kudo.dev/last-plan-execution-uid", string(deploy.UID)))
			g.Expect(got.Status.Revisions).To(HaveExactElements(
				And(HaveField("UID", BeEquivalentTo(firstUID)), HaveField("Status", kudov1beta1.ExecutionSuperseded)),
				And(HaveField("UID", deploy.UID), HaveField("Status", kudov1beta1.ExecutionInProgress))))
		}).Should(Succeed())
	})

	DescribeTable("ends a plan applying a kind the server does not serve in FATAL_ERROR, unless the plan applies its CRD",
		func(withCRD bool, want kudov1beta1.ExecutionStatus, message string) {
			group := "widgets" + ns + ".kudo.dev"
			crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group)
			widget := fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: w\n", group)
			steps := []kudov1beta1.Step{step("widget", "widget")}
			if withCRD {
				steps = []kudov1beta1.Step{step("crd", "crd"), step("widget", "widget")}
			}
			ov := &kudov1beta1.OperatorVersion{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widgets-0.1.0"},
				Spec: kudov1beta1.OperatorVersionSpec{
					Operator:  corev1.ObjectReference{Name: "widgets"},
					Templates: map[string]string{"crd.yaml": crd, "widget.yaml": widget},
					Tasks:     []kudov1beta1.Task{applyTask("crd", "crd.yaml"), applyTask("widget", "widget.yaml")},
					Plans:     map[string]kudov1beta1.Plan{"deploy": plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, steps...))},
				},
			}
			Expect(k8sClient.Create(ctx, ov)).To(Succeed())
			i := newInstance(ns, "widgets", ov.Name)
			Expect(k8sClient.Create(ctx, i)).To(Succeed())
			Eventually(func(g Gomega) {
				deploy := getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"]
				g.Expect(deploy.Status).To(Equal(want))
				g.Expect(deploy.Message).To(ContainSubstring(message))
			}).Should(Succeed())
		},
		Entry("no task applies its CRD: FATAL_ERROR at once", false, kudov1beta1.ExecutionFatalError,
			"no task of plan deploy applies a CustomResourceDefinition serving it"),
		Entry("an earlier step applies its CRD: the plan completes", true, kudov1beta1.ExecutionComplete, ""),
	)
})
