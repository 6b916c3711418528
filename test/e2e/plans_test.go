package e2e

import (
	"context"
	"io"
	"net/http"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// setParameter changes one parameter of an Instance, as `kubectl kudo update` does.
func setParameter(ctx context.Context, i *kudov1beta1.Instance, name, value string) {
	GinkgoHelper()
	current := &kudov1beta1.Instance{}
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), current)).To(Succeed())
	patch := client.MergeFrom(current.DeepCopy())
	if current.Spec.Parameters == nil {
		current.Spec.Parameters = map[string]string{}
	}
	current.Spec.Parameters[name] = value
	Expect(k8sClient.Patch(ctx, current, patch)).To(Succeed())
}

var _ = Describe("Plans", func() {
	It("scales zookeeper when NODE_COUNT changes from 3 to 5", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, conformancePackage("zookeeper"), "zk", map[string]string{"NODE_COUNT": "3"})
		before := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete).Status.PlanStatus["deploy"].UID

		setParameter(ctx, i, "NODE_COUNT", "5")
		// zookeeper has no update plan: an untriggered parameter runs deploy again.
		Eventually(func(g Gomega) {
			got := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
			g.Expect(got.Status.PlanStatus["deploy"].UID).NotTo(Equal(before))
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			sts := &appsv1.StatefulSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "zk-zookeeper"}, sts)).To(Succeed())
			g.Expect(*sts.Spec.Replicas).To(BeEquivalentTo(5))
			g.Expect(sts.Status.ReadyReplicas).To(BeEquivalentTo(5))
		}).Should(Succeed())
	})

	// backupMySQL installs mysql and runs its backup plan, whose first step
	// applies a claim and waits for it before the step whose Job uses it.
	backupMySQL := func(ctx context.Context, ns string) *kudov1beta1.Instance {
		GinkgoHelper()
		i := install(ctx, ns, conformancePackage("mysql"), "mysql", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)

		setParameter(ctx, i, "BACKUP_FILE", "monday.sql")
		got := planStatus(ctx, i, "backup", kudov1beta1.ExecutionComplete)
		Expect(got.Status.ActivePlan.Name).To(Equal("backup"))
		// The backup's cleanup step deleted its Job.
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "backup-job"}, &batchv1.Job{}))).To(BeTrue())
		return got
	}

	It("runs mysql's backup plan when its trigger parameter changes", func() {
		ctx := context.Background()
		backupMySQL(ctx, newNamespace(ctx))
	})

	It("runs mysql's backup plan where the default StorageClass binds on first consumer, as kind's does: the claim counts healthy before the Job that uses it", func() {
		ctx := context.Background()
		// The newest default StorageClass is the one claims get.
		firstConsumer := &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{
				Name: "e2e-first-consumer", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
			},
			Provisioner:       "kudo-ng.dev/hostpath",
			ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		}
		Expect(k8sClient.Create(ctx, firstConsumer)).To(Succeed())
		DeferCleanup(func() { Expect(k8sClient.Delete(context.Background(), firstConsumer)).To(Succeed()) })
		ns := newNamespace(ctx)

		got := backupMySQL(ctx, ns)
		Eventually(func(g Gomega) {
			claim := &corev1.PersistentVolumeClaim{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mysql-backup-pv"}, claim)).To(Succeed())
			g.Expect(claim.Spec.StorageClassName).To(HaveValue(Equal(firstConsumer.Name)))
			g.Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound), "the backup Job's pod binds it")
		}).Should(Succeed())
		Expect(got.Status.PlanStatus["backup"].Phases[0].Steps[0].Message).To(Equal("PersistentVolumeClaim mysql-backup-pv is Pending " +
			"until a pod uses it (StorageClass e2e-first-consumer binds on first consumer); counted healthy"))
	})

	It("fails the step of a Job that fails", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "failing-job"), "failing", nil)
		got := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionFatalError)
		step := got.Status.PlanStatus["deploy"].Phases[0].Steps[0]
		Expect(step.Status).To(Equal(kudov1beta1.ExecutionFatalError))
		Expect(step.Message).To(ContainSubstring("task job: Job failing-migrate failed"))
		Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.StalledCondition)).To(BeTrue())
	})

	It("ends a step that waits past its timeout, naming what it waited for, and kubectl kudo plan retry resumes from it", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "gated"), "gated", nil)
		failed := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionFatalError)
		steps := failed.Status.PlanStatus["deploy"].Phases[0].Steps
		Expect(steps[0].Status).To(Equal(kudov1beta1.ExecutionComplete))
		Expect(steps[1].Message).To(HavePrefix("step web timed out after 5s: waiting for Deployment gated-web: "))
		status := mustKudo(ns, "plan", "status", "--instance", "gated")
		Expect(status).To(ContainSubstring("Step web [FATAL_ERROR]"))

		// Retried while what it waits for is still missing, it times out again.
		Expect(mustKudo(ns, "plan", "retry", "--instance", "gated")).To(Equal("Retrying plan deploy of Instance gated from its failed steps\n"))
		Eventually(func(g Gomega) {
			got := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionFatalError))
			g.Expect(got.Status.PlanStatus["deploy"].StartedAt.Time).To(BeTemporally(">", failed.Status.PlanStatus["deploy"].StartedAt.Time))
			g.Expect(got.Spec.PlanExecution).To(Equal(kudov1beta1.PlanExecution{}))
		}).Should(Succeed())

		// Once a node may run its pod, a retry resumes the plan, which completes.
		labelNodeForTest(ctx, "kwok-node-0", "gated.kudo-ng.dev/open")
		Eventually(func(g Gomega) { workloadsReady(ctx, g, ns) }).Should(Succeed())
		mustKudo(ns, "plan", "retry", "--instance", "gated", "--wait")
		got := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		resumed := got.Status.PlanStatus["deploy"]
		Expect(resumed.UID).To(Equal(failed.Status.PlanStatus["deploy"].UID))
		Expect(resumed.Phases[0].Steps[0].StartedAt.Time).To(BeTemporally("==", steps[0].StartedAt.Time), "the completed step ran again")

		out, err := kudo(ns, "plan", "retry", "--instance", "gated")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("only a failed plan can be retried, and plan deploy is COMPLETE"))
	})

	It("keeps the step of an unpullable image IN_PROGRESS, naming the pod", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "bad-image"), "bad", nil)
		Eventually(func(g Gomega) {
			got, step := firstDeployStep(ctx, g, i)
			g.Expect(step.Status).To(Equal(kudov1beta1.ExecutionInProgress))
			g.Expect(step.Message).To(MatchRegexp(`waiting for Deployment bad-web: .*\(pod bad-web-[a-z0-9-]+: container web: ErrImagePull: ` +
				`failed to pull image "nginx:does-not-exist": not found\)`))
			ready := meta.FindStatusCondition(got.Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Message).To(ContainSubstring("ErrImagePull"))
		}).Should(Succeed())
	})

	It("is not Ready, as in KUDO, while a workload of its completed plan is not, and Ready again after", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, hello, "first", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		setImage := func(image string) {
			GinkgoHelper()
			d := &appsv1.Deployment{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "first"}, d)).To(Succeed())
			patch := client.MergeFrom(d.DeepCopy())
			d.Spec.Template.Spec.Containers[0].Image = image
			Expect(k8sClient.Patch(ctx, d, patch)).To(Succeed())
		}
		ready := func(g Gomega) *metav1.Condition {
			got := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
			c := meta.FindStatusCondition(got.Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(c).NotTo(BeNil())
			return c
		}

		setImage("nginx:does-not-exist")
		Eventually(func(g Gomega) {
			c := ready(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal("ResourceNotReady"))
			g.Expect(c.Message).To(ContainSubstring("Deployment first"))
		}).Should(Succeed())

		setImage("nginx:1.27")
		Eventually(func(g Gomega) {
			c := ready(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal("ResourcesReady"))
		}).Should(Succeed())
	})

	It("removes everything the Instance owned when it is uninstalled", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, hello, "first", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)

		Expect(k8sClient.Delete(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), &kudov1beta1.Instance{}))).To(BeTrue())
			deployments := &appsv1.DeploymentList{}
			g.Expect(k8sClient.List(ctx, deployments, client.InNamespace(ns))).To(Succeed())
			g.Expect(deployments.Items).To(BeEmpty())
		}).Should(Succeed())
	})
})

