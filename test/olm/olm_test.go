package olm

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/olm/olmtest"
)

var _ = Describe("kudo-ng installed through OLM", Ordered, func() {
	var (
		ctx      context.Context
		ns       string
		instance = types.NamespacedName{Name: "sleeper"}
	)
	BeforeEach(func() { ctx = context.Background() })

	It("is listed by the catalog, as OperatorHub shows it", func() {
		Expect(k8sClient.Create(ctx, &operatorsv1alpha1.CatalogSource{
			ObjectMeta: metav1.ObjectMeta{Name: catalogName, Namespace: olmNamespace},
			Spec: operatorsv1alpha1.CatalogSourceSpec{
				SourceType:    operatorsv1alpha1.SourceTypeGrpc,
				Image:         olmtest.LocalImage("kudo-catalog", "0.1.0"),
				DisplayName:   "kudo-ng (local)",
				Publisher:     "kudo-ng",
				GrpcPodConfig: &operatorsv1alpha1.GrpcPodConfig{SecurityContextConfig: operatorsv1alpha1.Restricted},
			},
		})).To(Succeed())
		Eventually(func(g Gomega) {
			pm := packageManifest(g)
			g.Expect(pm.Object).To(HaveKeyWithValue("status", And(
				HaveKeyWithValue("catalogSource", catalogName),
				HaveKeyWithValue("defaultChannel", "alpha"),
				HaveKeyWithValue("channels", ContainElement(And(
					HaveKeyWithValue("name", "alpha"), HaveKeyWithValue("currentCSV", olmtest.FirstCSV)))))))
		}).Should(Succeed())
	})

	It("installs through a Subscription once its InstallPlan is approved: the manager runs on the real node, with the webhooks OLM serves certificates for", func() {
		Expect(k8sClient.Create(ctx, &operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: "kudo-ng", Namespace: operatorsNamespace},
			Spec: &operatorsv1alpha1.SubscriptionSpec{
				CatalogSource:          catalogName,
				CatalogSourceNamespace: olmNamespace,
				Package:                "kudo-ng",
				Channel:                "alpha",
				StartingCSV:            olmtest.FirstCSV,
				InstallPlanApproval:    operatorsv1alpha1.ApprovalManual,
			},
		})).To(Succeed())
		approveInstallPlan(ctx, olmtest.FirstCSV)
		csvSucceeds(ctx, olmtest.FirstCSV)
		olmtest.ManagerRuns(ctx, k8sClient, operatorsNamespace, olmtest.LocalImage("kudo", "0.1.0"))

		var webhooks admissionregistrationv1.ValidatingWebhookConfigurationList
		Expect(k8sClient.List(ctx, &webhooks, client.MatchingLabels{"olm.owner": olmtest.FirstCSV})).To(Succeed())
		Expect(webhooks.Items).NotTo(BeEmpty())
		for _, w := range webhooks.Items[0].Webhooks {
			Expect(w.ClientConfig.CABundle).NotTo(BeEmpty(), "webhook %s", w.Name)
		}
		// The manager's own webhook answers through OLM's certificate.
		ns = olmtest.NewNamespace(ctx, k8sClient)
		instance.Namespace = ns
		olmtest.WebhooksAnswer(ctx, k8sClient, ns)
	})

	It("installs a package with kubectl kudo", func() {
		olmtest.InstallSleeper(ctx, cluster, instance)
	})

	It("upgrades to the next bundle version while a plan runs, and the plan completes once", func() {
		olmtest.PushNextRelease(cluster)
		var catalog operatorsv1alpha1.CatalogSource
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: olmNamespace, Name: catalogName}, &catalog)).To(Succeed())
		catalog.Spec.Image = olmtest.LocalImage("kudo-catalog", "0.1.1")
		Expect(k8sClient.Update(ctx, &catalog)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(packageManifest(g).Object).To(HaveKeyWithValue("status",
				HaveKeyWithValue("channels", ContainElement(HaveKeyWithValue("currentCSV", olmtest.NextCSV)))))
		}).Should(Succeed())
		upgrade := installPlanFor(ctx, olmtest.NextCSV)

		// A plan that runs for a while: its Job sleeps through the upgrade.
		plan := olmtest.StartLongPlan(ctx, k8sClient, instance)

		patch := client.MergeFrom(upgrade.DeepCopy())
		upgrade.Spec.Approved = true
		Expect(k8sClient.Patch(ctx, upgrade, patch)).To(Succeed())
		csvSucceeds(ctx, olmtest.NextCSV)
		olmtest.ManagerRuns(ctx, k8sClient, operatorsNamespace, olmtest.LocalImage("kudo", "0.1.1"))
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorsNamespace, Name: olmtest.FirstCSV}, &operatorsv1alpha1.ClusterServiceVersion{})
		}).Should(Satisfy(apierrors.IsNotFound), "the replaced CSV is deleted")
		plan.CompletesOnce(ctx)
		var settings corev1.ConfigMap
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-settings"}, &settings)).To(Succeed())
		Expect(settings.Data).To(HaveKeyWithValue("seconds", "75"))
	})

	It("uninstalls through OLM: the manager goes, the CRDs, Instances and their objects stay", func() {
		Expect(k8sClient.Delete(ctx, &operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: "kudo-ng", Namespace: operatorsNamespace}})).To(Succeed())
		Expect(k8sClient.Delete(ctx, &operatorsv1alpha1.ClusterServiceVersion{
			ObjectMeta: metav1.ObjectMeta{Name: olmtest.NextCSV, Namespace: operatorsNamespace}})).To(Succeed())
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(operatorsNamespace), olmtest.ManagerLabels)).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorsNamespace, Name: "kudo-controller-manager"}, &appsv1.Deployment{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the manager's Deployment: %v", err)
		}).Should(Succeed())

		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "instances.kudo.dev"}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
		Expect(k8sClient.Get(ctx, instance, &kudov1beta1.Instance{})).To(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-settings"}, &corev1.ConfigMap{})).To(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-run-2"}, &batchv1.Job{})).To(Succeed())
	})

	It("installs with operator-sdk run bundle, runs the Instances left behind, and operator-sdk cleanup removes it keeping them", func() {
		Expect(cluster.Make("run-bundle")).To(Succeed())
		csvSucceeds(ctx, olmtest.FirstCSV)
		olmtest.ManagerRuns(ctx, k8sClient, operatorsNamespace, olmtest.LocalImage("kudo", "0.1.0"))

		// The webhooks answer once the Service's endpoints have caught up
		// with the Ready pods.
		var i kudov1beta1.Instance
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, instance, &i)).To(Succeed())
			patch := client.MergeFrom(i.DeepCopy())
			i.Spec.Parameters = map[string]string{"seconds": "1", "run": "3"}
			g.Expect(k8sClient.Patch(ctx, &i, patch)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			var job batchv1.Job
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-run-3"}, &job)).To(Succeed())
			g.Expect(job.Status.Succeeded).To(BeEquivalentTo(1))
			g.Expect(k8sClient.Get(ctx, instance, &i)).To(Succeed())
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())

		Expect(cluster.Make("cleanup-bundle")).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorsNamespace, Name: olmtest.FirstCSV}, &operatorsv1alpha1.ClusterServiceVersion{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the CSV: %v", err)
			err = k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorsNamespace, Name: "kudo-ng-catalog"}, &operatorsv1alpha1.CatalogSource{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "run bundle's CatalogSource: %v", err)
			var pods corev1.PodList
			g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(operatorsNamespace), olmtest.ManagerLabels)).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).Should(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "instances.kudo.dev"}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
		Expect(k8sClient.Get(ctx, instance, &kudov1beta1.Instance{})).To(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-run-3"}, &batchv1.Job{})).To(Succeed())
	})
})

