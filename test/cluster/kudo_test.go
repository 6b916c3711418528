package cluster

import (
	"context"
	"os/exec"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

var _ = Describe("make install run", Ordered, func() {
	var (
		ctx    context.Context
		ns     string
		output *gbytes.Buffer
	)
	BeforeAll(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		Expect(cluster.Make("install")).To(Succeed())

		// `make run` as a user types it, in a process group of its own so that
		// the manager that `go run` starts is stopped with it.
		output = gbytes.NewBuffer()
		cmd := exec.Command("make", "--no-print-directory", "-C", cluster.Root, "run",
			"RUN_ARGS=--health-probe-bind-address=0 --leader-elect=false")
		cmd.Env = append(cluster.Env(), "WEBHOOK_PORT=16548", "WEBHOOK_DIR="+cluster.Dir+"/webhook")
		cmd.Stdout, cmd.Stderr = output, output
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		Expect(cmd.Start()).To(Succeed())
		DeferCleanup(func() {
			Expect(syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)).To(Succeed())
			_ = cmd.Wait()
		})
		Eventually(output, "3m").Should(gbytes.Say("Starting workers"))
	})

	It("installs KUDO's first-operator and runs its deploy plan", func() {
		kubectl("apply", "-n", ns, "-k", cluster.Root+"/config/samples")

		Eventually(func(g Gomega) {
			ov := &kudov1beta1.OperatorVersion{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "first-operator-0.2.0"}, ov)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(ov.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())

			instance := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "first-operator-instance"}, instance)).To(Succeed())
			g.Expect(instance.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(meta.IsStatusConditionTrue(instance.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())

			deployment := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx-deployment"}, deployment)).To(Succeed())
			g.Expect(deployment.Status.AvailableReplicas).To(BeEquivalentTo(3))
		}).Should(Succeed(), "manager output:\n%s", output.Contents())
	})

	It("shows the printer columns", func() {
		instances := strings.Fields(strings.Split(kubectl("get", "instances", "-n", ns), "\n")[0])
		Expect(instances).To(Equal([]string{"NAME", "OPERATOR", "VERSION", "PLAN", "PLAN", "STATUS", "READY", "REASON", "AGE"}))
		Expect(kubectl("get", "instances", "-n", ns)).To(MatchRegexp(`first-operator-instance\s+first-operator-0\.2\.0\s+deploy\s+COMPLETE\s+True\s+ResourcesReady`))
		Expect(kubectl("get", "instances", "-n", ns, "-o", "wide")).To(MatchRegexp(`ResourcesReady\s+Plan deploy is complete`))

		Expect(kubectl("get", "operatorversions", "-n", ns)).To(MatchRegexp(
			`NAME\s+OPERATOR\s+VERSION\s+APP VERSION\s+READY\s+AGE\nfirst-operator-0\.2\.0\s+first-operator\s+0\.2\.0\s+True`))
		Expect(kubectl("get", "kudo", "-n", ns, "-o", "name")).To(And(
			ContainSubstring("operator.kudo.dev/first-operator"),
			ContainSubstring("operatorversion.kudo.dev/first-operator-0.2.0"),
			ContainSubstring("instance.kudo.dev/first-operator-instance")))
	})
})
