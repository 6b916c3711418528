package olmv1

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/olm/olmtest"
)

// ownedByExtension selects what OLM v1 installed for the ClusterExtension.
var ownedByExtension = client.MatchingLabels{"olm.operatorframework.io/owner-name": extensionName}

var _ = Describe("kudo-ng installed through OLM v1", Ordered, func() {
	var (
		ctx      context.Context
		ns       string
		instance = types.NamespacedName{Name: "sleeper"}
	)
	BeforeEach(func() { ctx = context.Background() })

	It("serves the catalog image OLM v0's CatalogSource serves, as a ClusterCatalog", func() {
		catalog := olmv1Object("ClusterCatalog")
		catalog.Object["spec"] = map[string]any{"source": map[string]any{
			"type": "Image", "image": map[string]any{"ref": olmtest.LocalImage("kudo-catalog", "0.1.0")},
		}}
		Expect(k8sClient.Create(ctx, catalog)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(catalog), catalog)).To(Succeed())
			g.Expect(conditions(g, catalog)).To(ContainElement(And(
				HaveField("Type", "Serving"), HaveField("Status", metav1.ConditionTrue))))
			resolved, _, _ := unstructured.NestedString(catalog.Object, "status", "resolvedSource", "image", "ref")
			g.Expect(resolved).To(HavePrefix(olmtest.LocalRegistry + "/kudo-catalog@sha256:"))
		}).Should(Succeed())
	})

	It("installs through a ClusterExtension: the manager runs on the real node, its webhooks served with cert-manager's certificates", func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: installNamespace}})).To(Succeed())
		// operator-controller 1.5 installs as the ServiceAccount the
		// ClusterExtension names; from 1.11 on it ignores it and installs
		// as cluster-admin. The installer is given cluster-admin, as there.
		installer := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "kudo-ng-installer", Namespace: installNamespace}}
		Expect(k8sClient.Create(ctx, installer)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "kudo-ng-installer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: installer.Name, Namespace: installNamespace}},
		})).To(Succeed())

		extension := olmv1Object("ClusterExtension")
		extension.Object["spec"] = map[string]any{
			"namespace":      installNamespace,
			"serviceAccount": map[string]any{"name": installer.Name},
			"source": map[string]any{"sourceType": "Catalog", "catalog": map[string]any{
				"packageName": "kudo-ng", "version": "0.1.0", "channels": []any{"alpha"},
			}},
		}
		Expect(k8sClient.Create(ctx, extension)).To(Succeed())
		extensionInstalls(ctx, olmtest.FirstCSV)
		olmtest.ManagerRuns(ctx, k8sClient, installNamespace, olmtest.LocalImage("kudo", "0.1.0"))
		// The bundle's PodDisruptionBudget is a kind OLM v1 installs too.
		var budgets policyv1.PodDisruptionBudgetList
		Expect(k8sClient.List(ctx, &budgets, client.InNamespace(installNamespace), ownedByExtension)).To(Succeed())
		Expect(budgets.Items).To(ConsistOf(HaveField("Spec.Selector.MatchLabels", HaveKeyWithValue("control-plane", "controller-manager"))))

		// OLM v1 makes a configuration of each of the CSV's webhooks, and
		// cert-manager's CA injector fills in their CA.
		Eventually(func(g Gomega) {
			var validating admissionregistrationv1.ValidatingWebhookConfigurationList
			g.Expect(k8sClient.List(ctx, &validating, ownedByExtension)).To(Succeed())
			var mutating admissionregistrationv1.MutatingWebhookConfigurationList
			g.Expect(k8sClient.List(ctx, &mutating, ownedByExtension)).To(Succeed())
			g.Expect(validating.Items).NotTo(BeEmpty())
			g.Expect(mutating.Items).NotTo(BeEmpty())
			for _, c := range validating.Items {
				g.Expect(c.Annotations).To(HaveKey("cert-manager.io/inject-ca-from"))
				for _, w := range c.Webhooks {
					g.Expect(w.ClientConfig.CABundle).NotTo(BeEmpty(), "webhook %s", w.Name)
				}
			}
			for _, c := range mutating.Items {
				g.Expect(c.Annotations).To(HaveKey("cert-manager.io/inject-ca-from"))
				for _, w := range c.Webhooks {
					g.Expect(w.ClientConfig.CABundle).NotTo(BeEmpty(), "webhook %s", w.Name)
				}
			}
		}).Should(Succeed())
		// What OLM v1 installs it owns: deleting the ClusterExtension
		// deletes the kudo.dev CRDs, and with them every Instance, unless
		// they are let go of first (the last spec; README).
		var crd apiextensionsv1.CustomResourceDefinition
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "instances.kudo.dev"}, &crd)).To(Succeed())
		Expect(crd.OwnerReferences).To(ContainElement(And(
			HaveField("Kind", "ClusterExtension"), HaveField("Name", extensionName))))

		// The manager's own webhook answers through cert-manager's certificate.
		ns = olmtest.NewNamespace(ctx, k8sClient)
		instance.Namespace = ns
		olmtest.WebhooksAnswer(ctx, k8sClient, ns)
	})

	It("installs a package with kubectl kudo, and one acting as a service account granted what kubectl kudo rbac prints", func() {
		olmtest.InstallSleeper(ctx, cluster, instance)
		sleeper := olmtest.Sleeper(cluster)

		// OLM v1 gives the manager no least privilege of its own; an
		// Instance may still act only as its service account.
		Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}})).To(Succeed())
		rules := filepath.Join(GinkgoT().TempDir(), "rbac.yaml")
		Expect(os.WriteFile(rules, []byte(olmtest.Kudo(cluster, ns, "rbac", sleeper, "--instance", "confined",
			"--service-account", "deployer")), 0o600)).To(Succeed())
		Expect(cluster.Kubectl("apply", "-f", rules)).Error().NotTo(HaveOccurred())
		var first kudov1beta1.Instance
		Expect(k8sClient.Get(ctx, instance, &first)).To(Succeed())
		confined := &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Name: "confined", Namespace: ns, Labels: first.Labels},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: first.Spec.OperatorVersion, ServiceAccountName: "deployer"},
		}
		Expect(k8sClient.Create(ctx, confined)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(confined), confined)).To(Succeed())
			g.Expect(confined.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "confined-settings"}, &corev1.ConfigMap{})).To(Succeed())
	})

	It("upgrades to the next bundle version while a plan runs, and the plan completes once", func() {
		olmtest.PushNextRelease(cluster)
		catalog := olmv1Object("ClusterCatalog")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(catalog), catalog)).To(Succeed())
		Expect(unstructured.SetNestedField(catalog.Object, olmtest.LocalImage("kudo-catalog", "0.1.1"),
			"spec", "source", "image", "ref")).To(Succeed())
		Expect(k8sClient.Update(ctx, catalog)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(catalog), catalog)).To(Succeed())
			g.Expect(catalog.GetGeneration()).To(Equal(observedGeneration(g, catalog, "Serving")))
			g.Expect(conditions(g, catalog)).To(ContainElement(And(
				HaveField("Type", "Serving"), HaveField("Status", metav1.ConditionTrue))))
		}).Should(Succeed())

		// A plan that runs for a while: its Job sleeps through the upgrade.
		plan := olmtest.StartLongPlan(ctx, k8sClient, instance)

		extension := olmv1Object("ClusterExtension")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(extension), extension)).To(Succeed())
		Expect(unstructured.SetNestedField(extension.Object, "0.1.1", "spec", "source", "catalog", "version")).To(Succeed())
		Expect(k8sClient.Update(ctx, extension)).To(Succeed())
		extensionInstalls(ctx, olmtest.NextCSV)
		olmtest.ManagerRuns(ctx, k8sClient, installNamespace, olmtest.LocalImage("kudo", "0.1.1"))
		plan.CompletesOnce(ctx)
	})

	It("is removed as the README says, keeping the CRDs: the manager and its webhooks go, the Instances and their objects stay", func() {
		// docs/installing.md: a finalizer of the user's holds the
		// ClusterExtension while OLM v1, which stops managing it once it
		// is being deleted, lets go of the CRDs.
		for _, args := range [][]string{
			{"patch", "clusterextension", extensionName, "--type=json", "-p", `[{"op":"add","path":"/metadata/finalizers/-","value":"kudo.dev/keep-crds"}]`},
			{"delete", "clusterextension", extensionName, "--wait=false"},
			{"wait", "clusterextension/" + extensionName, "--for=jsonpath={.metadata.finalizers[0]}=kudo.dev/keep-crds", "--timeout=60s"},
			{"patch", "crd", "instances.kudo.dev", "--type=json", "-p", `[{"op":"remove","path":"/metadata/ownerReferences"}]`},
			{"patch", "crd", "operators.kudo.dev", "--type=json", "-p", `[{"op":"remove","path":"/metadata/ownerReferences"}]`},
			{"patch", "crd", "operatorversions.kudo.dev", "--type=json", "-p", `[{"op":"remove","path":"/metadata/ownerReferences"}]`},
			{"patch", "crd", "trustpolicies.kudo.dev", "--type=json", "-p", `[{"op":"remove","path":"/metadata/ownerReferences"}]`},
			{"patch", "crd", "rollouts.kudo.dev", "--type=json", "-p", `[{"op":"remove","path":"/metadata/ownerReferences"}]`},
			{"patch", "clusterextension", extensionName, "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`},
		} {
			out, err := cluster.Kubectl(args...)
			Expect(err).NotTo(HaveOccurred(), out)
		}

		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(olmv1Object("ClusterExtension")), olmv1Object("ClusterExtension"))
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the ClusterExtension: %v", err)
			var deployments appsv1.DeploymentList
			g.Expect(k8sClient.List(ctx, &deployments, client.InNamespace(installNamespace))).To(Succeed())
			g.Expect(deployments.Items).To(BeEmpty())
			var webhooks admissionregistrationv1.ValidatingWebhookConfigurationList
			g.Expect(k8sClient.List(ctx, &webhooks, ownedByExtension)).To(Succeed())
			g.Expect(webhooks.Items).To(BeEmpty())
		}).Should(Succeed())
		// The garbage collector has deleted what it deletes: the CRDs stay.
		Consistently(func(g Gomega) {
			var crd apiextensionsv1.CustomResourceDefinition
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "instances.kudo.dev"}, &crd)).To(Succeed())
			g.Expect(crd.DeletionTimestamp).To(BeNil())
		}, "15s").Should(Succeed())
		Expect(k8sClient.Get(ctx, instance, &kudov1beta1.Instance{})).To(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "confined"}, &kudov1beta1.Instance{})).To(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-settings"}, &corev1.ConfigMap{})).To(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-run-2"}, &batchv1.Job{})).To(Succeed())
	})
})

