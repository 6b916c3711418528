package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// keptOperator applies ConfigMaps "a" and, while EXTRA is true, "extra"
// (one task), and "b" (another). Version 0.2.0 no longer has extra.yaml.
func keptOperator(ns, version string) *kudov1beta1.OperatorVersion {
	resources := []string{"a.yaml", "extra.yaml"}
	if version != "0.1.0" {
		resources = []string{"a.yaml"}
	}
	return &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kept-" + version},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator: corev1.ObjectReference{Name: "kept", Kind: "Operator"},
			Version:  version,
			Templates: map[string]string{
				"a.yaml": fmt.Sprintf(configMapTemplate, "a"), "b.yaml": fmt.Sprintf(configMapTemplate, "b"),
				"extra.yaml": "{{ if eq .Params.EXTRA \"true\" }}" + fmt.Sprintf(configMapTemplate, "extra") + "{{ end }}",
			},
			Parameters: []kudov1beta1.Parameter{
				{Name: "GREETING", Default: ptr.To("hello")},
				{Name: "EXTRA", Default: ptr.To("true")},
			},
			Tasks: []kudov1beta1.Task{applyTask("a", resources...), applyTask("b", "b.yaml")},
			Plans: map[string]kudov1beta1.Plan{
				"deploy": plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("a", "a"), step("b", "b"))),
			},
		},
	}
}

// deployKept installs keptOperator 0.1.0 with the annotations and waits for
// its deploy plan.
func deployKept(ctx context.Context, ns string, annotations map[string]string) types.NamespacedName {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, keptOperator(ns, "0.1.0"))).To(Succeed())
	i := newInstance(ns, "kept", "kept-0.1.0")
	i.Annotations = annotations
	Expect(k8sClient.Create(ctx, i)).To(Succeed())
	key := client.ObjectKeyFromObject(i)
	Eventually(func(g Gomega) {
		got := getInstance(ctx, g, key)
		g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
	}).Should(Succeed())
	return key
}

// ready reads the Instance's Ready condition.
func ready(ctx context.Context, g Gomega, key types.NamespacedName) metav1.Condition {
	c := meta.FindStatusCondition(getInstance(ctx, g, key).Status.Conditions, kudov1beta1.ReadyCondition)
	g.Expect(c).NotTo(BeNil())
	return *c
}

// instanceEvents lists "Reason: message" of the events on an Instance, and
// how often each was recorded.
func instanceEvents(ctx context.Context, g Gomega, key types.NamespacedName) map[string]int32 {
	return eventsOn(ctx, g, "Instance", key)
}

// eventsOn lists "Reason: message" of the events on an object of a kind,
// and how often each was recorded.
func eventsOn(ctx context.Context, g Gomega, kind string, key types.NamespacedName) map[string]int32 {
	events := &corev1.EventList{}
	g.Expect(k8sClient.List(ctx, events, client.InNamespace(key.Namespace))).To(Succeed())
	seen := map[string]int32{}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == key.Name {
			seen[e.Reason+": "+e.Message] += max(e.Count, 1)
		}
	}
	return seen
}

// reasons counts the events on an Instance by reason.
func reasons(ctx context.Context, g Gomega, key types.NamespacedName) map[string]int32 {
	byReason := map[string]int32{}
	for text, n := range instanceEvents(ctx, g, key) {
		reason, _, _ := strings.Cut(text, ":")
		byReason[reason] += n
	}
	return byReason
}

// wake has the Instance reconciled, as a manager starting does: a status
// change alone does not wake it, a new annotation does.
func wake(ctx context.Context, key types.NamespacedName) {
	GinkgoHelper()
	i := getInstance(ctx, Default, key)
	patch := client.MergeFrom(i.DeepCopy())
	i.Annotations = map[string]string{"woken": "yes"}
	Expect(k8sClient.Patch(ctx, i, patch)).To(Succeed())
}

func configMap(ctx context.Context, g Gomega, ns, name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)).To(Succeed())
	return cm
}

