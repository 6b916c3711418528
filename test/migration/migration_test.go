package migration

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/corpus"
)

// kudoPackage is a package KUDO installs before the switch, and how KUDO
// v0.19 ends its deploy plan on Kubernetes of today.
type kudoPackage struct {
	name, path string
	deploy     kudov1beta1.ExecutionStatus
}

// packages are the project's first example and, from the conformance
// corpus when it is there, two packages whose deploy plans run Jobs: mysql,
// which KUDO completes, and redis, which KUDO fails on its removed
// policy/v1beta1 PodDisruptionBudget.
func packages() []kudoPackage {
	GinkgoHelper()
	examples := corpus.Examples()
	pkgs := []kudoPackage{
		{"hello", filepath.Join(examples, "hello", "operator"), kudov1beta1.ExecutionComplete},
		{"all-tasks", filepath.Join(examples, "all-tasks", "operator"), kudov1beta1.ExecutionComplete},
		{"upgrade", filepath.Join(examples, "upgrade", "0.1.0", "operator"), kudov1beta1.ExecutionComplete},
	}
	conformance, err := corpus.Dir()
	Expect(err).NotTo(HaveOccurred())
	if conformance == "" {
		AddReportEntry("conformance packages", corpus.SkipReason)
		return pkgs
	}
	return append(pkgs,
		kudoPackage{"mysql", filepath.Join(conformance, "mysql", "operator"), kudov1beta1.ExecutionComplete},
		kudoPackage{"redis", filepath.Join(conformance, "redis", "operator"), kudov1beta1.ExecutionFatalError})
}

// workloads is what the switch must not touch in the packages' namespaces:
// each pod, Job and ReplicaSet by UID, and each workload's generation.
type workloads struct {
	uids        []string
	generations map[string]int64
}

func snapshot(ctx context.Context, g Gomega, namespaces []string) workloads {
	w := workloads{generations: map[string]int64{}}
	for _, ns := range namespaces {
		pods, jobs, replicaSets := &corev1.PodList{}, &batchv1.JobList{}, &appsv1.ReplicaSetList{}
		deployments, statefulSets := &appsv1.DeploymentList{}, &appsv1.StatefulSetList{}
		for _, list := range []client.ObjectList{pods, jobs, replicaSets, deployments, statefulSets} {
			g.Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		}
		for _, p := range pods.Items {
			w.uids = append(w.uids, "pod "+ns+"/"+p.Name+" "+string(p.UID))
		}
		for _, j := range jobs.Items {
			w.uids = append(w.uids, "job "+ns+"/"+j.Name+" "+string(j.UID))
		}
		for _, r := range replicaSets.Items {
			w.uids = append(w.uids, "replicaset "+ns+"/"+r.Name+" "+string(r.UID))
		}
		for _, d := range deployments.Items {
			w.generations["deployment "+ns+"/"+d.Name] = d.Generation
		}
		for _, s := range statefulSets.Items {
			w.generations["statefulset "+ns+"/"+s.Name] = s.Generation
		}
	}
	slices.Sort(w.uids)
	return w
}

// plansStarted counts the PlanStarted events of the packages' Instances.
func plansStarted(ctx context.Context, g Gomega, namespaces []string) int32 {
	var n int32
	for _, ns := range namespaces {
		events := &corev1.EventList{}
		g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "Instance" && e.Reason == "PlanStarted" {
				n += max(e.Count, 1)
			}
		}
	}
	return n
}

func instance(ctx context.Context, g Gomega, ns string) *kudov1beta1.Instance {
	i := &kudov1beta1.Instance{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: ns}, i)).To(Succeed())
	return i
}

