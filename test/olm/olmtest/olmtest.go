// Package olmtest holds what the OLM v0 and OLM v1 suites share: the
// release's images in the cluster's registry, the next bundle version, and
// the waits on the manager they install.
package olmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/localcluster"
)

const (
	// LocalRegistry is the cluster's registry (hack/cluster/node.sh), the Makefile's LOCAL_REGISTRY.
	LocalRegistry = "10.244.0.1:5000"
	// FirstCSV and NextCSV are the bundle versions the catalogs offer, oldest first.
	FirstCSV, NextCSV = "kudo-ng.v0.1.0", "kudo-ng.v0.1.1"
)

// ManagerLabels select the manager's pods, in the CSV's Deployment as in config/manager.
var ManagerLabels = client.MatchingLabels{"control-plane": "controller-manager"}

// StartWithFirstRelease starts a local control plane of its own for the
// suite (stopped after it), with env (OLM=true or OLM=v1), and pushes the
// first release as make docker-push bundle-push catalog-push make it while
// its registry answers: the manager, bundle and catalog images both OLMs
// install from.
func StartWithFirstRelease(name string, portBase int, env string) *localcluster.Cluster {
	ginkgo.GinkgoHelper()
	start := time.Now()
	cluster, err := localcluster.Start(name, portBase, env)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() { gomega.Expect(cluster.Stop()).To(gomega.Succeed()) })
	ginkgo.GinkgoWriter.Printf("cluster (%s) up in %s\n", env, time.Since(start))
	gomega.Expect(apiextensionsv1.AddToScheme(scheme.Scheme)).To(gomega.Succeed())
	gomega.Expect(cluster.Make("docker-push", "bundle-push", "catalog-push")).To(gomega.Succeed())
	ginkgo.GinkgoWriter.Printf("images, bundle and catalog pushed at %s\n", time.Since(start))
	return cluster
}

// LocalImage is an image's reference in the cluster's registry.
func LocalImage(name, release string) string {
	return fmt.Sprintf("%s/%s:v%s", LocalRegistry, name, release)
}

// Kudo runs the kubectl-kudo plugin against the cluster, in a namespace.
func Kudo(cluster *localcluster.Cluster, ns string, args ...string) string {
	ginkgo.GinkgoHelper()
	out, err := cluster.Kudo(ns, args...)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "kubectl kudo %s:\n%s", strings.Join(args, " "), out)
	return out
}

// Sleeper is the package the OLM suites install: a Job that sleeps.
func Sleeper(cluster *localcluster.Cluster) string {
	return filepath.Join(cluster.Root, "test", "olm", "testdata", "sleeper")
}

// InstallSleeper installs Sleeper as instance with kubectl kudo, and checks
// that its deploy plan's Job ran on the real node.
func InstallSleeper(ctx context.Context, cluster *localcluster.Cluster, instance types.NamespacedName) {
	ginkgo.GinkgoHelper()
	gomega.Expect(Kudo(cluster, instance.Namespace, "install", Sleeper(cluster), "--instance", instance.Name, "--wait")).
		To(gomega.ContainSubstring("instance " + instance.Name + " is deployed"))
	var job batchv1.Job
	first := types.NamespacedName{Namespace: instance.Namespace, Name: instance.Name + "-run-1"}
	gomega.Expect(cluster.Client.Get(ctx, first, &job)).To(gomega.Succeed())
	gomega.Expect(job.Status.Succeeded).To(gomega.BeEquivalentTo(1))
}

// NewNamespace creates a namespace of its own for one test.
func NewNamespace(ctx context.Context, c client.Client) string {
	ginkgo.GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	gomega.Expect(c.Create(ctx, ns)).To(gomega.Succeed())
	return ns.Name
}

// ManagerRuns waits for the manager's pods in namespace to run image, ready,
// on the real node.
func ManagerRuns(ctx context.Context, c client.Client, namespace, image string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func(g gomega.Gomega) {
		var pods corev1.PodList
		g.Expect(c.List(ctx, &pods, client.InNamespace(namespace), ManagerLabels)).To(gomega.Succeed())
		g.Expect(pods.Items).NotTo(gomega.BeEmpty())
		for _, p := range pods.Items {
			g.Expect(p.DeletionTimestamp).To(gomega.BeNil(), "pod %s is going", p.Name)
			g.Expect(p.Spec.NodeName).To(gomega.Equal("kudo-ng-node"))
			g.Expect(p.Spec.Containers[0].Image).To(gomega.Equal(image))
			g.Expect(p.Status.Conditions).To(gomega.ContainElement(gomega.And(
				gomega.HaveField("Type", corev1.PodReady), gomega.HaveField("Status", corev1.ConditionTrue))), "pod %s", p.Name)
		}
	}).Should(gomega.Succeed())
}