// editAs changes a ConfigMap's data as another field manager would.
func editAs(ctx context.Context, manager, ns, name string, data map[string]string) {
	GinkgoHelper()
	cm := &corev1.ConfigMap{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)).To(Succeed())
	patch := client.MergeFrom(cm.DeepCopy())
	for k, v := range data {
		cm.Data[k] = v
	}
	Expect(k8sClient.Patch(ctx, cm, patch, client.FieldOwner(manager))).To(Succeed())
}

var _ = Describe("The inventory of an Instance", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("records what each task applied, in the status", func() {
		key := deployKept(ctx, ns, nil)
		got := getInstance(ctx, Default, key)
		Expect(got.Status.Inventory).To(HaveLen(2))
		a := got.Status.Inventory[0]
		Expect(a.Task).To(Equal("a"))
		Expect(a.Plan).To(Equal("deploy"))
		Expect([]string{a.Phase, a.Step}).To(Equal([]string{"main", "a"}))
		Expect(a.PlanUID).To(Equal(got.Status.PlanStatus["deploy"].UID))
		var names []string
		for _, o := range a.Objects {
			Expect(o.APIVersion).To(Equal("v1"))
			Expect(o.Kind).To(Equal("ConfigMap"))
			Expect(o.Namespace).To(Equal(ns))
			Expect(o.Hash).NotTo(BeEmpty())
			names = append(names, o.Name)
		}
		Expect(names).To(Equal([]string{"kept-a", "kept-extra"}))
		Expect(got.Status.Inventory[1].Objects).To(ConsistOf(HaveField("Name", "kept-b")))
	})

	It("fills the inventory of an Instance whose plans ran before kudo-ng kept one", func() {
		key := deployKept(ctx, ns, nil)
		recorded := getInstance(ctx, Default, key).Status.Inventory
		Expect(k8sClient.Status().Patch(ctx, getInstance(ctx, Default, key),
			client.RawPatch(types.MergePatchType, []byte(`{"status":{"inventory":null}}`)))).To(Succeed())
		Expect(getInstance(ctx, Default, key).Status.Inventory).To(BeEmpty())
		wake(ctx, key)
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, key).Status.Inventory).To(Equal(recorded))
		}).Should(Succeed())
	})

	It("without correction, is not Ready with Missing naming a deleted object, and Ready again once a plan applies it", func() {
		key := deployKept(ctx, ns, nil)
		Expect(k8sClient.Delete(ctx, configMap(ctx, Default, ns, "kept-b"))).To(Succeed())
		Eventually(func(g Gomega) {
			c := ready(ctx, g, key)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal("Missing"))
			g.Expect(c.Message).To(Equal(fmt.Sprintf("ConfigMap %s/kept-b is missing", ns)))
			g.Expect(instanceEvents(ctx, g, key)).To(HaveKey(fmt.Sprintf("Missing: Not ready: ConfigMap %s/kept-b is missing", ns)))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept-b"}, &corev1.ConfigMap{}))).To(BeTrue())
		}, "2s").Should(Succeed())

		current := getInstance(ctx, Default, key)
		patch := client.MergeFrom(current.DeepCopy())
		current.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "deploy", UID: "0b4e2a6c-2222-4c1d-9b2a-000000000002"}
		Expect(k8sClient.Patch(ctx, current, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			c := ready(ctx, g, key)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			configMap(ctx, g, ns, "kept-b")
		}).Should(Succeed())
	})

	It("without correction, is not Ready with Drifted when another manager changes a field the plan applied", func() {
		key := deployKept(ctx, ns, nil)
		editAs(ctx, "someone", ns, "kept-a", map[string]string{"greeting": "changed"})
		Eventually(func(g Gomega) {
			c := ready(ctx, g, key)
			g.Expect(c.Reason).To(Equal("Drifted"))
			g.Expect(c.Message).To(Equal(fmt.Sprintf("ConfigMap %s/kept-a was changed by another field manager", ns)))
		}).Should(Succeed())
		Expect(configMap(ctx, Default, ns, "kept-a").Data["greeting"]).To(Equal("changed"))
	})

	It("with correction on, applies again what was deleted or changed: Ready goes False, then True, with events", func() {
		key := deployKept(ctx, ns, map[string]string{kudov1beta1.DriftCorrectionAnnotation: "true"})
		original := configMap(ctx, Default, ns, "kept-b")
		Expect(k8sClient.Delete(ctx, original)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(configMap(ctx, g, ns, "kept-b").UID).NotTo(Equal(original.UID))
		}, "5s").Should(Succeed())

		editAs(ctx, "someone", ns, "kept-a", map[string]string{"greeting": "changed"})
		Eventually(func(g Gomega) {
			g.Expect(configMap(ctx, g, ns, "kept-a").Data["greeting"]).To(Equal("hello"))
		}, "5s").Should(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(ready(ctx, g, key).Status).To(Equal(metav1.ConditionTrue))
			events := instanceEvents(ctx, g, key)
			g.Expect(events).To(HaveKey(fmt.Sprintf("DriftCorrected: ConfigMap %s/kept-b applied again as plan deploy rendered it: ConfigMap %s/kept-b is missing", ns, ns)))
			g.Expect(events).To(HaveKey(fmt.Sprintf("DriftCorrected: ConfigMap %s/kept-a applied again as plan deploy rendered it: "+
				"ConfigMap %s/kept-a was changed by another field manager", ns, ns)))
			g.Expect(events).To(HaveKey(fmt.Sprintf("Missing: Not ready: ConfigMap %s/kept-b is missing; applied again", ns)))
			g.Expect(events).To(HaveKey("ResourcesReady: Ready: Plan deploy is complete"))
		}).Should(Succeed())
		Expect(getInstance(ctx, Default, key).Status.PlanStatus["deploy"].UID).To(BeEquivalentTo(original.Annotations["kudo.dev/last-plan-execution-uid"]),
			"correction runs no plan")
	})

	It("leaves alone a field another manager owns and the plan does not set", func() {
		key := deployKept(ctx, ns, map[string]string{kudov1beta1.DriftCorrectionAnnotation: "true"})
		editAs(ctx, "autoscaler", ns, "kept-a", map[string]string{"replicas": "5"})
		Consistently(func(g Gomega) {
			g.Expect(configMap(ctx, g, ns, "kept-a").Data).To(HaveKeyWithValue("replicas", "5"))
			g.Expect(ready(ctx, g, key).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(reasons(ctx, g, key)).NotTo(HaveKey("DriftCorrected"))
		}, "3s").Should(Succeed())
	})

	It("leaves alone an object annotated kudo.dev/reconcile: disabled", func() {
		key := deployKept(ctx, ns, map[string]string{kudov1beta1.DriftCorrectionAnnotation: "true"})
		cm := configMap(ctx, Default, ns, "kept-a")
		patch := client.MergeFrom(cm.DeepCopy())
		cm.Annotations["kudo.dev/reconcile"] = "disabled"
		cm.Data["greeting"] = "mine"
		Expect(k8sClient.Patch(ctx, cm, patch, client.FieldOwner("someone"))).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(configMap(ctx, g, ns, "kept-a").Data["greeting"]).To(Equal("mine"))
			g.Expect(ready(ctx, g, key).Status).To(Equal(metav1.ConditionTrue))
		}, "3s").Should(Succeed())
	})

	It("bounds its corrections in a fight with another field manager, and says so", func() {
		key := deployKept(ctx, ns, map[string]string{kudov1beta1.DriftCorrectionAnnotation: "true"})
		fightCtx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		writes := 0
		for fightCtx.Err() == nil {
			cm := &corev1.ConfigMap{}
			if k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept-a"}, cm) == nil && cm.Data["greeting"] != "theirs" {
				patch := client.MergeFrom(cm.DeepCopy())
				cm.Data["greeting"] = "theirs"
				if k8sClient.Patch(ctx, cm, patch, client.FieldOwner("fighter")) == nil {
					writes++
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		// Corrections come after 0, 1, 2, 4 s of waiting: five in 10 s at most,
		// against a fighter that changes the field within 100 ms each time.
		corrected := reasons(ctx, Default, key)["DriftCorrected"]
		Expect(corrected).To(BeNumerically(">=", 3))
		Expect(corrected).To(BeNumerically("<=", 5))
		Expect(writes).To(BeNumerically("<=", int(corrected)+1))
		got := getInstance(ctx, Default, key)
		c := meta.FindStatusCondition(got.Status.Conditions, kudov1beta1.ReadyCondition)
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		Expect(c.Reason).To(Equal("DriftFight"))
		Expect(c.Message).To(ContainSubstring(fmt.Sprintf("ConfigMap %s/kept-a is changed again after each correction", ns)))
		Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.StalledCondition)).To(BeTrue())
		Expect(reasons(ctx, Default, key)).To(HaveKey("DriftFight"))
	})

	It("prunes a template a new OperatorVersion dropped, exactly that object, and says so in the plan status", func() {
		key := deployKept(ctx, ns, nil)
		Expect(k8sClient.Create(ctx, keptOperator(ns, "0.2.0"))).To(Succeed())
		current := getInstance(ctx, Default, key)
		patch := client.MergeFrom(current.DeepCopy())
		current.Spec.OperatorVersion.Name = "kept-0.2.0"
		Expect(k8sClient.Patch(ctx, current, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.AppliedOperatorVersion).To(Equal("kept-0.2.0"))
			g.Expect(got.Status.PlanStatus["deploy"].Pruned).To(Equal([]kudov1beta1.ObjectRef{
				{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "kept-extra"}}))
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept-extra"}, &corev1.ConfigMap{}))).To(BeTrue())
			g.Expect(ready(ctx, g, key).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		configMap(ctx, Default, ns, "kept-a")
		configMap(ctx, Default, ns, "kept-b")
	})

	It("prunes the object of a conditional template a parameter switched off", func() {
		key := deployKept(ctx, ns, nil)
		setParameters(ctx, key, map[string]string{"EXTRA": "false"})
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept-extra"}, &corev1.ConfigMap{}))).To(BeTrue())
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Pruned).To(ConsistOf(HaveField("Name", "kept-extra")))
		}).Should(Succeed())
		configMap(ctx, Default, ns, "kept-a")
	})

	It("does not prune an object annotated kudo.dev/prune: disabled, and forgets it", func() {
		key := deployKept(ctx, ns, nil)
		cm := configMap(ctx, Default, ns, "kept-extra")
		patch := client.MergeFrom(cm.DeepCopy())
		cm.Annotations["kudo.dev/prune"] = "disabled"
		Expect(k8sClient.Patch(ctx, cm, patch)).To(Succeed())

		setParameters(ctx, key, map[string]string{"EXTRA": "false"})
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(got.Status.Inventory[0].Objects).To(ConsistOf(HaveField("Name", "kept-a")))
			g.Expect(got.Status.Inventory[0].Stale).To(BeEmpty())
			g.Expect(instanceEvents(ctx, g, key)).To(HaveKey(fmt.Sprintf(
				"Kept: Kept ConfigMap %s/kept-extra (no run of task a renders it any more): annotated kudo.dev/prune: disabled", ns)))
		}).Should(Succeed())
		Expect(getInstance(ctx, Default, key).Status.PlanStatus["deploy"].Pruned).To(BeEmpty())
		configMap(ctx, Default, ns, "kept-extra")
	})

	It("holds its cleanup finalizer before it applies what owner references cannot delete", func() {
		name := ns + "-first"
		watcher, err := client.NewWithWatch(testEnv.Config, client.Options{Scheme: scheme.Scheme})
		Expect(err).NotTo(HaveOccurred())
		w, err := watcher.Watch(ctx, &rbacv1.ClusterRoleList{}, client.MatchingFields{"metadata.name": name})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		ov := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator: corev1.ObjectReference{Name: "first"}, Version: "0.1.0",
				Templates: map[string]string{
					"role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + name + "}\n",
				},
				Tasks: []kudov1beta1.Task{applyTask("role", "role.yaml")},
				Plans: map[string]kudov1beta1.Plan{"deploy": plan("", phase("main", "", step("role", "role")))},
			},
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i := newInstance(ns, "first", ov.Name)
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		Eventually(w.ResultChan()).Should(Receive(HaveField("Type", watch.Added)))
		Expect(getInstance(ctx, Default, client.ObjectKeyFromObject(i)).Finalizers).To(ContainElement(kudov1beta1.InstanceCleanupFinalizer))
	})

	It("deletes on uninstall what owner references cannot: cluster-scoped objects, objects in other namespaces, CRDs without custom resources", func() {
		other := newNamespace(ctx)
		suffix := ns
		crd := func(plural string) string {
			return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s.kudo-ng.dev
spec:
  group: %[2]s.kudo-ng.dev
  scope: Namespaced
  names: {plural: %[1]s, singular: %[3]s, kind: %[4]s, listKind: %[4]sList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, plural, suffix, plural[:len(plural)-1], "K"+plural[:len(plural)-1])
		}
		ov := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wide-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator: corev1.ObjectReference{Name: "wide"}, Version: "0.1.0",
				Templates: map[string]string{
					"role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + ns + "-reader}\n" +
						"rules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]\n",
					"binding.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: " + ns + "-reader}\n" +
						"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: " + ns + "-reader}\n" +
						"subjects: [{kind: ServiceAccount, name: default, namespace: " + ns + "}]\n",
					"elsewhere.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: elsewhere\n  annotations: {kudo.dev/namespace: " + other + "}\n",
					"crds.yaml":      crd("empties") + "---\n" + crd("fulls"),
				},
				Tasks: []kudov1beta1.Task{applyTask("everything", "crds.yaml", "role.yaml", "binding.yaml", "elsewhere.yaml")},
				Plans: map[string]kudov1beta1.Plan{"deploy": plan("", phase("main", "", step("everything", "everything")))},
			},
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i := newInstance(ns, "wide", ov.Name)
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key := client.ObjectKeyFromObject(i)
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(got.Finalizers).To(ContainElement(kudov1beta1.InstanceCleanupFinalizer))
		}).Should(Succeed())
		elsewhere := configMap(ctx, Default, other, "elsewhere")
		Expect(elsewhere.Labels).To(HaveKeyWithValue("kudo.dev/instance", "wide"))
		Expect(elsewhere.OwnerReferences).To(BeEmpty())

		// Someone else's data in one of the CRDs: that CRD must stay.
		theirs := &unstructured.Unstructured{}
		theirs.SetAPIVersion(suffix + ".kudo-ng.dev/v1")
		theirs.SetKind("Kfull")
		theirs.SetNamespace(other)
		theirs.SetName("theirs")
		Eventually(func() error { return k8sClient.Create(ctx, theirs) }).Should(Succeed())

		Expect(k8sClient.Delete(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &kudov1beta1.Instance{}))).To(BeTrue())
			for _, obj := range []client.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}} {
				g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: ns + "-reader"}, obj))).To(BeTrue())
			}
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: other, Name: "elsewhere"}, &corev1.ConfigMap{}))).To(BeTrue())
			empties := crdObject()
			err := k8sClient.Get(ctx, client.ObjectKey{Name: "empties." + suffix + ".kudo-ng.dev"}, empties)
			g.Expect(apierrors.IsNotFound(err) || empties.GetDeletionTimestamp() != nil).To(BeTrue())
		}).Should(Succeed())
		fulls := crdObject()
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "fulls." + suffix + ".kudo-ng.dev"}, fulls)).To(Succeed())
		Expect(fulls.GetDeletionTimestamp()).To(BeNil())
		Expect(instanceEvents(ctx, Default, key)).To(HaveKey(fmt.Sprintf(
			"CustomResourceDefinitionKept: Kept CustomResourceDefinition fulls.%s.kudo-ng.dev (Instance wide is uninstalled): "+
				"custom resources of it remain, Kfull %s/theirs among them; delete them, then the CustomResourceDefinition", suffix, other)))
	})
})

func crdObject() *unstructured.Unstructured {
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	return crd
}
