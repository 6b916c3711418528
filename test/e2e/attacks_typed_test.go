package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/typedapi"
	"github.com/kudo-ng/kudo/test/typedtest"
)

// The attacks of issue 62 on typed APIs: a status the attacker forges, and
// another namespace's package of the same name.

// typedAttackerPackage is the attacker package in ns, served as kind.
func typedAttackerPackage(ns, kind string) (*kudov1beta1.Operator, *kudov1beta1.OperatorVersion) {
	GinkgoHelper()
	p, err := packages.Read(filepath.Join("testdata", "attacker"))
	Expect(err).NotTo(HaveOccurred())
	op, ov, err := p.Convert(ns)
	Expect(err).NotTo(HaveOccurred())
	ov.Spec.TypedAPI = &kudov1beta1.TypedAPI{Kind: kind}
	return op, ov
}

// typedAttacker is an attacker namespace whose attacker package an admin
// installed as a kind of its own, which the attacker may write, status
// included, once it is served.
func typedAttacker(ctx context.Context, lockdown bool) (string, typedapi.Names) {
	GinkgoHelper()
	ns := openNamespace(ctx, lockdown)
	bindRole(ctx, ns, "kudo-instance-editor-role", userSubject(attacker))
	op, ov := typedAttackerPackage(ns, "Attacker"+strings.TrimPrefix(ns, "e2e-"))
	Expect(k8sClient.Create(ctx, op)).To(Succeed())
	Expect(k8sClient.Create(ctx, ov)).To(Succeed())
	names, err := typedapi.NamesOf(op.Name, ov.Spec.TypedAPI)
	Expect(err).NotTo(HaveOccurred())

	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "typed-attacker"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{names.Group}, Resources: []string{names.Plural, names.Plural + "/status"}, Verbs: []string{"*"}}}}
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "typed-attacker"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{userSubject(attacker)}})).To(Succeed())
	Eventually(func() error { return asUser(attacker).List(ctx, typedtest.List(names), client.InNamespace(ns)) }).Should(Succeed())
	DeferCleanup(func(ctx context.Context) {
		crd := customResourceDefinition()
		crd.SetName(names.CRDName())
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, crd))).To(Succeed())
	})
	return ns, names
}

// customResourceDefinition is an empty one, read as unstructured: the
// suite's scheme has no apiextensions types.
func customResourceDefinition() *unstructured.Unstructured {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return crd
}

// instanceGone says whether the Instance ns/name is gone.
func instanceGone(ctx context.Context, ns, name string) func() bool {
	return func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &kudov1beta1.Instance{}))
	}
}

// createTyped creates a typed object as the attacker, and deletes it after
// the spec while the mode's manager runs, waiting for its Instance to go.
func createTyped(ctx context.Context, obj *unstructured.Unstructured) {
	GinkgoHelper()
	Expect(asUser(attacker).Create(ctx, obj)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		gone := &unstructured.Unstructured{}
		gone.SetGroupVersionKind(obj.GroupVersionKind())
		gone.SetNamespace(obj.GetNamespace())
		gone.SetName(obj.GetName())
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, gone))).To(Succeed())
		Eventually(instanceGone(ctx, obj.GetNamespace(), obj.GetName())).Should(BeTrue())
	})
}

// typedDeployed waits for the typed object's deploy plan to complete.
func typedDeployed(ctx context.Context, obj *unstructured.Unstructured) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		status, _, err := unstructured.NestedString(obj.Object, "status", "planStatus", "deploy", "status")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(status).To(Equal(string(kudov1beta1.ExecutionComplete)))
	}).Should(Succeed())
}

// eventMessages are the messages of the events on an Instance.
func eventMessages(ctx context.Context, g Gomega, ns, name string) []string {
	events := &corev1.EventList{}
	g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	var messages []string
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "Instance" && e.InvolvedObject.Name == name {
			messages = append(messages, e.Message)
		}
	}
	return messages
}