// kstatusOf is what kstatus (Flux, Argo CD, cli-utils) reads of an Instance.
func kstatusOf(ctx context.Context, ns, name string) kstatus.Status {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kudov1beta1.GroupVersion.WithKind("Instance"))
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	result, err := kstatus.Compute(u)
	Expect(err).NotTo(HaveOccurred())
	return result.Status
}

var _ = Describe("Observing plans", func() {
	It("reads as kstatus says: Current once Ready, Failed once its plan failed; kubectl wait --for=condition=Ready works", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		install(ctx, ns, hello, "watched", nil)
		_, err := cluster.Kubectl("-n", ns, "wait", "--for=condition=Ready", "instance/watched", "--timeout=120s")
		Expect(err).NotTo(HaveOccurred())
		Expect(kstatusOf(ctx, ns, "watched")).To(Equal(kstatus.CurrentStatus))

		failing := install(ctx, ns, filepath.Join("testdata", "failing-job"), "failing", nil)
		planStatus(ctx, failing, "deploy", kudov1beta1.ExecutionFatalError)
		Expect(kstatusOf(ctx, ns, "failing")).To(Equal(kstatus.FailedStatus))
	})

	It("counts plan runs and their durations, scraped from the manager's metrics endpoint", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, hello, "counted", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		Eventually(func(g Gomega) {
			resp, err := http.Get("http://" + metricsAddress + "/metrics")
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(body)).To(MatchRegexp(`kudo_ng_plans_started_total\{operator="hello",plan="deploy"\} [1-9]`))
			g.Expect(string(body)).To(MatchRegexp(
				`kudo_ng_plans_finished_total\{operator="hello",plan="deploy",result="COMPLETE"\} [1-9]`))
			g.Expect(string(body)).To(MatchRegexp(
				`kudo_ng_plan_duration_seconds_count\{operator="hello",plan="deploy",result="COMPLETE"\} [1-9]`))
			g.Expect(string(body)).To(MatchRegexp(
				`kudo_ng_step_duration_seconds_count\{operator="hello",plan="deploy",result="COMPLETE",step="everything"\} [1-9]`))
		}).Should(Succeed())
	})
})
