package controllers_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/controllers"
	"github.com/kudo-ng/kudo/internal/typedapi"
	"github.com/kudo-ng/kudo/test/typedtest"
)

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// typedOperator installs an Operator of ConfigMaps with an enum and an
// immutable parameter, under a name of its own (its kind is cluster-wide),
// and returns the names of its typed API once the API server serves it.
func typedOperator(ctx context.Context, ns string) (string, typedapi.Names) {
	return typedOperatorOf(ctx, ns, false)
}

// typedOperatorOf: with slow, deploy waits for ever on a Dummy task, so
// that a plan stays running.
func typedOperatorOf(ctx context.Context, ns string, slow bool) (string, typedapi.Names) {
	name := "typed" + rand.String(6)
	ov := configMapsOperator(ns, name)
	if slow {
		ov.Spec.Tasks = append(ov.Spec.Tasks, kudov1beta1.Task{Name: "wait", Kind: kudov1beta1.DummyTaskKind})
		ov.Spec.Plans["deploy"] = plan("", phase("main", "", step("wait", "wait")))
	}
	ov.Spec.Parameters = append(ov.Spec.Parameters,
		kudov1beta1.Parameter{Name: "SIZE", Default: ptr.To("small"), Enum: &[]string{"small", "large"}, Description: "How large."},
		kudov1beta1.Parameter{Name: "ZONE", Default: ptr.To("a"), Immutable: ptr.To(true)},
		kudov1beta1.Parameter{Name: replicasParameter, Type: kudov1beta1.IntegerValueType, Default: ptr.To("1")},
	)
	Expect(k8sClient.Create(ctx, &kudov1beta1.Operator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	Expect(k8sClient.Create(ctx, ov)).To(Succeed())
	names, err := typedapi.NamesOf(name, nil)
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: names.CRDName()}, crd)).To(Succeed())
		g.Expect(crd.GetLabels()).To(HaveKeyWithValue(typedapi.OperatorLabel, name))
		// The client finds the kind once discovery does.
		g.Expect(k8sClient.List(ctx, typedtest.List(names), client.InNamespace(ns))).To(Succeed())
	}).Should(Succeed())
	return name, names
}

// createDeployed creates a typed object with an empty spec and waits for
// its deploy plan to complete.
func createDeployed(ctx context.Context, names typedapi.Names, key types.NamespacedName) {
	GinkgoHelper()
	createDeployedWith(ctx, names, key, map[string]any{})
}

// createDeployedWith creates a typed object with spec and waits for its
// deploy plan to complete.
func createDeployedWith(ctx context.Context, names typedapi.Names, key types.NamespacedName, spec map[string]any) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, typedtest.Object(names, key.Namespace, key.Name, spec))).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(typedPlan(g, getTyped(ctx, g, names, key), "deploy")).To(Equal("COMPLETE"))
	}).Should(Succeed())
}

func getTyped(ctx context.Context, g Gomega, names typedapi.Names, key types.NamespacedName) *unstructured.Unstructured {
	obj := typedtest.Object(names, key.Namespace, key.Name, nil)
	g.Expect(k8sClient.Get(ctx, key, obj)).To(Succeed())
	return obj
}

// typedPlan is the status the typed object shows of a plan.
// nextVersion is the 0.2.0 of typedOperator's operator, serving
// apiVersion ("": v1, as 0.1.0), with REPLICAS replaced by replicas, or
// dropped when it is nil.
func nextVersion(ctx context.Context, ns, operator, apiVersion string, replicas *kudov1beta1.Parameter) *kudov1beta1.OperatorVersion {
	GinkgoHelper()
	first := &kudov1beta1.OperatorVersion{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: operator + "-0.1.0"}, first)).To(Succeed())
	next := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: operator + "-0.2.0"}, Spec: first.Spec}
	next.Spec.Version = secondVersion
	if apiVersion != "" {
		next.Spec.TypedAPI = &kudov1beta1.TypedAPI{Version: apiVersion}
	}
	next.Spec.Parameters = nil
	for _, p := range first.Spec.Parameters {
		switch {
		case p.Name != replicasParameter:
			next.Spec.Parameters = append(next.Spec.Parameters, p)
		case replicas != nil:
			next.Spec.Parameters = append(next.Spec.Parameters, *replicas)
		}
	}
	return next
}

