package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// readyOf reads an Instance's Ready condition.
func readyOf(ctx context.Context, g Gomega, ns, name string) metav1.Condition {
	return *readyConditionOf(ctx, g, &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
}

// eventReasons counts the events on an Instance by reason.
func eventReasons(ctx context.Context, g Gomega, ns, name string) map[string]int32 {
	events := &corev1.EventList{}
	g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	seen := map[string]int32{}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "Instance" && e.InvolvedObject.Name == name {
			seen[e.Reason] += max(e.Count, 1)
		}
	}
	return seen
}

func deployment(ctx context.Context, g Gomega, ns, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
	return d
}

// scale sets a Deployment's replicas through its scale subresource, as
// kubectl scale and the HorizontalPodAutoscaler do, as field manager.
func scale(ctx context.Context, ns, name, manager string, replicas int32) {
	GinkgoHelper()
	d := deployment(ctx, Default, ns, name)
	s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	Expect(k8sClient.SubResource("scale").Update(ctx, d, client.WithSubResourceBody(s), client.FieldOwner(manager))).To(Succeed())
}

var _ = Describe("What a plan applied stays as applied", func() {
	const instance = "hello"

	It("is not Ready within seconds of its Deployment's deletion, naming it; with correction on it comes back, Ready again", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		mustKudo(ns, "install", hello, "--instance", instance, "--wait")

		original := deployment(ctx, Default, ns, instance)
		Expect(k8sClient.Delete(ctx, original)).To(Succeed())
		deleted := time.Now()
		Eventually(func(g Gomega) {
			c := readyOf(ctx, g, ns, instance)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal("Missing"))
			g.Expect(c.Message).To(Equal(fmt.Sprintf("Deployment %s/hello is missing", ns)))
		}, "10s").Should(Succeed())
		AddReportEntry("deletion to Ready False", time.Since(deleted).String())
		Expect(mustKudo(ns, "plan", "status", "--instance", instance)).To(
			ContainSubstring(fmt.Sprintf("Not ready (Missing): Deployment %s/hello is missing", ns)))
		out, err := cluster.Kubectl("get", "instances", "-n", ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`hello\s+hello-1.27.0-0.1.0\s+deploy\s+COMPLETE\s+False\s+Missing`))
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: instance}, &appsv1.Deployment{}))
		}, "2s").Should(BeTrue(), "without correction, nothing is applied again")

		_, err = cluster.Kubectl("annotate", "-n", ns, "instance", instance, kudov1beta1.DriftCorrectionAnnotation+"=true")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			g.Expect(deployment(ctx, g, ns, instance).UID).NotTo(Equal(original.UID))
			c := readyOf(ctx, g, ns, instance)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal("ResourcesReady"))
		}, "30s").Should(Succeed())

		By("scale: put back")
		scale(ctx, ns, instance, "kubectl", 5)
		Eventually(func(g Gomega) {
			g.Expect(*deployment(ctx, g, ns, instance).Spec.Replicas).To(BeEquivalentTo(2))
		}, "10s").Should(Succeed())

		By("an edited image: put back")
		d := deployment(ctx, Default, ns, instance)
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.Containers[0].Image = "nginx:does-not-exist"
		Expect(k8sClient.Patch(ctx, d, patch, client.FieldOwner("kubectl-edit"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(deployment(ctx, g, ns, instance).Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"))
			g.Expect(readyOf(ctx, g, ns, instance).Status).To(Equal(metav1.ConditionTrue))
			events := eventReasons(ctx, g, ns, instance)
			g.Expect(events["DriftCorrected"]).To(BeNumerically(">=", 3))
			g.Expect(events).To(HaveKey("Missing"))
			g.Expect(events).To(HaveKey("ResourcesReady"))
		}, "30s").Should(Succeed())
		Expect(mustKudo(ns, "plan", "status", "--instance", instance)).NotTo(ContainSubstring("Not ready"))
	})

	It("does not fight an autoscaler over replicas the template does not set", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		mustKudo(ns, "install", filepath.Join("testdata", "autoscaled"), "--instance", "auto", "--wait")
		_, err := cluster.Kubectl("annotate", "-n", ns, "instance", "auto", kudov1beta1.DriftCorrectionAnnotation+"=true")
		Expect(err).NotTo(HaveOccurred())
		scale(ctx, ns, "auto-web", "horizontal-pod-autoscaler", 3)
		Consistently(func(g Gomega) {
			g.Expect(*deployment(ctx, g, ns, "auto-web").Spec.Replicas).To(BeEquivalentTo(3))
			g.Expect(readyOf(ctx, g, ns, "auto").Reason).NotTo(BeElementOf("Drifted", "DriftFight"))
			g.Expect(eventReasons(ctx, g, ns, "auto")).NotTo(HaveKey("DriftCorrected"))
		}, "5s").Should(Succeed())
		Eventually(func(g Gomega) { g.Expect(readyOf(ctx, g, ns, "auto").Status).To(Equal(metav1.ConditionTrue)) }).Should(Succeed())
	})

	It("leaves nothing behind after kubectl kudo uninstall --wait: ClusterRole, ClusterRoleBinding, CRD, custom resource, an object in another namespace", func() {
		ctx := context.Background()
		ns, other := newNamespace(ctx), newNamespace(ctx)
		mustKudo(ns, "install", filepath.Join("testdata", "wide"), "--instance", "wide", "-p", "OTHER_NAMESPACE="+other, "--wait")
		name := ns + "-wide-widgets"
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRole{})).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRoleBinding{})).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: other, Name: "wide-elsewhere"}, &corev1.ConfigMap{})).To(Succeed())

		mustKudo(ns, "uninstall", "--instance", "wide", "--wait")
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRole{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRoleBinding{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: other, Name: "wide-elsewhere"}, &corev1.ConfigMap{}))).To(BeTrue())
		widget := &unstructured.Unstructured{}
		widget.SetAPIVersion("e2e.kudo-ng.dev/v1")
		widget.SetKind("Widget")
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "wide"}, widget)
		Expect(apierrors.IsNotFound(err) || meta.IsNoMatchError(err)).To(BeTrue(), "%v", err)
		Eventually(func(g Gomega) {
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "widgets.e2e.kudo-ng.dev"}, crd))).To(BeTrue())
		}, "30s").Should(Succeed())
	})

	It("does not take or delete another Instance's cluster-scoped object of the same name, and says whose it is", func() {
		ctx := context.Background()
		first, second := newNamespace(ctx), newNamespace(ctx)
		dir := filepath.Join("testdata", "shared-role")
		mustKudo(first, "install", dir, "--instance", "shared", "--wait")
		role := &rbacv1.ClusterRole{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "e2e-shared-reader"}, role)).To(Succeed())
		Expect(role.Annotations).To(HaveKeyWithValue(kudov1beta1.OwnerAnnotation, first+"/shared"))

		i := install(ctx, second, dir, "shared", nil)
		Eventually(func(g Gomega) {
			_, step := firstDeployStep(ctx, g, i)
			g.Expect(step.Message).To(ContainSubstring(fmt.Sprintf(
				"ClusterRole e2e-shared-reader is Instance %s/shared's: two Instances render it", first)))
		}).Should(Succeed())
		mustKudo(second, "uninstall", "--instance", "shared", "--wait")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "e2e-shared-reader"}, role)).To(Succeed())
		Expect(role.Annotations).To(HaveKeyWithValue(kudov1beta1.OwnerAnnotation, first+"/shared"))

		mustKudo(first, "uninstall", "--instance", "shared", "--wait")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "e2e-shared-reader"}, role))
		}).Should(BeTrue())
	})

	It("prunes the object of a conditional template that kubectl kudo update switched off", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		mustKudo(ns, "install", filepath.Join("testdata", "prune-v1"), "--instance", "cond", "--wait")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cond-c"}, &corev1.ConfigMap{})).To(Succeed())

		mustKudo(ns, "update", "--instance", "cond", "-p", "EXTRA=false", "--wait")
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cond-c"}, &corev1.ConfigMap{}))).To(BeTrue())
		}).Should(Succeed())
		for _, kept := range []string{"cond-a", "cond-b"} {
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: kept}, &corev1.ConfigMap{})).To(Succeed())
		}
		Expect(mustKudo(ns, "plan", "status", "--instance", "cond")).To(ContainSubstring(fmt.Sprintf("Plan deploy pruned: ConfigMap %s/cond-c", ns)))
	})

	It("loses nothing when the manager restarts between an upgrade's apply and its prune", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		mustKudo(ns, "install", filepath.Join("testdata", "prune-v1"), "--instance", "prune", "--wait")
		i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prune"}}

		mustKudo(ns, "upgrade", filepath.Join("testdata", "prune-v2"), "--instance", "prune")
		Eventually(func(g Gomega) {
			got, _ := firstDeployStep(ctx, g, i)
			g.Expect(got.Status.AppliedOperatorVersion).To(Equal("prune-0.2.0"))
			steps := got.Status.PlanStatus["deploy"].Phases[0].Steps
			g.Expect(steps[0].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(steps[1].Status).To(Equal(kudov1beta1.ExecutionInProgress))
			g.Expect(got.Status.Inventory).To(ContainElement(HaveField("Stale", ConsistOf(HaveField("Name", "prune-b")))))
		}).Should(Succeed())

		stopManager()
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "prune-b"}, &corev1.ConfigMap{})).To(Succeed())
		startManager()

		d := deployment(ctx, Default, ns, "prune-gate")
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.Containers[0].Image = "nginx:1.7.9"
		Expect(k8sClient.Patch(ctx, d, patch)).To(Succeed())
		got := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "prune-b"}, &corev1.ConfigMap{}))).To(BeTrue())
		}).Should(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "prune-a"}, &corev1.ConfigMap{})).To(Succeed())
		Expect(mustKudo(ns, "plan", "status", "--instance", "prune")).To(ContainSubstring(fmt.Sprintf("Plan deploy pruned: ConfigMap %s/prune-b", ns)))
		Expect(got.Status.PlanStatus["deploy"].UID).NotTo(BeEmpty())
		Expect(ptr.Deref(deployment(ctx, Default, ns, "prune-gate").Spec.Replicas, 0)).To(BeEquivalentTo(1))
	})
})
