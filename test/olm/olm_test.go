package olm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/lib/version"
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
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// managerLabels select the manager's pods, in the CSV's Deployment as in config/manager.
var managerLabels = client.MatchingLabels{"control-plane": "controller-manager"}

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
				Image:         localImage("kudo-catalog", "0.1.0"),
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
					HaveKeyWithValue("name", "alpha"), HaveKeyWithValue("currentCSV", firstCSV)))))))
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
				StartingCSV:            firstCSV,
				InstallPlanApproval:    operatorsv1alpha1.ApprovalManual,
			},
		})).To(Succeed())
		approveInstallPlan(ctx, firstCSV)
		csvSucceeds(ctx, firstCSV)
		managerRuns(ctx, localImage("kudo", "0.1.0"))

		var webhooks admissionregistrationv1.ValidatingWebhookConfigurationList
		Expect(k8sClient.List(ctx, &webhooks, client.MatchingLabels{"olm.owner": firstCSV})).To(Succeed())
		Expect(webhooks.Items).NotTo(BeEmpty())
		for _, w := range webhooks.Items[0].Webhooks {
			Expect(w.ClientConfig.CABundle).NotTo(BeEmpty(), "webhook %s", w.Name)
		}
		// The manager's own webhook answers through OLM's certificate, once
		// the Service's endpoints have caught up with the Ready pods.
		ns = newNamespace(ctx)
		instance.Namespace = ns
		Eventually(func() error {
			return k8sClient.Create(ctx, &kudov1beta1.Instance{
				ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns},
				Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "missing-0.1.0"}},
			})
		}).Should(MatchError(ContainSubstring(`admission webhook "vinstance.kudo.dev" denied the request`)))
	})

	It("installs a package with kubectl kudo", func() {
		sleeper := filepath.Join(cluster.Root, "test", "olm", "testdata", "sleeper")
		Expect(kudo(ns, "install", sleeper, "--instance", instance.Name, "--wait")).
			To(ContainSubstring("instance sleeper is deployed"))
		var job batchv1.Job
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-run-1"}, &job)).To(Succeed())
		Expect(job.Status.Succeeded).To(BeEquivalentTo(1))
	})

	It("upgrades to the next bundle version while a plan runs, and the plan completes once", func() {
		Expect(cluster.Make("docker-push", "VERSION=0.1.1")).To(Succeed())
		pushNextBundle()
		Expect(cluster.Make("catalog-push", "CATALOG_IMG="+localImage("kudo-catalog", "0.1.1"),
			"CATALOG_BUNDLES="+localImage("kudo-bundle", "0.1.0")+" "+localImage("kudo-bundle", "0.1.1"))).To(Succeed())
		var catalog operatorsv1alpha1.CatalogSource
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: olmNamespace, Name: catalogName}, &catalog)).To(Succeed())
		catalog.Spec.Image = localImage("kudo-catalog", "0.1.1")
		Expect(k8sClient.Update(ctx, &catalog)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(packageManifest(g).Object).To(HaveKeyWithValue("status",
				HaveKeyWithValue("channels", ContainElement(HaveKeyWithValue("currentCSV", nextCSV)))))
		}).Should(Succeed())
		upgrade := installPlanFor(ctx, nextCSV)

		// A plan that runs for a while: its Job sleeps through the upgrade.
		var i kudov1beta1.Instance
		Expect(k8sClient.Get(ctx, instance, &i)).To(Succeed())
		patch := client.MergeFrom(i.DeepCopy())
		i.Spec.Parameters = map[string]string{"seconds": "75", "run": "2"}
		Expect(k8sClient.Patch(ctx, &i, patch)).To(Succeed())
		var running batchv1.Job
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, instance, &i)).To(Succeed())
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionInProgress))
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-run-2"}, &running)).To(Succeed())
			g.Expect(running.Status.Active).To(BeEquivalentTo(1))
		}).Should(Succeed())
		run := i.Status.PlanStatus["deploy"].UID

		patch = client.MergeFrom(upgrade.DeepCopy())
		upgrade.Spec.Approved = true
		Expect(k8sClient.Patch(ctx, upgrade, patch)).To(Succeed())
		csvSucceeds(ctx, nextCSV)
		managerRuns(ctx, localImage("kudo", "0.1.1"))
		Eventually(func() error {
			return k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorsNamespace, Name: firstCSV}, &operatorsv1alpha1.ClusterServiceVersion{})
		}).Should(Satisfy(apierrors.IsNotFound), "the replaced CSV is deleted")
		Expect(k8sClient.Get(ctx, instance, &i)).To(Succeed())
		Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionInProgress),
			"the Job sleeps longer than the upgrade takes: the plan must still run")

		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, instance, &i)).To(Succeed())
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}, "2m").Should(Succeed())
		Expect(i.Status.PlanStatus["deploy"].UID).To(Equal(run), "the plan that ran across the upgrade completed, not a new one")
		var job batchv1.Job
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-run-2"}, &job)).To(Succeed())
		Expect(job.UID).To(Equal(running.UID), "the plan's Job was not made again")
		Expect(job.Status.Succeeded).To(BeEquivalentTo(1))
		Expect(job.Status.Failed).To(BeZero())
		var settings corev1.ConfigMap
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-settings"}, &settings)).To(Succeed())
		Expect(settings.Data).To(HaveKeyWithValue("seconds", "75"))
	})

	It("uninstalls through OLM: the manager goes, the CRDs, Instances and their objects stay", func() {
		Expect(k8sClient.Delete(ctx, &operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: "kudo-ng", Namespace: operatorsNamespace}})).To(Succeed())
		Expect(k8sClient.Delete(ctx, &operatorsv1alpha1.ClusterServiceVersion{
			ObjectMeta: metav1.ObjectMeta{Name: nextCSV, Namespace: operatorsNamespace}})).To(Succeed())
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(operatorsNamespace), managerLabels)).To(Succeed())
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
		csvSucceeds(ctx, firstCSV)
		managerRuns(ctx, localImage("kudo", "0.1.0"))

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
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorsNamespace, Name: firstCSV}, &operatorsv1alpha1.ClusterServiceVersion{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the CSV: %v", err)
			err = k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorsNamespace, Name: "kudo-ng-catalog"}, &operatorsv1alpha1.CatalogSource{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "run bundle's CatalogSource: %v", err)
			var pods corev1.PodList
			g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(operatorsNamespace), managerLabels)).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).Should(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "instances.kudo.dev"}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
		Expect(k8sClient.Get(ctx, instance, &kudov1beta1.Instance{})).To(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sleeper-run-3"}, &batchv1.Job{})).To(Succeed())
	})
})