var _ = Describe("operator-sdk scorecard", func() {
	It("passes the bundle's basic and OLM suites", func() {
		out, err := cluster.MakeOutput("scorecard", "SCORECARD_NAMESPACE="+olmtest.NewNamespace(context.Background(), k8sClient))
		Expect(err).NotTo(HaveOccurred())
		for _, test := range []string{"basic-check-spec", "olm-bundle-validation", "olm-crds-have-validation",
			"olm-crds-have-resources", "olm-spec-descriptors", "olm-status-descriptors"} {
			Expect(out).To(MatchRegexp(`Name: %s\n\s*State: pass\n`, test))
		}
		Expect(out).NotTo(ContainSubstring("State: fail"))
	})
})

// packageManifest is kudo-ng's PackageManifest, what OperatorHub lists, as
// the package server serves it to every namespace.
func packageManifest(g Gomega) *unstructured.Unstructured {
	pm := &unstructured.Unstructured{}
	pm.SetGroupVersionKind(schema.GroupVersionKind{Group: "packages.operators.coreos.com", Version: "v1", Kind: "PackageManifest"})
	g.Expect(k8sClient.Get(context.Background(), types.NamespacedName{Namespace: operatorsNamespace, Name: "kudo-ng"}, pm)).To(Succeed())
	return pm
}

// installPlanFor waits for the InstallPlan that installs csv.
func installPlanFor(ctx context.Context, csv string) *operatorsv1alpha1.InstallPlan {
	GinkgoHelper()
	var found *operatorsv1alpha1.InstallPlan
	Eventually(func(g Gomega) {
		var plans operatorsv1alpha1.InstallPlanList
		g.Expect(k8sClient.List(ctx, &plans, client.InNamespace(operatorsNamespace))).To(Succeed())
		for i := range plans.Items {
			if plan := &plans.Items[i]; slices.Contains(plan.Spec.ClusterServiceVersionNames, csv) {
				found = plan
			}
		}
		g.Expect(found).NotTo(BeNil(), "no InstallPlan for %s", csv)
	}).Should(Succeed())
	return found
}

// approveInstallPlan approves the InstallPlan of csv, as an administrator
// does in OperatorHub when the Subscription's approval is Manual.
func approveInstallPlan(ctx context.Context, csv string) {
	GinkgoHelper()
	plan := installPlanFor(ctx, csv)
	patch := client.MergeFrom(plan.DeepCopy())
	plan.Spec.Approved = true
	Expect(k8sClient.Patch(ctx, plan, patch)).To(Succeed())
}

// csvSucceeds waits for the CSV's install to succeed.
func csvSucceeds(ctx context.Context, name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		var csv operatorsv1alpha1.ClusterServiceVersion
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorsNamespace, Name: name}, &csv)).To(Succeed())
		g.Expect(csv.Status.Phase).To(Equal(operatorsv1alpha1.CSVPhaseSucceeded), "%s: %s", csv.Status.Reason, csv.Status.Message)
	}).Should(Succeed())
}