// forgedStatusDeletesNothing is attack 4 of issue 62: whoever may write a
// typed object's status lists another tenant's ConfigMap in its inventory,
// as what a task applied, then changes a field and deletes the object; the
// ConfigMap stays, and the Instance says why.
func forgedStatusDeletesNothing(lockdown bool) {
	GinkgoHelper()
	ctx := context.Background()
	before := managerRestarts(ctx)
	ns, names := typedAttacker(ctx, lockdown)
	victim := openNamespace(ctx, lockdown)
	precious := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "precious"}, Data: map[string]string{"owner": "victim"}}
	Expect(k8sClient.Create(ctx, precious)).To(Succeed())

	obj := typedtest.Object(names, ns, "t", map[string]any{"VALUE": "one"})
	createTyped(ctx, obj)
	typedDeployed(ctx, obj)

	forged, err := typedtest.WithForgedInventory(obj, "v1 ConfigMap "+victim+"/precious")
	Expect(err).NotTo(HaveOccurred())
	Expect(asUser(attacker).Status().Patch(ctx, forged, client.MergeFrom(obj))).To(Succeed())

	changed := forged.DeepCopy()
	Expect(unstructured.SetNestedField(changed.Object, "two", "spec", "VALUE")).To(Succeed())
	Expect(asUser(attacker).Patch(ctx, changed, client.MergeFrom(forged))).To(Succeed())
	kept := fmt.Sprintf("Kept ConfigMap %s/precious", victim)
	Eventually(func(g Gomega) {
		g.Expect(eventMessages(ctx, g, ns, "t")).To(ContainElement(SatisfyAll(HavePrefix(kept), HaveSuffix("it is no Instance's"))))
	}).Should(Succeed())

	Expect(asUser(attacker).Delete(ctx, typedtest.Object(names, ns, "t", nil))).To(Succeed())
	Eventually(instanceGone(ctx, ns, "t")).Should(BeTrue())
	live := &corev1.ConfigMap{}
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(precious), live)).To(Succeed())
	Expect(live.DeletionTimestamp).To(BeNil())
	Expect(live.Data).To(Equal(precious.Data))
	Expect(managerRestarts(ctx)).To(Equal(before), "a manager pod restarted or was replaced")
}

// squatterTypesNothing is attacks 8 and 9 of issue 62: a package author of
// another namespace installs a newer version of the same package, the same
// kind named, with another default; the kind stays its first Operator's,
// whose objects run their own namespace's defaults.
func squatterTypesNothing(lockdown bool) {
	GinkgoHelper()
	ctx := context.Background()
	ns, names := typedAttacker(ctx, lockdown)
	squatter := openNamespace(ctx, lockdown)
	op, ov := typedAttackerPackage(squatter, names.Kind)
	ov.Name = op.Name + "-9.9.9"
	ov.Spec.Version = "9.9.9"
	for k := range ov.Spec.Parameters {
		if ov.Spec.Parameters[k].Name == "VALUE" {
			ov.Spec.Parameters[k].Default = ptr.To("the-squatters")
		}
	}
	Expect(k8sClient.Create(ctx, op)).To(Succeed())
	Expect(k8sClient.Create(ctx, ov)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(readyConditionOf(ctx, g, op).Message).To(Equal(fmt.Sprintf(
			"Operator accepted; no typed API: the kind %s is Operator %s/%s's, which Operator %s/%s claims too",
			names.CRDName(), ns, op.Name, squatter, op.Name)))
	}).Should(Succeed())

	obj := typedtest.Object(names, ns, "own", map[string]any{})
	createTyped(ctx, obj)
	typedDeployed(ctx, obj)
	value := &corev1.ConfigMap{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "own-value"}, value)).To(Succeed())
	Expect(value.Data).To(HaveKeyWithValue("value", "hello"))

	crd := customResourceDefinition()
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: names.CRDName()}, crd)).To(Succeed())
	Expect(crd.GetLabels()).To(HaveKeyWithValue(typedapi.OperatorNamespaceLabel, ns))
	Expect(fmt.Sprint(crd.Object["spec"])).NotTo(ContainSubstring("the-squatters"))
}
