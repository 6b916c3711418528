package cluster

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const simulateAnnotation = "kudo-ng.dev/simulate"

func podTemplate(app string, annotations map[string]string, image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}},
	}
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

var _ = Describe("Workloads on simulated nodes", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})
	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			objects, logs := cluster.Diagnose(ns)
			AddReportEntry("objects and events", objects)
			AddReportEntry("component logs", logs)
		}
	})

	It("rolls out a 3-replica Deployment to Available", func() {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: podTemplate("web", nil, "nginx:1.27"),
			},
		}
		Expect(k8sClient.Create(ctx, d)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(3))
			g.Expect(d.Status.Conditions).To(ContainElement(And(
				HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue))))
		}).Should(Succeed())
	})

	It("makes a 3-replica StatefulSet Ready with bound claims, and deletes released volumes", func() {
		s := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
			Spec: appsv1.StatefulSetSpec{
				Replicas:    ptr.To[int32](3),
				ServiceName: "db",
				Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				Template:    podTemplate("db", nil, "postgres:16"),
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
						},
					},
				}},
			},
		}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(s.Status.ReadyReplicas).To(BeEquivalentTo(3))
			g.Expect(s.Status.AvailableReplicas).To(BeEquivalentTo(3))
		}).Should(Succeed())

		claims := &corev1.PersistentVolumeClaimList{}
		Expect(k8sClient.List(ctx, claims, client.InNamespace(ns))).To(Succeed())
		Expect(claims.Items).To(HaveLen(3))
		for _, c := range claims.Items {
			Expect(c.Status.Phase).To(Equal(corev1.ClaimBound), c.Name)
			Expect(*c.Spec.StorageClassName).To(Equal("standard"), "the default StorageClass")
		}

		claim := claims.Items[0]
		volume := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: claim.Spec.VolumeName}}
		Expect(k8sClient.Delete(ctx, s)).To(Succeed())
		Expect(k8sClient.Delete(ctx, &claim)).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(volume), volume)
		}).Should(Satisfy(apierrors.IsNotFound), "a released volume of policy Delete is deleted")
	})

	It("completes a Job and fails one marked to fail", func() {
		job := func(name string, annotations map[string]string) *batchv1.Job {
			t := podTemplate(name, annotations, "busybox")
			t.Spec.RestartPolicy = corev1.RestartPolicyNever
			return &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: t},
			}
		}
		ok, fails := job("ok", nil), job("fails", map[string]string{simulateAnnotation: "fail"})
		Expect(k8sClient.Create(ctx, ok)).To(Succeed())
		Expect(k8sClient.Create(ctx, fails)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ok), ok)).To(Succeed())
			g.Expect(jobCondition(ok, batchv1.JobComplete)).To(BeTrue())
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(fails), fails)).To(Succeed())
			g.Expect(jobCondition(fails, batchv1.JobFailed)).To(BeTrue())
		}).Should(Succeed())
		Expect(jobCondition(fails, batchv1.JobComplete)).To(BeFalse())
	})

	DescribeTable("keeps a failing pod not Ready",
		func(image string, annotations map[string]string, reason string) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "failing", Annotations: annotations},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}},
			}
			Expect(k8sClient.Create(ctx, pod)).To(Succeed())
			notReady := func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
				g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
				status := pod.Status.ContainerStatuses[0]
				g.Expect(status.Ready).To(BeFalse())
				g.Expect(status.State.Waiting).NotTo(BeNil())
				g.Expect(status.State.Waiting.Reason).To(Equal(reason))
				g.Expect(pod.Status.Conditions).To(ContainElement(And(
					HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionFalse))))
			}
			Eventually(notReady).Should(Succeed())
			Consistently(notReady, "2s").Should(Succeed())
		},
		Entry("an image tagged does-not-exist", "nginx:does-not-exist", nil, "ErrImagePull"),
		Entry("a pod marked to crash-loop", "nginx:1.27", map[string]string{simulateAnnotation: "crash-loop"}, "CrashLoopBackOff"),
	)
})
