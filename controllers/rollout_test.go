package controllers_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/controllers"
)

// versionOf is configMapsOperator at another version; broken versions
// have an upgrade plan that fails.
func versionOf(ns, version string, broken bool) *kudov1beta1.OperatorVersion {
	ov := configMapsOperator(ns, "fleet")
	ov.Name, ov.Spec.Version = "fleet-"+version, version
	if broken {
		ov.Spec.Tasks = append(ov.Spec.Tasks, kudov1beta1.Task{Name: "break", Kind: kudov1beta1.DummyTaskKind,
			Spec: kudov1beta1.TaskSpec{DummyTaskSpec: kudov1beta1.DummyTaskSpec{WantErr: true, Fatal: true}}})
		ov.Spec.Plans["upgrade"] = plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("break", "break")))
	}
	return ov
}

func rolloutTo(ns, name, version string) *kudov1alpha1.Rollout {
	return &kudov1alpha1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kudov1alpha1.RolloutSpec{Operator: "fleet", OperatorVersion: version, Strategy: kudov1alpha1.RolloutStrategy{
			Waves: []intstr.IntOrString{intstr.FromInt32(1)}, MaxParallel: 2, MaxUnavailable: 2}},
	}
}

var _ = Describe("A Rollout", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		for _, v := range []string{"0.1.0", "0.2.0"} {
			Expect(k8sClient.Create(ctx, versionOf(ns, v, false))).To(Succeed())
		}
		Expect(k8sClient.Create(ctx, versionOf(ns, "0.3.0", true))).To(Succeed())
		for n := 1; n <= 3; n++ {
			Expect(k8sClient.Create(ctx, newInstance(ns, fmt.Sprintf("i%d", n), "fleet-0.1.0"))).To(Succeed())
		}
		Eventually(func(g Gomega) {
			for n := 1; n <= 3; n++ {
				i := getInstance(ctx, g, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("i%d", n)})
				g.Expect(apimeta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
			}
		}).Should(Succeed())
	})

	versions := func(g Gomega) []string {
		var out []string
		for n := 1; n <= 3; n++ {
			out = append(out, getInstance(ctx, g, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("i%d", n)}).Spec.OperatorVersion.Name)
		}
		return out
	}

	It("upgrades a canary, then the rest, and stops at a canary that fails, touching no other", func() {
		good := rolloutTo(ns, "good", "0.2.0")
		Expect(k8sClient.Create(ctx, good)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(good), good)).To(Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(good.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue(), "%+v", good.Status)
		}, "60s").Should(Succeed())
		Expect(apimeta.IsStatusConditionTrue(good.Status.Conditions, kudov1alpha1.RolloutComplete)).To(BeTrue())
		Expect(good.Status.Waves).To(HaveLen(2))
		Expect(good.Status.Waves[0].Instances).To(Equal([]string{"i1"}))
		Expect(good.Status.Waves[1].Instances).To(Equal([]string{"i2", "i3"}))
		for _, w := range good.Status.Waves {
			Expect(w.Phase).To(Equal(kudov1alpha1.WaveComplete))
		}
		Expect(good.Status.Updated).To(BeEquivalentTo(3))
		Expect(good.Status.Previous).To(Equal(map[string]string{"i1": "fleet-0.1.0", "i2": "fleet-0.1.0", "i3": "fleet-0.1.0"}))
		Expect(versions(Default)).To(Equal([]string{"fleet-0.2.0", "fleet-0.2.0", "fleet-0.2.0"}))

		bad := rolloutTo(ns, "bad", "0.3.0")
		Expect(k8sClient.Create(ctx, bad)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(bad), bad)).To(Succeed())
			g.Expect(bad.Status.Failure).NotTo(BeNil(), "%+v", bad.Status)
		}, "60s").Should(Succeed())
		Expect(bad.Status.Failure.Instance).To(Equal("i1"))
		Expect(bad.Status.Failure.Reason).To(HavePrefix("its upgrade plan failed"))
		Expect(apimeta.IsStatusConditionTrue(bad.Status.Conditions, kudov1beta1.StalledCondition)).To(BeTrue())
		Expect(bad.Status.Waves[0].Phase).To(Equal(kudov1alpha1.WaveFailed))
		Expect(bad.Status.Message).To(HavePrefix("Paused at wave 1: Instance i1: its upgrade plan failed"))
		Consistently(versions, "3s").Should(Equal([]string{"fleet-0.3.0", "fleet-0.2.0", "fleet-0.2.0"}))
	})

	It("goes cluster by cluster: the other cluster's Instance first, then the manager's own", func() {
		remoteNamespace(ctx, ns, "staging", remoteKubeConfig)
		remote := newInstance(ns, "r1", "fleet-0.1.0")
		remote.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "staging"}}
		Expect(k8sClient.Create(ctx, remote)).To(Succeed())
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, client.ObjectKeyFromObject(remote))
			g.Expect(apimeta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
		}).Should(Succeed())

		ro := rolloutTo(ns, "by-cluster", "0.2.0")
		ro.Spec.Strategy.Clusters = []string{"staging", kudov1alpha1.LocalCluster}
		Expect(k8sClient.Create(ctx, ro)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ro), ro)).To(Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(ro.Status.Conditions, kudov1alpha1.RolloutComplete)).To(BeTrue(), "%+v", ro.Status)
		}, "60s").Should(Succeed())
		var waves []string
		for _, w := range ro.Status.Waves {
			waves = append(waves, fmt.Sprintf("%s %v", w.Cluster, w.Instances))
		}
		Expect(waves).To(Equal([]string{"staging [r1]", "in-cluster [i1]", "in-cluster [i2 i3]"}))
		Expect(ro.Status.Waves[0].CompletedAt.Time).NotTo(BeTemporally(">", ro.Status.Waves[1].StartedAt.Time))
		Expect(getInstance(ctx, Default, client.ObjectKeyFromObject(remote)).Spec.OperatorVersion.Name).To(Equal("fleet-0.2.0"))
		Expect(versions(Default)).To(Equal([]string{"fleet-0.2.0", "fleet-0.2.0", "fleet-0.2.0"}))
	})

	It("rolls a failed canary back to what it ran, its history kept, when the strategy says so", func() {
		bad := rolloutTo(ns, "bad", "0.3.0")
		bad.Spec.Strategy.OnFailure = kudov1alpha1.Rollback
		Expect(k8sClient.Create(ctx, bad)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(bad), bad)).To(Succeed())
			g.Expect(bad.Status.Waves).NotTo(BeEmpty())
			g.Expect(bad.Status.Waves[0].Phase).To(Equal(kudov1alpha1.WaveRolledBack), "%+v", bad.Status)
		}, "60s").Should(Succeed())
		Expect(bad.Status.Failure.Instance).To(Equal("i1"))
		Expect(apimeta.FindStatusCondition(bad.Status.Conditions, kudov1beta1.ReadyCondition).Message).To(HaveSuffix("; rolled back i1"))
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, client.ObjectKey{Namespace: ns, Name: "i1"})
			g.Expect(i.Spec.OperatorVersion.Name).To(Equal("fleet-0.1.0"))
			g.Expect(apimeta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
			var ran []string
			for _, r := range i.Status.Revisions {
				ran = append(ran, r.OperatorVersion+" "+string(r.Status))
			}
			g.Expect(ran).To(ContainElements("fleet-0.3.0 FATAL_ERROR", "fleet-0.1.0 COMPLETE"))
		}, "60s").Should(Succeed())
		Consistently(versions, "2s").Should(Equal([]string{"fleet-0.1.0", "fleet-0.1.0", "fleet-0.1.0"}))
	})

	It("is admitted only from a user who may patch the Instances it upgrades", func() {
		writeRollouts := rbacv1.PolicyRule{APIGroups: []string{kudov1alpha1.GroupVersion.Group}, Resources: []string{"rollouts"},
			Verbs: []string{"create", "update", "get"}}
		bob := userWith(ctx, ns, "bob", writeRollouts)
		err := bob.Create(ctx, rolloutTo(ns, "bobs", "0.2.0"))
		Expect(err).To(MatchError(ContainSubstring(
			fmt.Sprintf("bob may not patch the Instances of namespace %s, so no Rollout of theirs may upgrade them", ns))))
		carol := userWith(ctx, ns, "carol", writeRollouts, rbacv1.PolicyRule{APIGroups: []string{kudov1beta1.GroupVersion.Group},
			Resources: []string{"instances"}, Verbs: []string{"patch"}})
		Expect(carol.Create(ctx, rolloutTo(ns, "carols", "0.2.0"))).To(Succeed())
	})

	It("aborts mid-wave, rolling the wave back, and undoes what it upgraded", func() {
		slow := rolloutTo(ns, "slow", "0.2.0")
		slow.Spec.Strategy.BakeTime = metav1.Duration{Duration: time.Hour}
		Expect(k8sClient.Create(ctx, slow)).To(Succeed())
		Eventually(versions).Should(Equal([]string{"fleet-0.2.0", "fleet-0.1.0", "fleet-0.1.0"}))
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(slow), slow)).To(Succeed())
			g.Expect(slow.Status.Message).To(Equal("1 baking (i1)"))
		}, "60s").Should(Succeed())
		patch := client.MergeFrom(slow.DeepCopy())
		slow.Spec.Abort = true
		Expect(k8sClient.Patch(ctx, slow, patch)).To(Succeed())
		Eventually(versions, "60s").Should(Equal([]string{"fleet-0.1.0", "fleet-0.1.0", "fleet-0.1.0"}))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(slow), slow)).To(Succeed())
		Expect(slow.Status.Failure).To(Equal(&kudov1alpha1.RolloutFailure{Reason: "aborted"}))
		Expect(slow.Status.Waves[0].Phase).To(Equal(kudov1alpha1.WaveRolledBack))
		Expect(slow.Status.Waves[1].Phase).To(Equal(kudov1alpha1.WavePending))

		good := rolloutTo(ns, "good", "0.2.0")
		Expect(k8sClient.Create(ctx, good)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(good), good)).To(Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(good.Status.Conditions, kudov1alpha1.RolloutComplete)).To(BeTrue())
		}, "60s").Should(Succeed())
		patch = client.MergeFrom(good.DeepCopy())
		good.Spec.Undo = true
		Expect(k8sClient.Patch(ctx, good, patch)).To(Succeed())
		Eventually(versions, "60s").Should(Equal([]string{"fleet-0.1.0", "fleet-0.1.0", "fleet-0.1.0"}))
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(good), good)).To(Succeed())
			g.Expect(apimeta.FindStatusCondition(good.Status.Conditions, kudov1beta1.ReadyCondition).Reason).To(Equal("RolloutUndone"))
			g.Expect(apimeta.FindStatusCondition(good.Status.Conditions, kudov1alpha1.RolloutComplete)).To(BeNil())
		}).Should(Succeed())
	})

	It("goes on from its status after a restart, starting no plan twice", func() {
		slow := rolloutTo(ns, "slow", "0.2.0")
		slow.Spec.Strategy.BakeTime = metav1.Duration{Duration: time.Hour}
		Expect(k8sClient.Create(ctx, slow)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(slow), slow)).To(Succeed())
			g.Expect(slow.Status.Message).To(Equal("1 baking (i1)"))
		}, "60s").Should(Succeed())
		canary := getInstance(ctx, Default, client.ObjectKey{Namespace: ns, Name: "i1"})
		runs := canary.Status.PlanStatus

		// A manager that starts again reads the same Rollout and Instances.
		restarted := &controllers.RolloutReconciler{Client: k8sClient, Recorder: record.NewFakeRecorder(100), Clock: time.Now}
		for range 2 {
			result, err := restarted.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(slow)})
			Expect(err).NotTo(HaveOccurred())
			Expect(result.RequeueAfter).To(BeNumerically(">", 59*time.Minute))
		}
		Consistently(func(g Gomega) {
			i := getInstance(ctx, g, client.ObjectKey{Namespace: ns, Name: "i1"})
			for plan, run := range runs {
				g.Expect(i.Status.PlanStatus[plan].UID).To(Equal(run.UID), plan)
			}
			g.Expect(versions(g)).To(Equal([]string{"fleet-0.2.0", "fleet-0.1.0", "fleet-0.1.0"}))
		}, "2s").Should(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(slow), slow)).To(Succeed())
		Expect(slow.Status.Current).To(BeZero())
		Expect(slow.Status.Waves[0].Phase).To(Equal(kudov1alpha1.WaveProgressing))
	})
})