// secondVersion is the version a spec upgrades to.
const secondVersion = "0.2.0"

// replicasParameter is typedOperator's integer parameter.
const replicasParameter = "REPLICAS"

// storedVersions are the versions the kind's CustomResourceDefinition
// says objects are stored in.
func storedVersions(ctx context.Context, g Gomega, names typedapi.Names) []any {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: names.CRDName()}, crd)).To(Succeed())
	status, _ := crd.Object["status"].(map[string]any)
	return status["storedVersions"].([]any)
}

func typedPlan(g Gomega, obj *unstructured.Unstructured, plan string) string {
	status, _, err := unstructured.NestedString(obj.Object, "status", "planStatus", plan, "status")
	g.Expect(err).NotTo(HaveOccurred())
	return status
}

func typedReady(g Gomega, obj *unstructured.Unstructured) metav1.ConditionStatus {
	conditions, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range conditions {
		if c := c.(map[string]any); c["type"] == kudov1beta1.ReadyCondition {
			return metav1.ConditionStatus(c["status"].(string))
		}
	}
	return ""
}

var _ = Describe("Typed APIs", func() {
	It("runs a typed object as an Instance: create runs deploy, a change the plan its field triggers", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		operator, names := typedOperator(ctx, ns)
		key := types.NamespacedName{Namespace: ns, Name: "t"}
		Expect(k8sClient.Create(ctx, typedtest.Object(names, ns, "t", map[string]any{"GREETING": "hi"}))).To(Succeed())

		Eventually(func(g Gomega) {
			obj := getTyped(ctx, g, names, key)
			g.Expect(typedPlan(g, obj, "deploy")).To(Equal("COMPLETE"))
			g.Expect(typedReady(g, obj)).To(Equal(metav1.ConditionTrue))
			g.Expect(obj.Object["status"]).To(HaveKeyWithValue("operatorVersion", operator+"-0.1.0"))
			g.Expect(obj.Object["status"]).To(HaveKeyWithValue("observedGeneration", obj.GetGeneration()))
		}).Should(Succeed())
		instance := getInstance(ctx, Default, key)
		// The object holds the engine's record of its Instance, which holds
		// none of its own.
		Expect(instance.Status).To(Equal(kudov1beta1.InstanceStatus{}))
		record, _, _ := unstructured.NestedString(getTyped(ctx, Default, names, key).Object, "status", "instance", "uid")
		Expect(record).To(Equal(string(instance.UID)))
		// The Instance holds the values the object sets, typed ones as
		// KUDO's strings; the others are the defaults of the OperatorVersion
		// it runs, which the cluster-wide kind does not write (issue 62).
		Expect(instance.Spec.Parameters).To(HaveKeyWithValue("GREETING", "hi"))
		Expect(instance.Spec.Parameters).NotTo(HaveKey("SIZE"))
		Expect(instance.Spec.Parameters).NotTo(HaveKey(replicasParameter))
		Expect(instance.Spec.OperatorVersion.Name).To(Equal(operator + "-0.1.0"))
		owner := metav1.GetControllerOf(instance)
		Expect(owner).NotTo(BeNil())
		Expect(owner.Kind).To(Equal(names.Kind))
		// Deleting the object deletes the Instance (the garbage collector,
		// which envtest does not run; the e2e suite does), and a foreground
		// deletion waits for its cleanup.
		Expect(owner.BlockOwnerDeletion).To(Equal(ptr.To(true)))

		By("a change of MOOD runs the plan it triggers, mood")
		Expect(k8sClient.Patch(ctx, typedtest.Object(names, ns, "t", map[string]any{"MOOD": "glad"}), client.Merge)).To(Succeed())
		Eventually(func(g Gomega) {
			obj := getTyped(ctx, g, names, key)
			g.Expect(typedPlan(g, obj, "mood")).To(Equal("COMPLETE"))
			g.Expect(obj.Object["status"]).To(HaveKeyWithValue("observedGeneration", obj.GetGeneration()))
			g.Expect(getInstance(ctx, g, key).Spec.Parameters).To(HaveKeyWithValue("MOOD", "glad"))
		}).Should(Succeed())

		By("an integer field is an integer, and the Instance holds its text")
		Expect(k8sClient.Patch(ctx, typedtest.Object(names, ns, "t", map[string]any{replicasParameter: 3}), client.Merge)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, key).Spec.Parameters).To(HaveKeyWithValue(replicasParameter, "3"))
		}).Should(Succeed())
	})

	It("keeps the record of its Instance's cleanup until it has run, then goes", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		_, names := typedOperator(ctx, ns)
		key := types.NamespacedName{Namespace: ns, Name: "t"}
		Expect(k8sClient.Create(ctx, typedtest.Object(names, ns, "t", map[string]any{}))).To(Succeed())
		Eventually(func(g Gomega) {
			obj := getTyped(ctx, g, names, key)
			g.Expect(typedPlan(g, obj, "deploy")).To(Equal("COMPLETE"))
			// The package has a cleanup plan: the object must outlive it.
			g.Expect(obj.GetFinalizers()).To(ContainElement(kudov1beta1.InstanceCleanupFinalizer))
		}).Should(Succeed())

		Expect(k8sClient.Delete(ctx, typedtest.Object(names, ns, "t", nil))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, typedtest.Object(names, ns, "t", nil)))).To(BeTrue())
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &kudov1beta1.Instance{}))).To(BeTrue())
			g.Expect(instanceEvents(ctx, g, key)).To(HaveKey("PlanFinished: Execution of plan cleanup finished with status COMPLETE"))
			// envtest runs no garbage collector: the manager deleted what its
			// plans applied, from the inventory the object recorded.
			for _, name := range []string{"t-a", "t-b", "t-farewell"} {
				g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{}))).To(BeTrue(), name)
			}
		}).Should(Succeed())
	})

	It("deletes no object a forged status names in its inventory: another tenant's ConfigMap stays (issue 62)", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		_, names := typedOperator(ctx, ns)
		key := types.NamespacedName{Namespace: ns, Name: "t"}
		createDeployed(ctx, names, key)
		victim := newNamespace(ctx)
		precious := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "precious"}, Data: map[string]string{"k": "v"}}
		Expect(k8sClient.Create(ctx, precious)).To(Succeed())

		// Whoever may write the object's status lists the ConfigMap as what
		// a task applied.
		obj := getTyped(ctx, Default, names, key)
		forged, err := typedtest.WithForgedInventory(obj, "v1 ConfigMap "+victim+"/precious")
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Status().Patch(ctx, forged, client.MergeFrom(obj))).To(Succeed())

		Expect(k8sClient.Delete(ctx, typedtest.Object(names, ns, "t", nil))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &kudov1beta1.Instance{}))).To(BeTrue())
			g.Expect(instanceEvents(ctx, g, key)).To(HaveKey(fmt.Sprintf("Kept: Kept ConfigMap %s/precious (Instance t is uninstalled): it is no Instance's", victim)))
		}).Should(Succeed())
		live := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(precious), live)).To(Succeed())
		Expect(live.DeletionTimestamp).To(BeNil())
		Expect(live.Data).To(Equal(precious.Data))
	})

	It("writes no record to an object a tenant's Instance names as its controller that is no typed object: a Secret of its name stays as it was", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		operator, _ := typedOperator(ctx, ns)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t"}, StringData: map[string]string{"k": "v"}}
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())
		i := newInstance(ns, "t", operator+"-0.1.0")
		i.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "t", UID: secret.UID, Controller: ptr.To(true)}}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "t"}
		Eventually(func(g Gomega) {
			// The Instance holds its own record.
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())
		after := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, key, after)).To(Succeed())
		Expect(after.ResourceVersion).To(Equal(secret.ResourceVersion))
		Expect(after.Finalizers).To(BeEmpty())
	})

	It("has the API server refuse a bad enum value and a change of an immutable parameter, naming the field", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		_, names := typedOperator(ctx, ns)
		err := k8sClient.Create(ctx, typedtest.Object(names, ns, "bad", map[string]any{"SIZE": "huge"}))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(`spec.SIZE: Unsupported value: "huge": supported values: "small", "large"`))

		err = k8sClient.Create(ctx, typedtest.Object(names, ns, "bad", map[string]any{replicasParameter: "three"}))
		Expect(err).To(MatchError(ContainSubstring(`spec.REPLICAS: Invalid value: "string": spec.REPLICAS in body must be of type integer`)))

		Expect(k8sClient.Create(ctx, typedtest.Object(names, ns, "t", map[string]any{"ZONE": "b"}))).To(Succeed())
		err = k8sClient.Patch(ctx, typedtest.Object(names, ns, "t", map[string]any{"ZONE": "c"}), client.Merge)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.ZONE: Invalid value: \"string\": parameter ZONE is immutable"))
	})

	It("refuses a kind two Operators claim, naming both", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		first, names := typedOperator(ctx, ns)
		second := "claimer" + rand.String(6)
		ov := configMapsOperator(ns, second)
		ov.Spec.TypedAPI = &kudov1beta1.TypedAPI{Kind: names.Kind}
		Expect(k8sClient.Create(ctx, &kudov1beta1.Operator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: second}})).To(Succeed())
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		Eventually(func(g Gomega) {
			op := &kudov1beta1.Operator{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: second}, op)).To(Succeed())
			ready := meta.FindStatusCondition(op.Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Message).To(Equal(fmt.Sprintf(
				"Operator accepted; no typed API: the kind %s is Operator %s/%s's, which Operator %s/%s claims too", names.CRDName(), ns, first, ns, second)))
		}).Should(Succeed())
	})

	operatorReady := func(ctx context.Context, g Gomega, key types.NamespacedName) string {
		op := &kudov1beta1.Operator{}
		g.Expect(k8sClient.Get(ctx, key, op)).To(Succeed())
		ready := meta.FindStatusCondition(op.Status.Conditions, kudov1beta1.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		return ready.Message
	}

	It("serves no kind in a group the typed objects' webhook does not admit (issue 62)", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		name := "grouped" + rand.String(6)
		ov := configMapsOperator(ns, name)
		ov.Spec.TypedAPI = &kudov1beta1.TypedAPI{Group: name + ".example.com"}
		Expect(k8sClient.Create(ctx, &kudov1beta1.Operator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		names, err := typedapi.NamesOf(name, ov.Spec.TypedAPI)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			g.Expect(operatorReady(ctx, g, types.NamespacedName{Namespace: ns, Name: name})).To(Equal(fmt.Sprintf(
				"Operator accepted; no typed API: webhook vtyped.kudo.dev does not admit the creates and updates of %s: "+
					"a cluster admin adds the group %s to its rules (docs/typed-apis.md)", names.CRDName(), names.Group)))
		}).Should(Succeed())
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: names.CRDName()}, crd))).To(BeTrue())
	})

	It("leaves a kind to the Operator that serves it, whose name another namespace's Operator takes (issue 62)", func(ctx SpecContext) {
		owner := newNamespace(ctx)
		name, names := typedOperator(ctx, owner)
		squatter := newNamespace(ctx)
		ov := configMapsOperator(squatter, name)
		ov.Spec.Parameters[0].Default = ptr.To("the squatter's")
		Expect(k8sClient.Create(ctx, &kudov1beta1.Operator{ObjectMeta: metav1.ObjectMeta{Namespace: squatter, Name: name}})).To(Succeed())
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(operatorReady(ctx, g, types.NamespacedName{Namespace: squatter, Name: name})).To(Equal(fmt.Sprintf(
				"Operator accepted; no typed API: the kind %s is Operator %s/%s's, which Operator %s/%s claims too",
				names.CRDName(), owner, name, squatter, name)))
		}).Should(Succeed())
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: names.CRDName()}, crd)).To(Succeed())
		Expect(crd.GetLabels()).To(HaveKeyWithValue(typedapi.OperatorNamespaceLabel, owner))
		Expect(fmt.Sprint(crd.Object["spec"])).NotTo(ContainSubstring("the squatter's"))
	})

	It("keeps the CustomResourceDefinition when the last OperatorVersion goes, which it cannot while an object uses it", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		operator, names := typedOperator(ctx, ns)
		createDeployed(ctx, names, types.NamespacedName{Namespace: ns, Name: "t"})
		ov := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: operator + "-0.1.0"}}
		Expect(k8sClient.Delete(ctx, ov)).To(MatchError(ContainSubstring("is used by Instance t")))

		Expect(k8sClient.Delete(ctx, typedtest.Object(names, ns, "t", nil))).To(Succeed())
		// envtest runs no garbage collector.
		Expect(k8sClient.Delete(ctx, &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t"}})).To(Succeed())
		Eventually(func() error { return k8sClient.Delete(ctx, ov) }).Should(Succeed())
		readyMessage := func(g Gomega) string {
			op := &kudov1beta1.Operator{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: operator}, op)).To(Succeed())
			return meta.FindStatusCondition(op.Status.Conditions, kudov1beta1.ReadyCondition).Message
		}
		Eventually(readyMessage).Should(Equal(fmt.Sprintf(
			"Operator accepted; no OperatorVersion left; no %s object remains: kubectl delete crd %s removes the kind",
			names.Kind, names.CRDName())))
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: names.CRDName()}, crd)).To(Succeed())
	})

	It("admits a change by the Instance's rules: none that starts a plan while another runs", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		_, names := typedOperatorOf(ctx, ns, true)
		key := types.NamespacedName{Namespace: ns, Name: "t"}
		Expect(k8sClient.Create(ctx, typedtest.Object(names, ns, "t", map[string]any{"ZONE": "a"}))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(typedPlan(g, getTyped(ctx, g, names, key), "deploy")).To(Equal("IN_PROGRESS"))
		}).Should(Succeed())
		err := k8sClient.Patch(ctx, typedtest.Object(names, ns, "t", map[string]any{"MOOD": "dark"}), client.Merge)
		Expect(err).To(MatchError(ContainSubstring(`admission webhook "vtyped.kudo.dev" denied the request: ` +
			"plan deploy is running, and changing MOOD would start plan mood: change them when deploy has finished, or cancel it first")))
		// What starts no plan passes.
		Expect(k8sClient.Patch(ctx, typedtest.Object(names, ns, "t", map[string]any{"ZONE": "a"}), client.Merge)).To(Succeed())
	})

	It("refuses an upgrade to an OperatorVersion that would lose a value the object sets, naming it; "+
		"with the value moved in the same change it upgrades (issue 65)", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		name, names := typedOperator(ctx, ns)
		key := types.NamespacedName{Namespace: ns, Name: "t"}
		createDeployedWith(ctx, names, key, map[string]any{replicasParameter: int64(4)})
		// 0.2.0 renames REPLICAS to COUNT, in place. Admission refuses it,
		// which the object's value would not survive, unless accepted
		// knowingly.
		renamed := nextVersion(ctx, ns, name, "", &kudov1beta1.Parameter{Name: "COUNT", Type: kudov1beta1.IntegerValueType, Default: ptr.To("2")})
		renamed.Annotations = map[string]string{typedapi.AcceptBreakingChangesAnnotation: "true"}
		Expect(k8sClient.Create(ctx, renamed)).To(Succeed())
		// Until its kind has the field, the API server prunes it.
		Eventually(func(g Gomega) {
			crd := &unstructured.Unstructured{}
			crd.SetGroupVersionKind(crdGVK)
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: names.CRDName()}, crd)).To(Succeed())
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			g.Expect(versions).NotTo(BeEmpty())
			_, found, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "COUNT")
			g.Expect(found).To(BeTrue())
		}).Should(Succeed())

		err := k8sClient.Patch(ctx, typedtest.Object(names, ns, "t", map[string]any{"operatorVersion": renamed.Name}), client.Merge)
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("the upgrade from %s-0.1.0 to %s would lose the value of "+
			"spec.REPLICAS (parameter REPLICAS), which %s has no parameter for", name, renamed.Name, renamed.Name))))
		i := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, key, i)).To(Succeed())
		Expect(i.Spec.OperatorVersion.Name).To(Equal(name+"-0.1.0"), "the refused upgrade changed nothing")
		Expect(i.Spec.Parameters).To(HaveKeyWithValue(replicasParameter, "4"))

		moved := map[string]any{"operatorVersion": renamed.Name, "COUNT": int64(4), replicasParameter: nil}
		Expect(k8sClient.Patch(ctx, typedtest.Object(names, ns, "t", moved), client.Merge)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, i)).To(Succeed())
			g.Expect(i.Spec.OperatorVersion.Name).To(Equal(renamed.Name))
			g.Expect(i.Spec.Parameters).To(HaveKeyWithValue("COUNT", "4"))
		}).Should(Succeed())
	})

	It("serves a package version that renames a parameter as a new API version, converting both ways by its rule; "+
		"nothing runs differently until an upgrade, which carries the value (issue 65)", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		name, v1 := typedOperator(ctx, ns)
		key := types.NamespacedName{Namespace: ns, Name: "t"}
		createDeployedWith(ctx, v1, key, map[string]any{replicasParameter: int64(4)})

		// 0.2.0 serves v2, where REPLICAS is COUNT.
		renamed := nextVersion(ctx, ns, name, "v2", &kudov1beta1.Parameter{Name: "COUNT", Type: kudov1beta1.IntegerValueType,
			Default: ptr.To("2"), OldName: replicasParameter})
		Expect(k8sClient.Create(ctx, renamed)).To(Succeed())
		v2 := v1
		v2.Version = "v2"
		Eventually(func(g Gomega) {
			crd := &unstructured.Unstructured{}
			crd.SetGroupVersionKind(crdGVK)
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: v1.CRDName()}, crd)).To(Succeed())
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			g.Expect(versions).To(HaveLen(2))
			g.Expect(versions[1]).To(HaveKeyWithValue("name", "v2"))
			g.Expect(versions[1]).To(HaveKeyWithValue("storage", true))
			g.Expect(crd.Object["spec"]).To(HaveKeyWithValue("conversion", HaveKeyWithValue("strategy", "Webhook")))
			g.Expect(k8sClient.List(ctx, typedtest.List(v2), client.InNamespace(ns))).To(Succeed())
		}).Should(Succeed())

		By("reading the object at both versions")
		Expect(getTyped(ctx, Default, v2, key).Object["spec"]).To(HaveKeyWithValue("COUNT", BeEquivalentTo(4)))
		Expect(getTyped(ctx, Default, v1, key).Object["spec"]).To(HaveKeyWithValue(replicasParameter, BeEquivalentTo(4)))
		i := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, key, i)).To(Succeed())
		Expect(i.Spec.OperatorVersion.Name).To(Equal(name+"-0.1.0"), "a new OperatorVersion is no upgrade")
		Expect(i.Spec.Parameters).To(HaveKeyWithValue(replicasParameter, "4"))

		By("migrating the stored objects to v2")
		Eventually(func(g Gomega) {
			g.Expect(storedVersions(ctx, g, v1)).To(Equal([]any{"v2"}))
		}).Should(Succeed())
		Expect(getTyped(ctx, Default, v1, key).Object["spec"]).To(HaveKeyWithValue(replicasParameter, BeEquivalentTo(4)))

		By("running an object written at v2 that runs 0.1.0 with the value read at v1")
		Expect(k8sClient.Create(ctx, typedtest.Object(v2, ns, "u", map[string]any{
			"operatorVersion": name + "-0.1.0", "COUNT": int64(3)}))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "u"}, i)).To(Succeed())
			g.Expect(i.Spec.OperatorVersion.Name).To(Equal(name + "-0.1.0"))
			g.Expect(i.Spec.Parameters).To(HaveKeyWithValue(replicasParameter, "3"))
		}).Should(Succeed())

		By("upgrading: COUNT carries the value REPLICAS had")
		Expect(k8sClient.Patch(ctx, typedtest.Object(v2, ns, "t", map[string]any{"operatorVersion": renamed.Name}), client.Merge)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, i)).To(Succeed())
			g.Expect(i.Spec.OperatorVersion.Name).To(Equal(renamed.Name))
			g.Expect(i.Spec.Parameters).To(HaveKeyWithValue("COUNT", "4"))
			obj := getTyped(ctx, g, v2, key)
			g.Expect(obj.Object["status"]).To(HaveKeyWithValue("operatorVersion", renamed.Name))
			g.Expect(typedReady(g, obj)).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		Expect(getTyped(ctx, Default, v1, key).Object["spec"]).To(HaveKeyWithValue(replicasParameter, BeEquivalentTo(4)))
	})

	It("migrates the stored objects to a new storage version, a page at a time, and finishes after a restart mid-way (issue 65)", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		name, v1 := typedOperator(ctx, ns)
		for n := int64(1); n <= 3; n++ {
			Expect(k8sClient.Create(ctx, typedtest.Object(v1, ns, fmt.Sprint("t", n), map[string]any{replicasParameter: n}))).To(Succeed())
		}
		renamed := nextVersion(ctx, ns, name, "v2", &kudov1beta1.Parameter{Name: "COUNT", Type: kudov1beta1.IntegerValueType, OldName: replicasParameter})
		Expect(k8sClient.Create(ctx, renamed)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(storedVersions(ctx, g, v1)).To(Equal([]any{"v2"}))
		}).Should(Succeed())

		By("a manager stopped mid-way: storedVersions still names v1, and another takes a step")
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: v1.CRDName()}, crd)).To(Succeed())
		before := crd.DeepCopy()
		Expect(unstructured.SetNestedStringSlice(crd.Object, []string{"v1", "v2"}, "status", "storedVersions")).To(Succeed())
		Expect(k8sClient.Status().Patch(ctx, crd, client.MergeFrom(before))).To(Succeed())
		gk := v1.GroupVersionKind().GroupKind()
		Expect(controllers.MigratingOperators(k8sClient, k8sClient, 1).MigrateStorage(ctx, crd, gk)).
			To(Equal(fmt.Sprintf("migrating the stored objects of %s from v1 to v2: 1 of 3", v1.CRDName())))

		By("the restarted one migrates them all, and trims storedVersions")
		restarted := controllers.MigratingOperators(k8sClient, k8sClient, 1)
		var messages []string
		for range 3 {
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: v1.CRDName()}, crd)).To(Succeed())
			message, err := restarted.MigrateStorage(ctx, crd, gk)
			Expect(err).NotTo(HaveOccurred())
			messages = append(messages, message)
		}
		Expect(messages).To(Equal([]string{
			fmt.Sprintf("migrating the stored objects of %s from v1 to v2: 1 of 3", v1.CRDName()),
			fmt.Sprintf("migrating the stored objects of %s from v1 to v2: 2 of 3", v1.CRDName()),
			"3 stored objects migrated from v1 to v2",
		}))
		Expect(storedVersions(ctx, Default, v1)).To(Equal([]any{"v2"}))
		v2 := v1
		v2.Version = "v2"
		for n := int64(1); n <= 3; n++ {
			key := types.NamespacedName{Namespace: ns, Name: fmt.Sprint("t", n)}
			Expect(getTyped(ctx, Default, v2, key).Object["spec"]).To(HaveKeyWithValue("COUNT", n))
			Expect(getTyped(ctx, Default, v1, key).Object["spec"]).To(HaveKeyWithValue(replicasParameter, n))
		}
	})

	It("refuses an OperatorVersion whose typed API would lose a value objects hold, naming the field and the rule; "+
		"accepted knowingly with the annotation (issue 65)", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		name, names := typedOperator(ctx, ns)
		Expect(k8sClient.Create(ctx, typedtest.Object(names, ns, "t", map[string]any{replicasParameter: int64(4)}))).To(Succeed())
		dropped := nextVersion(ctx, ns, name, "v2", nil)
		err := k8sClient.Create(ctx, dropped)
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("OperatorVersion %s would break the typed API %s", dropped.Name, names.CRDName()))))
		Expect(err).To(MatchError(ContainSubstring("v1 → v2: spec.REPLICAS: removed in v2, and no rule carries its value " +
			"(oldName, or conversion.expression) (removed): 1 object(s) hold a value it breaks (t of this namespace)")))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(dropped), &kudov1beta1.OperatorVersion{}))).To(BeTrue(),
			"the refusal changed nothing")

		dropped.Annotations = map[string]string{typedapi.AcceptBreakingChangesAnnotation: "true"}
		Expect(k8sClient.Create(ctx, dropped)).To(Succeed())
	})

	It("refuses a user a Secret or an identity they may not use themselves", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		_, names := typedOperator(ctx, ns)
		alice := userWith(ctx, ns, "alice",
			rbacv1.PolicyRule{APIGroups: []string{names.Group}, Resources: []string{names.Plural}, Verbs: []string{"*"}})

		err := alice.Create(ctx, typedtest.Object(names, ns, "t", map[string]any{
			"secretParameters": map[string]any{"GREETING": map[string]any{"name": "db", "key": "password"}},
		}))
		Expect(err).To(MatchError(ContainSubstring(
			fmt.Sprintf("spec.secretParameters.GREETING: alice may not get Secret %s/db, so no Instance of theirs may read it", ns))))
		err = alice.Create(ctx, typedtest.Object(names, ns, "t", map[string]any{"serviceAccountName": "ci"}))
		Expect(err).To(MatchError(ContainSubstring(
			fmt.Sprintf("spec.serviceAccountName: alice may not impersonate ServiceAccount %s/ci", ns))))
		Expect(alice.Create(ctx, typedtest.Object(names, ns, "t", map[string]any{"GREETING": "hi"}))).To(Succeed())
	})

	It("refuses an object whose name an Instance it does not own has", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		operator, names := typedOperator(ctx, ns)
		Expect(k8sClient.Create(ctx, newInstance(ns, "taken", operator+"-0.1.0"))).To(Succeed())
		Eventually(func() error {
			return k8sClient.Create(ctx, typedtest.Object(names, ns, "taken", map[string]any{}))
		}).Should(MatchError(ContainSubstring(
			fmt.Sprintf("an Instance named taken exists and is not this %s's: delete it first, or name this %s otherwise", names.Kind, names.Kind))))
	})
})
