package controllers_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// timeoutForTest is the web step's timeout: short, for the test's sake.
const timeoutForTest = 2 * time.Second

// A Deployment never becomes available in envtest (no controllers) until
// the test says so.
const webTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Name }}-web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`

// makeAvailable reports the Deployment available, as its controller would.
func makeAvailable(ctx context.Context, key types.NamespacedName) {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(k8sClient.Get(ctx, key, d)).To(Succeed())
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		},
	}
	Expect(k8sClient.Status().Update(ctx, d)).To(Succeed())
}

var _ = Describe("Plan timeouts and retry", func() {
	It("ends a step that never becomes healthy past its timeout, naming what it waited for, and resumes there when retried", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		web := step("web", "web")
		web.Timeout = &metav1.Duration{Duration: timeoutForTest}
		ov := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "timed-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator:   corev1.ObjectReference{Name: "timed", Kind: "Operator"},
				Version:    "0.1.0",
				Templates:  map[string]string{"a.yaml": fmt.Sprintf(configMapTemplate, "a"), "web.yaml": webTemplate},
				Parameters: []kudov1beta1.Parameter{{Name: "GREETING"}},
				Tasks:      []kudov1beta1.Task{applyTask("a", "a.yaml"), applyTask("web", "web.yaml")},
				Plans: map[string]kudov1beta1.Plan{
					"deploy": plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("a", "a"), web)),
				},
			},
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		Expect(k8sClient.Create(ctx, newInstance(ns, "timed", ov.Name))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "timed"}

		var failed *kudov1beta1.Instance
		Eventually(func(g Gomega) {
			failed = getInstance(ctx, g, key)
			g.Expect(failed.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionFatalError))
		}).Should(Succeed())
		steps := failed.Status.PlanStatus["deploy"].Phases[0].Steps
		Expect(steps[0].Status).To(Equal(kudov1beta1.ExecutionComplete))
		Expect(steps[1].Status).To(Equal(kudov1beta1.ExecutionFatalError))
		Expect(steps[1].Message).To(Equal(fmt.Sprintf("step web timed out after %s: waiting for Deployment timed-web: Replicas: 0/1", timeoutForTest)))
		Expect(steps[1].StartedAt.Add(timeoutForTest)).To(BeTemporally("<=", failed.Status.PlanStatus["deploy"].LastUpdatedTimestamp.Time))

		makeAvailable(ctx, types.NamespacedName{Namespace: ns, Name: "timed-web"})
		patch := client.MergeFrom(failed.DeepCopy())
		failed.Spec.PlanExecution = kudov1beta1.PlanExecution{
			PlanName: "deploy", UID: failed.Status.PlanStatus["deploy"].UID, Status: kudov1beta1.ExecutionRetry}
		Expect(k8sClient.Patch(ctx, failed, patch)).To(Succeed())

		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			ps := got.Status.PlanStatus["deploy"]
			g.Expect(ps.Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(ps.UID).To(Equal(failed.Status.PlanStatus["deploy"].UID))
			g.Expect(ps.Phases[0].Steps[0].StartedAt.Time).To(Equal(steps[0].StartedAt.Time), "the completed step ran again")
			g.Expect(got.Spec.PlanExecution).To(Equal(kudov1beta1.PlanExecution{}))
		}).Should(Succeed())
		events := &corev1.EventList{}
		Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		Expect(events.Items).To(ContainElement(And(HaveField("Reason", "PlanRetried"),
			HaveField("Message", "Plan deploy resumed from its failed steps"))))
	})
})