var _ = Describe("operator-sdk scorecard", func() {
	It("passes the bundle's basic and OLM suites", func() {
		out, err := cluster.MakeOutput("scorecard", "SCORECARD_NAMESPACE="+newNamespace(context.Background()))
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

// managerRuns waits for the manager's pods to run image, ready, on the real node.
func managerRuns(ctx context.Context, image string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(operatorsNamespace), managerLabels)).To(Succeed())
		g.Expect(pods.Items).NotTo(BeEmpty())
		for _, p := range pods.Items {
			g.Expect(p.DeletionTimestamp).To(BeNil(), "pod %s is going", p.Name)
			g.Expect(p.Spec.NodeName).To(Equal("kudo-ng-node"))
			g.Expect(p.Spec.Containers[0].Image).To(Equal(image))
			g.Expect(p.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))), "pod %s", p.Name)
		}
	}).Should(Succeed())
}

// pushNextBundle pushes bundle version 0.1.1, made from the first one (make
// bundle-build's context) as `make bundle VERSION=0.1.1` would make it: its
// CSV renamed, versioned and pointing at the next manager image, replacing
// the first.
func pushNextBundle() {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	out, err := exec.Command("cp", "-R", filepath.Join(cluster.Root, "bin", "bundle-image", "bundle"), dir).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	path := filepath.Join(dir, "bundle", "manifests", "kudo-ng.clusterserviceversion.yaml")
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	var csv operatorsv1alpha1.ClusterServiceVersion
	Expect(yaml.Unmarshal(data, &csv)).To(Succeed())
	from, to := localImage("kudo", "0.1.0"), localImage("kudo", "0.1.1")
	Expect(csv.Annotations).To(HaveKeyWithValue("containerImage", from))
	csv.Name, csv.Spec.Replaces = nextCSV, firstCSV
	csv.Spec.Version = version.OperatorVersion{Version: semver.MustParse("0.1.1")}
	csv.Annotations["containerImage"] = to
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for i, c := range d.Spec.Template.Spec.Containers {
			d.Spec.Template.Spec.Containers[i].Image = strings.ReplaceAll(c.Image, from, to)
		}
	}
	data, err = yaml.Marshal(&csv)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(path, data, 0o644)).To(Succeed())
	push := exec.Command("go", "run", "./hack/image", "--dockerfile", "bundle.Dockerfile", "--context", dir,
		"--tag", localImage("kudo-bundle", "0.1.1"), "--push")
	push.Dir = cluster.Root
	push.Env = append(os.Environ(), "SSL_CERT_FILE="+cluster.RegistryCA())
	out, err = push.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
}