var _ = Describe("kubectl kudo init --upgrade on a cluster KUDO v0.19 runs", Ordered, func() {
	var (
		ctx        context.Context
		pkgs       []kudoPackage
		namespaces []string
		before     workloads
		started    int32
	)
	BeforeAll(func() {
		ctx = context.Background()
		pkgs = packages()
	})

	It("KUDO installs the packages and runs their deploy plans", func() {
		for _, p := range pkgs {
			namespaces = append(namespaces, newNamespace(ctx, p.name))
			kudo(p.name, "install", p.path, "--instance", p.name)
		}
		for _, p := range pkgs {
			Eventually(func(g Gomega) {
				g.Expect(instance(ctx, g, p.name).Status.PlanStatus["deploy"].Status).To(Equal(p.deploy))
			}, 5*time.Minute).Should(Succeed(), "%s's deploy plan under KUDO", p.name)
		}
		// KUDO is done: its plans ended, and what they made settles.
		Eventually(func(g Gomega) {
			before = snapshot(ctx, g, namespaces)
			g.Consistently(func(g Gomega) { g.Expect(snapshot(ctx, g, namespaces)).To(Equal(before)) }, 5*time.Second).Should(Succeed())
		}).Should(Succeed())
		started = plansStarted(ctx, Default, namespaces)
		AddReportEntry("under KUDO", fmt.Sprintf("%d pods, Jobs and ReplicaSets; generations %v; %d plans started",
			len(before.uids), before.generations, started))
	})

	It("switches to kudo-ng with one command, which deletes KUDO's manager, webhook and cluster-admin binding", func() {
		preview := kudo("default", "init", "--upgrade", "--unsafe-self-signed-webhook-ca", "--dry-run", "-o", "yaml")
		Expect(preview).To(ContainSubstring("#   StatefulSet kudo-system/kudo-controller-manager (KUDO's manager)"))
		Expect(preview).To(ContainSubstring("#   ClusterRoleBinding kudo-manager-rolebinding (the cluster-admin binding of KUDO's manager)"))
		Expect(snapshot(ctx, Default, namespaces)).To(Equal(before))

		start := time.Now()
		out := kudo("default", "init", "--upgrade", "--unsafe-self-signed-webhook-ca", "--wait",
			"--kudo-image", kudoNGImage, "--kudo-image-pull-policy", "IfNotPresent")
		AddReportEntry("init --upgrade", fmt.Sprintf("took %s:\n%s", time.Since(start), out))
		Expect(out).To(ContainSubstring("StatefulSet kudo-system/kudo-controller-manager (KUDO's manager) deleted"))
		Expect(out).To(ContainSubstring("MutatingWebhookConfiguration kudo-manager-instance-admission-webhook-config (KUDO's Instance admission webhook) deleted"))
		Expect(out).To(ContainSubstring("kudo-ng is ready"))
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(kudoNamespace), client.MatchingLabels{"app": "kudo-manager"})).To(Succeed())
		Expect(pods.Items).To(BeEmpty())
	})

	It("adopts every Instance as KUDO left it and runs nothing: no pod, Job or ReplicaSet made or deleted, no generation moved, no plan started", func() {
		for _, p := range pkgs {
			Eventually(func(g Gomega) {
				i := instance(ctx, g, p.name)
				g.Expect(i.Status.AppliedOperatorVersion).To(Equal(i.Spec.OperatorVersion.Name))
				g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(p.deploy))
				condition := kudov1beta1.ReadyCondition
				if p.deploy == kudov1beta1.ExecutionFatalError {
					condition = kudov1beta1.StalledCondition
				}
				g.Expect(meta.IsStatusConditionTrue(i.Status.Conditions, condition)).To(BeTrue(), "%s: %v", p.name, i.Status.Conditions)
			}).Should(Succeed(), "%s taken over", p.name)
		}
		Consistently(func(g Gomega) {
			after := snapshot(ctx, g, namespaces)
			g.Expect(after.uids).To(Equal(before.uids))
			g.Expect(after.generations).To(Equal(before.generations))
			g.Expect(plansStarted(ctx, g, namespaces)).To(Equal(started))
		}, 10*time.Second).Should(Succeed())
		AddReportEntry("after the switch", fmt.Sprintf("%d pods, Jobs and ReplicaSets, the same; generations %v, the same; %d plans started",
			len(before.uids), before.generations, plansStarted(ctx, Default, namespaces)-started))
	})

	It("then runs, on an update, the plan KUDO would have: hello's replicas trigger its deploy plan", func() {
		kudo("hello", "update", "--instance", "hello", "-p", "replicas=3")
		Eventually(func(g Gomega) {
			i := instance(ctx, g, "hello")
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(i.Status.AppliedParameters).To(HaveKeyWithValue("replicas", "3"))
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "hello", Name: "hello"}, d)).To(Succeed())
			g.Expect(*d.Spec.Replicas).To(BeNumerically("==", 3))
		}).Should(Succeed())
		Expect(plansStarted(ctx, Default, namespaces)).To(Equal(started + 1))
	})
})
