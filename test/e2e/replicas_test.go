package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
)

// killContainer kills a pod's first container with SIGKILL through the real
// node's containerd, as a crash or the OOM killer would end it: no shutdown,
// no lease released, and the pod keeps its address and endpoint until the
// kubelet sees the container gone.
func killContainer(pod *corev1.Pod) {
	GinkgoHelper()
	id, found := strings.CutPrefix(pod.Status.ContainerStatuses[0].ContainerID, "containerd://")
	Expect(found).To(BeTrue(), "container %s", pod.Status.ContainerStatuses[0].ContainerID)
	socket := filepath.Join(cluster.Dir, "node", "containerd.sock")
	out, err := exec.Command("ctr", "--address", socket, "-n", "k8s.io", "tasks", "kill", "--signal", "SIGKILL", id).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
}

// restarted tells whether a pod's first container restarted since pod was
// read, and is ready again.
func restarted(ctx context.Context, pod *corev1.Pod) bool {
	now := &corev1.Pod{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), now); err != nil || len(now.Status.ContainerStatuses) == 0 {
		return false
	}
	status := now.Status.ContainerStatuses[0]
	return status.RestartCount > pod.Status.ContainerStatuses[0].RestartCount && status.Ready
}

var _ = Describe("The manager's webhooks, while its leader's process is killed with SIGKILL,", Ordered, func() {
	var ctx context.Context
	BeforeAll(func() {
		ctx = context.Background()
		loadImage(managerImage)
		DeferCleanup(handOverToClusterManager())
		mustKudo("default", "init", "--unsafe-self-signed-webhook-ca", "--wait",
			"--kudo-image", managerImage, "--kudo-image-pull-policy", "Never")
	})

	It("accept every Instance update sent until another replica leads and the killed one is back, and the plan it killed completes once", func() {
		// Killed mid-plan: the check Job sleeps while the leader is gone.
		slow := install(ctx, newNamespace(ctx), filepath.Join("testdata", "realnode"), "slow", map[string]string{"SLEEP": "30"})
		// Each update changes a parameter: the webhooks default and
		// validate it against the Instance's OperatorVersion.
		updated := install(ctx, newNamespace(ctx), hello, "updated", nil)
		planStatus(ctx, updated, "deploy", kudov1beta1.ExecutionComplete)
		Eventually(func(g Gomega) {
			_, step := firstDeployStep(ctx, g, slow)
			g.Expect(step.Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(jobUIDs(ctx, g, slow.Namespace, "slow-check")).To(HaveLen(1))
		}).Should(Succeed())

		var leading *corev1.Pod
		Eventually(func(g Gomega) { _, leading = managerPods(ctx, g, managerImage) }).Should(Succeed())
		killedHolder := leader(ctx, Default)
		killed := time.Now()
		killContainer(leading)

		// One update after another with kubectl kudo update, which sends a
		// write again only when the API server could not reach the webhooks
		// (it admitted nothing): while the Service still routes a new
		// connection to the killed replica, a second or so. Those resends are
		// counted apart from refusals, which reach the user.
		var (
			sent, replicas, resent int
			refusals               []string
			takeover               time.Duration
			newHolder              string
		)
		for takeover == 0 || !restarted(ctx, leading) {
			Expect(time.Since(killed)).To(BeNumerically("<", 2*time.Minute),
				"no other replica led, or the killed one did not come back, in 2 minutes: %d updates sent", sent)
			sent++
			replicas = 1 + sent%3
			out, err := kudo(updated.Namespace, "update", "--instance", updated.Name, "-p", fmt.Sprintf("replicas=%d", replicas))
			if err != nil {
				refusals = append(refusals, fmt.Sprintf("%s: %v: %s", time.Since(killed).Round(time.Millisecond), err, out))
			}
			resent += strings.Count(out, "could not reach an admission webhook")
			if holder := leader(ctx, Default); takeover == 0 && holder != "" && holder != killedHolder {
				takeover, newHolder = time.Since(killed), holder
			}
			time.Sleep(100 * time.Millisecond)
		}
		AddReportEntry("updates sent while the leader was killed", fmt.Sprintf("%d in %s, %d refused; %d writes sent again",
			sent, time.Since(killed).Round(time.Millisecond), len(refusals), resent))
		AddReportEntry("another manager led after", fmt.Sprintf("%s: %s (killed: %s)", takeover.Round(time.Millisecond), newHolder, killedHolder))
		Expect(refusals).To(BeEmpty())

		got := planStatus(ctx, slow, "deploy", kudov1beta1.ExecutionComplete)
		Expect(got.Status.PlanStatus["deploy"].Phases[0].Steps[1].Status).To(Equal(kudov1beta1.ExecutionComplete))
		Expect(jobUIDs(ctx, Default, slow.Namespace, "slow-check")).To(HaveLen(1), "the check Job ran more than once")
		Expect(planStarts(ctx, slow.Namespace, slow.Name)).To(Equal(1), "plan deploy started more than once")

		// The run the last update started completes, with its value.
		Eventually(func(g Gomega) {
			got := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(updated), got)).To(Succeed())
			g.Expect(engine.Settled(got)).To(BeTrue())
			ps := got.Status.PlanStatus["deploy"]
			g.Expect(ps.Status).To(Equal(kudov1beta1.ExecutionComplete), "plan deploy: %s", describe(&ps))
			g.Expect(got.Status.AppliedParameters).To(HaveKeyWithValue("replicas", fmt.Sprint(replicas)))
		}).Should(Succeed())
		Expect(deployment(ctx, Default, updated.Namespace, updated.Name).Spec.Replicas).To(HaveValue(BeEquivalentTo(replicas)))
	})
})