// PushNextBundle pushes bundle version 0.1.1, made from the first one (make
// bundle-build's context) as `make bundle VERSION=0.1.1` would make it: its
// CSV renamed, versioned and pointing at the next manager image, replacing
// the first.
func PushNextBundle(cluster *localcluster.Cluster) {
	ginkgo.GinkgoHelper()
	dir := ginkgo.GinkgoT().TempDir()
	out, err := exec.Command("cp", "-R", filepath.Join(cluster.Root, "bin", "bundle-image", "bundle"), dir).CombinedOutput()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), string(out))
	path := filepath.Join(dir, "bundle", "manifests", "kudo-ng.clusterserviceversion.yaml")
	data, err := os.ReadFile(path)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	var csv operatorsv1alpha1.ClusterServiceVersion
	gomega.Expect(yaml.Unmarshal(data, &csv)).To(gomega.Succeed())
	from, to := LocalImage("kudo", "0.1.0"), LocalImage("kudo", "0.1.1")
	gomega.Expect(csv.Annotations).To(gomega.HaveKeyWithValue("containerImage", from))
	csv.Name, csv.Spec.Replaces = NextCSV, FirstCSV
	csv.Spec.Version = version.OperatorVersion{Version: semver.MustParse("0.1.1")}
	csv.Annotations["containerImage"] = to
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for i, c := range d.Spec.Template.Spec.Containers {
			d.Spec.Template.Spec.Containers[i].Image = strings.ReplaceAll(c.Image, from, to)
		}
	}
	data, err = yaml.Marshal(&csv)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(os.WriteFile(path, data, 0o644)).To(gomega.Succeed())
	push := exec.Command("go", "run", "./hack/image", "--dockerfile", "bundle.Dockerfile", "--context", dir,
		"--tag", LocalImage("kudo-bundle", "0.1.1"), "--push")
	push.Dir = cluster.Root
	push.Env = append(os.Environ(), "SSL_CERT_FILE="+cluster.RegistryCA())
	out, err = push.CombinedOutput()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), string(out))
}

// PushNextRelease pushes what the upgrade installs: manager image 0.1.1, its
// bundle, and catalog 0.1.1 offering both bundles, 0.1.1 replacing 0.1.0 in
// channel alpha.
func PushNextRelease(cluster *localcluster.Cluster) {
	ginkgo.GinkgoHelper()
	gomega.Expect(cluster.Make("docker-push", "VERSION=0.1.1")).To(gomega.Succeed())
	PushNextBundle(cluster)
	gomega.Expect(cluster.Make("catalog-push", "CATALOG_IMG="+LocalImage("kudo-catalog", "0.1.1"),
		"CATALOG_BUNDLES="+LocalImage("kudo-bundle", "0.1.0")+" "+LocalImage("kudo-bundle", "0.1.1"))).To(gomega.Succeed())
}

// WebhooksAnswer waits for the manager's admission webhook to refuse an
// Instance of a missing OperatorVersion in ns: its certificate is trusted,
// and the Service's endpoints have caught up with the Ready pods.
func WebhooksAnswer(ctx context.Context, c client.Client, ns string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func() error {
		return c.Create(ctx, &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "missing-0.1.0"}},
		})
	}).Should(gomega.MatchError(gomega.ContainSubstring(`admission webhook "vinstance.kudo.dev" denied the request`)))
}

// LongPlan is a deploy plan of test/olm/testdata/sleeper whose Job sleeps
// longer than an upgrade of the manager takes.
type LongPlan struct {
	c        client.Client
	instance types.NamespacedName
	run, job types.UID
}

// StartLongPlan runs the sleeper Instance's deploy plan again, its Job
// sleeping 75 s, and waits for the Job to run.
func StartLongPlan(ctx context.Context, c client.Client, instance types.NamespacedName) *LongPlan {
	ginkgo.GinkgoHelper()
	var i kudov1beta1.Instance
	gomega.Expect(c.Get(ctx, instance, &i)).To(gomega.Succeed())
	patch := client.MergeFrom(i.DeepCopy())
	i.Spec.Parameters = map[string]string{"seconds": "75", "run": "2"}
	gomega.Expect(c.Patch(ctx, &i, patch)).To(gomega.Succeed())
	var running batchv1.Job
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(c.Get(ctx, instance, &i)).To(gomega.Succeed())
		g.Expect(i.Status.PlanStatus["deploy"].Status).To(gomega.Equal(kudov1beta1.ExecutionInProgress))
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: instance.Namespace, Name: "sleeper-run-2"}, &running)).To(gomega.Succeed())
		g.Expect(running.Status.Active).To(gomega.BeEquivalentTo(1))
	}).Should(gomega.Succeed())
	return &LongPlan{c: c, instance: instance, run: i.Status.PlanStatus["deploy"].UID, job: running.UID}
}

// CompletesOnce checks that the plan still runs once the upgrade is done,
// then waits for it to complete: the same run, its Job not made again.
func (p *LongPlan) CompletesOnce(ctx context.Context) {
	ginkgo.GinkgoHelper()
	var i kudov1beta1.Instance
	gomega.Expect(p.c.Get(ctx, p.instance, &i)).To(gomega.Succeed())
	gomega.Expect(i.Status.PlanStatus["deploy"].Status).To(gomega.Equal(kudov1beta1.ExecutionInProgress),
		"the Job sleeps longer than the upgrade takes: the plan must still run")
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(p.c.Get(ctx, p.instance, &i)).To(gomega.Succeed())
		g.Expect(i.Status.PlanStatus["deploy"].Status).To(gomega.Equal(kudov1beta1.ExecutionComplete))
	}, "2m").Should(gomega.Succeed())
	gomega.Expect(i.Status.PlanStatus["deploy"].UID).To(gomega.Equal(p.run), "the plan that ran across the upgrade completed, not a new one")
	var job batchv1.Job
	gomega.Expect(p.c.Get(ctx, types.NamespacedName{Namespace: p.instance.Namespace, Name: "sleeper-run-2"}, &job)).To(gomega.Succeed())
	gomega.Expect(job.UID).To(gomega.Equal(p.job), "the plan's Job was not made again")
	gomega.Expect(job.Status.Succeeded).To(gomega.BeEquivalentTo(1))
	gomega.Expect(job.Status.Failed).To(gomega.BeZero())
}
