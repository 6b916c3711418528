package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
)

// floodSize is how many OperatorVersions the flood's author creates at
// once, each of whose templates renders until the render timeout: in the
// webhook and again in verification, 2 s of a render slot each time.
const floodSize = 12

// timedInstall is how long an admin's install of the tenant package into
// ns takes, from the OperatorVersion's create to its Instance's deploy
// plan complete.
func timedInstall(ctx context.Context, ns string) time.Duration {
	GinkgoHelper()
	start := time.Now()
	i := install(ctx, ns, filepath.Join("testdata", "tenant"), "victim", nil)
	deleteAfterSpec(i)
	Eventually(func(g Gomega) {
		got := &kudov1beta1.Instance{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
		g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
	}).WithPolling(50 * time.Millisecond).Should(Succeed())
	return time.Since(start)
}

// flood creates, as a package author of its own namespace, floodSize
// OperatorVersions whose template renders until the render timeout, all at
// once; done is closed when the creates have returned.
func flood(ctx context.Context, ns string) (done <-chan struct{}) {
	GinkgoHelper()
	p, err := packages.Read(filepath.Join("testdata", "attacker"))
	Expect(err).NotTo(HaveOccurred())
	op, template, err := p.Convert(ns)
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient.Create(ctx, op)).To(Succeed())
	template.Spec.Templates["value.yaml"] = "{{ range 1000000000000 }}{{ end }}"
	var creating sync.WaitGroup
	for n := range floodSize {
		ov := template.DeepCopy()
		ov.Spec.Version = fmt.Sprintf("0.0.%d", n)
		ov.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: op.Name + "-" + ov.Spec.Version}
		creating.Go(func() {
			// The webhook may time out on it: the flood's author's loss.
			_ = k8sClient.Create(ctx, ov)
		})
	}
	returned := make(chan struct{})
	go func() {
		creating.Wait()
		close(returned)
	}()
	return returned
}

// floodDelaysOnlyItsSender is attack 3 of issue 62: a package author's
// OperatorVersions, each rendering until its timeout, filled the verify
// workers and the render slots, and another tenant's install waited
// behind them. Now the slots go to namespaces in turn, a render handing
// its slot on whenever another namespace's waits, and a namespace has 2
// of the 4 verify workers: the victim installs within twice the time it
// took before the flood, or a second more on a machine whose two cores
// the flood's renders and the control plane share.
func floodDelaysOnlyItsSender(lockdown bool) {
	GinkgoHelper()
	ctx := context.Background()
	before := managerRestarts(ctx)
	idle := timedInstall(ctx, openNamespace(ctx, lockdown))

	flooding := flood(ctx, openNamespace(ctx, lockdown))
	DeferCleanup(func() { <-flooding })
	// The flood's first renders are under way.
	time.Sleep(time.Second)
	flooded := timedInstall(ctx, openNamespace(ctx, lockdown))
	AddReportEntry("install of the tenant package, idle and under a flood", fmt.Sprintf("idle %s, flooded %s", idle, flooded))
	// The flood's creates wait for the webhook's renders, 2 s each in
	// turn: the victim installed while they did.
	Expect(flooding).NotTo(BeClosed(), "the flood was over before the victim installed")
	Expect(flooded).To(BeNumerically("<=", max(2*idle, idle+time.Second)),
		"idle %s, under the flood %s", idle, flooded)
	Eventually(flooding).Should(BeClosed())
	Expect(managerRestarts(ctx)).To(Equal(before), "a manager pod restarted or was replaced")
}
