package controllers_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// readObject reads a YAML file as an unstructured object, exactly as written.
func readObject(path, namespace string) *unstructured.Unstructured {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	obj := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal(data, &obj.Object)).To(Succeed())
	obj.SetNamespace(namespace)
	return obj
}

var _ = Describe("The kudo.dev/v1beta1 API", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("accepts a KUDO OperatorVersion unchanged and finds it valid", func() {
		in := readObject(filepath.Join("testdata", "kudo-operatorversion.yaml"), ns)
		want, _, _ := unstructured.NestedMap(in.Object, "spec")
		Expect(k8sClient.Create(ctx, in)).To(Succeed())

		out := &unstructured.Unstructured{}
		out.SetGroupVersionKind(in.GroupVersionKind())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(in), out)).To(Succeed())
		got, _, _ := unstructured.NestedMap(out.Object, "spec")
		Expect(got).To(Equal(want), "the API server pruned or changed fields of a KUDO OperatorVersion")

		Eventually(func(g Gomega) {
			ov := &kudov1beta1.OperatorVersion{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(in), ov)).To(Succeed())
			g.Expect(ov.Status.ObservedGeneration).To(Equal(ov.Generation))
			g.Expect(meta.IsStatusConditionTrue(ov.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
		}).Should(Succeed())
	})

	It("accepts the first-operator samples", func() {
		for _, f := range []string{"kudo_v1beta1_operator.yaml", "kudo_v1beta1_operatorversion.yaml", "kudo_v1beta1_instance.yaml"} {
			Expect(k8sClient.Create(ctx, readObject(filepath.Join("..", "config", "samples", f), ns))).To(Succeed(), f)
		}
		Eventually(func(g Gomega) {
			op := &kudov1beta1.Operator{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "first-operator"}, op)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(op.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
			g.Expect(op.Status.Versions).To(Equal([]kudov1beta1.OperatorVersionSummary{{
				Name: "first-operator-0.2.0", Version: "0.2.0", Instances: []string{"first-operator-instance"},
			}}))
		}).Should(Succeed())
	})

	It("accepts an OperatorVersion with an empty deploy plan and no templates", func() {
		ov := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "empty-0.1.0"},
			Spec:       kudov1beta1.OperatorVersionSpec{Plans: map[string]kudov1beta1.Plan{"deploy": {}}},
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
	})

	DescribeTable("rejects what KUDO's structure rules out",
		func(path []string, value any, message string) {
			in := readObject(filepath.Join("testdata", "kudo-operatorversion.yaml"), ns)
			Expect(unstructured.SetNestedField(in.Object, value, path...)).To(Succeed())
			err := k8sClient.Create(ctx, in)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("a plan strategy", []string{"spec", "plans", "deploy", "strategy"}, "random",
			`spec.plans.deploy.strategy: Unsupported value: "random": supported values: "serial", "parallel"`),
		Entry("a phase strategy", []string{"spec", "plans", "cleanup", "phases"},
			[]any{map[string]any{"name": "x", "strategy": "sometimes"}},
			`spec.plans.cleanup.phases[0].strategy: Unsupported value: "sometimes"`),
		Entry("a task kind", []string{"spec", "tasks"},
			[]any{map[string]any{"name": "app", "kind": "Kustomize"}},
			`spec.tasks[0].kind: Unsupported value: "Kustomize": supported values: "Apply", "Delete", "Toggle", "Pipe", "KudoOperator", "Dummy", "Helm"`),
		Entry("a parameter value-type", []string{"spec", "parameters"},
			[]any{map[string]any{"name": "PORT", "value-type": "float"}},
			`spec.parameters[0].value-type: Unsupported value: "float"`),
		Entry("a pipe kind", []string{"spec", "tasks"},
			[]any{map[string]any{"name": "p", "kind": "Pipe", "spec": map[string]any{"pipe": []any{map[string]any{"kind": "Pod"}}}}},
			`spec.tasks[0].spec.pipe[0].kind: Unsupported value: "Pod"`),
	)

	It("marks an OperatorVersion that breaks the verify rules Stalled, naming the field", func() {
		in := readObject(filepath.Join("testdata", "kudo-operatorversion.yaml"), ns)
		ov := &kudov1beta1.OperatorVersion{}
		Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(in.Object, ov)).To(Succeed())
		ov.Spec.Tasks[0].Spec.Resources = []string{"deployment.yaml", "missing.yaml"}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ov), ov)).To(Succeed())
			stalled := meta.FindStatusCondition(ov.Status.Conditions, kudov1beta1.StalledCondition)
			g.Expect(stalled).NotTo(BeNil())
			g.Expect(stalled.Message).To(Equal(`OperatorVersion: spec.tasks[0] app: spec.resources[1]: template "missing.yaml" is not in templates/`))
			g.Expect(meta.IsStatusConditionFalse(ov.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
		}).Should(Succeed())
	})

	It("keeps spec and status apart: status only through the subresource", func() {
		Expect(k8sClient.Create(ctx, readObject(filepath.Join("testdata", "kudo-operatorversion.yaml"), ns))).To(Succeed())
		in := readObject(filepath.Join("testdata", "kudo-instance.yaml"), ns)
		wantStatus, _, _ := unstructured.NestedMap(in.Object, "status")
		wantSpec, _, _ := unstructured.NestedMap(in.Object, "spec")
		Expect(k8sClient.Create(ctx, in)).To(Succeed())

		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(in.GroupVersionKind())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(in), got)).To(Succeed())
		Expect(got.Object).NotTo(HaveKey("status"), "create must ignore status")

		// The Instance controller writes the status meanwhile: retry on
		// conflict, and read what was stored from the update's answer, as a
		// later read may see the controller's next write.
		Eventually(func() error {
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(in), got); err != nil {
				return err
			}
			Expect(unstructured.SetNestedMap(got.Object, wantStatus, "status")).To(Succeed())
			return k8sClient.Status().Update(ctx, got)
		}).Should(Succeed())
		planStatus, _, _ := unstructured.NestedMap(got.Object, "status", "planStatus")
		Expect(planStatus).To(Equal(wantStatus["planStatus"]), "the KUDO status tree must round-trip")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(in), got)).To(Succeed())
		// The webhook filled the immutable parameter's default at create; the
		// controller clears planExecution when its plan ends.
		Expect(unstructured.SetNestedField(wantSpec, "fast", "parameters", "MODE")).To(Succeed())
		for _, field := range []string{"operatorVersion", "parameters"} {
			Expect(got.Object["spec"].(map[string]any)[field]).To(Equal(wantSpec[field]), field)
		}
	})

	It("keeps the OperatorVersion an Instance uses from being deleted, and lets it go once unused", func() {
		ov := readObject(filepath.Join("testdata", "kudo-operatorversion.yaml"), ns)
		Expect(k8sClient.Create(ctx, ov.DeepCopy())).To(Succeed())
		instance := readObject(filepath.Join("testdata", "kudo-instance.yaml"), ns)
		unstructured.RemoveNestedField(instance.Object, "status")
		Expect(k8sClient.Create(ctx, instance)).To(Succeed())
		key := client.ObjectKeyFromObject(instance)
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Delete(ctx, ov)).To(MatchError(ContainSubstring(
				"OperatorVersion " + ns + "/demo-1.0.0-0.1.0 is used by Instance " + key.Name + ", and the code Instances run cannot be taken from under them")))
		}).Should(Succeed())

		Expect(k8sClient.Delete(ctx, instance)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key, &kudov1beta1.Instance{}))
		}).Should(BeTrue())
		Eventually(func() error { return k8sClient.Delete(ctx, ov) }).Should(Succeed())
	})
})