// olmv1Object is kudo-ng's object of one of OLM v1's cluster-scoped kinds, empty.
func olmv1Object(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "olm.operatorframework.io", Version: "v1", Kind: kind})
	u.SetName(extensionName)
	return u
}

// conditions are an OLM v1 object's status conditions.
func conditions(g Gomega, u *unstructured.Unstructured) []metav1.Condition {
	raw, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	g.Expect(err).NotTo(HaveOccurred())
	var conditions []metav1.Condition
	for _, c := range raw {
		var condition metav1.Condition
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(c.(map[string]any), &condition)).To(Succeed())
		conditions = append(conditions, condition)
	}
	return conditions
}

// observedGeneration is the generation a condition of u was written for.
func observedGeneration(g Gomega, u *unstructured.Unstructured, condition string) int64 {
	c := meta.FindStatusCondition(conditions(g, u), condition)
	g.Expect(c).NotTo(BeNil(), "no %s condition", condition)
	return c.ObservedGeneration
}

// extensionInstalls waits for the ClusterExtension to have installed the
// bundle csv, as OLM v1 reports it: Installed, and Progressing with reason
// Succeeded.
func extensionInstalls(ctx context.Context, csv string) {
	GinkgoHelper()
	extension := olmv1Object("ClusterExtension")
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(extension), extension)).To(Succeed())
		bundle, _, _ := unstructured.NestedString(extension.Object, "status", "install", "bundle", "name")
		g.Expect(bundle).To(Equal(csv))
		g.Expect(extension.GetGeneration()).To(Equal(observedGeneration(g, extension, "Progressing")))
		g.Expect(conditions(g, extension)).To(ContainElements(
			And(HaveField("Type", "Installed"), HaveField("Status", metav1.ConditionTrue)),
			And(HaveField("Type", "Progressing"), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "Succeeded"))))
	}).Should(Succeed())
}
