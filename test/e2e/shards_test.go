package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// The shard manager's metrics, beside the unsharded one's.
const shardMetricsAddress = "127.0.0.1:16652"

// plansStarted reads kudo_ng_plans_started_total of an operator's deploy
// plan from a manager's metrics endpoint: which manager started a plan.
func plansStarted(g Gomega, address, operator string) float64 {
	resp, err := http.Get("http://" + address + "/metrics")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	line := regexp.MustCompile(`(?m)^kudo_ng_plans_started_total\{operator="` + regexp.QuoteMeta(operator) + `",plan="deploy"\} (\S+)$`)
	m := line.FindSubmatch(body)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseFloat(string(m[1]), 64)
	g.Expect(err).NotTo(HaveOccurred())
	return n
}

var _ = Describe("Managers sharded by label", Ordered, func() {
	const shard = "two"
	var (
		ctx         context.Context
		shardCmd    *exec.Cmd
		shardOutput *gbytes.Buffer
	)
	BeforeAll(func() {
		ctx = context.Background()
		shardOutput = gbytes.NewBuffer()
		// The same manager, for the Instances labelled with its shard; the
		// unsharded one serves the webhooks.
		shardCmd = startManagerProcess([]string{managerArgs[0], "--kubeconfig", managerKubeconfigPath(), "--leader-elect=false",
			"--health-probe-bind-address=0", "--metrics-bind-address=" + shardMetricsAddress, "--metrics-secure=false",
			"--enable-webhooks=false", "--shard=" + shard}, shardOutput)
		DeferCleanup(func() { stopManagerProcess(shardCmd) })
	})
	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			_ = os.WriteFile(filepath.Join(cluster.Root, "bin", "e2e-shard-manager.log"), shardOutput.Contents(), 0o644)
			AddReportEntry("shard manager log", "bin/e2e-shard-manager.log")
		}
	})

	// create makes an Instance of the OperatorVersion, in a shard or none.
	create := func(ns, name string, ov *kudov1beta1.OperatorVersion, labels map[string]string) *kudov1beta1.Instance {
		GinkgoHelper()
		i := &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}},
		}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		return i
	}
	inShard := map[string]string{kudov1beta1.ShardLabel: shard}

	It("reconciles each Instance in the manager of its shard only", func() {
		ns := newNamespace(ctx)
		_, ov := installPackage(ctx, ns, filepath.Join("testdata", "admission"))
		unshardedBefore, shardBefore := plansStarted(Default, metricsAddress, "admission"), plansStarted(Default, shardMetricsAddress, "admission")

		planStatus(ctx, create(ns, "sharded", ov, inShard), "deploy", kudov1beta1.ExecutionComplete)
		Eventually(func(g Gomega) {
			g.Expect(plansStarted(g, shardMetricsAddress, "admission")).To(Equal(shardBefore + 1))
		}).Should(Succeed())
		Expect(plansStarted(Default, metricsAddress, "admission")).To(Equal(unshardedBefore), "the unsharded manager ran the shard's plan")

		planStatus(ctx, create(ns, "unsharded", ov, nil), "deploy", kudov1beta1.ExecutionComplete)
		Eventually(func(g Gomega) {
			g.Expect(plansStarted(g, metricsAddress, "admission")).To(Equal(unshardedBefore + 1))
		}).Should(Succeed())
		Expect(plansStarted(Default, shardMetricsAddress, "admission")).To(Equal(shardBefore+1), "the shard ran an unsharded plan")

		// Each object carries its Instance's shard, by which only that
		// shard's manager caches it.
		for name, shardLabel := range map[string]string{"sharded": shard, "unsharded": ""} {
			cm := &corev1.ConfigMap{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-config"}, cm)).To(Succeed())
			Expect(cm.Labels[kudov1beta1.ShardLabel]).To(Equal(shardLabel), "the shard label of %s's ConfigMap", name)
		}
	})

	It("hands an Instance relabelled mid-plan to the other manager, which finishes the plan without running it again", func() {
		ns := newNamespace(ctx)
		_, ov := installPackage(ctx, ns, filepath.Join("testdata", "handover"))
		i := create(ns, "moving", ov, inShard)
		key := client.ObjectKeyFromObject(i)
		var started *kudov1beta1.Instance
		Eventually(func(g Gomega) {
			started = &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, key, started)).To(Succeed())
			phases := started.Status.PlanStatus["deploy"].Phases
			g.Expect(phases).NotTo(BeEmpty())
			steps := phases[0].Steps
			g.Expect(steps[0].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(steps[1].Status).To(Equal(kudov1beta1.ExecutionInProgress))
		}).Should(Succeed())
		Expect(plansStarted(Default, shardMetricsAddress, "handover")).To(BeEquivalentTo(1))

		patch := client.MergeFrom(started.DeepCopy())
		delete(started.Labels, kudov1beta1.ShardLabel)
		Expect(k8sClient.Patch(ctx, started, patch)).To(Succeed())
		labelNodeForTest(ctx, "kwok-node-1", "handover.kudo-ng.dev/open")

		done := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		ps := done.Status.PlanStatus["deploy"]
		Expect(ps.UID).To(Equal(started.Status.PlanStatus["deploy"].UID))
		Expect(ps.Phases[0].Steps[0].StartedAt.Time).To(BeTemporally("==", started.Status.PlanStatus["deploy"].Phases[0].Steps[0].StartedAt.Time),
			"the completed step ran again")
		Expect(done.Status.Revisions).To(HaveLen(1))
		Expect(plansStarted(Default, metricsAddress, "handover")).To(BeZero(), "the unsharded manager started the plan again")
		Expect(planStarts(ctx, ns, i.Name)).To(Equal(1))
	})
})
