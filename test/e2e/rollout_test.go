package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// fleetVersion is test/e2e/testdata/fleet at a version.
func fleetVersion(version string) string {
	return filepath.Join("testdata", "fleet", version, "operator")
}

// fleetState is what each Instance of the fleet runs, and its Deployment's
// generation, by name.
func fleetState(ctx context.Context, g Gomega, ns string, names []string) map[string]string {
	out := map[string]string{}
	for _, name := range names {
		i := &kudov1beta1.Instance{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, i)).To(Succeed())
		d := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
		out[name] = fmt.Sprintf("%s generation %d", i.Spec.OperatorVersion.Name, d.Generation)
	}
	return out
}

// ranVersions are the OperatorVersions of each revision of the Instance,
// and how each ended.
func ranVersions(ctx context.Context, ns, name string) []string {
	GinkgoHelper()
	i := &kudov1beta1.Instance{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, i)).To(Succeed())
	var out []string
	for _, r := range i.Status.Revisions {
		out = append(out, r.OperatorVersion+" "+string(r.Status))
	}
	return out
}

const rolloutManifest = `apiVersion: kudo.dev/v1alpha1
kind: Rollout
metadata:
  name: %s
spec:
  operator: fleet
  operatorVersion: %s
  strategy:
    waves: [1, 25%%]
    maxParallel: 4
    maxUnavailable: 4
    bakeTime: 5s
    onFailure: Rollback
`

var _ = Describe("A Rollout of a fleet", func() {
	It("moves 12 Instances in 3 waves, then stops a bad version at its canary and rolls it back, the other 11 untouched", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		mustKudo(ns, "install", fleetVersion("0.1.0"), "--skip-instance")
		var names []string
		for n := 1; n <= 12; n++ {
			names = append(names, fmt.Sprintf("f%02d", n))
			mustKudo(ns, "install", "fleet", "--in-cluster", "--instance", names[n-1])
		}
		for _, name := range names {
			out, err := kubectlIn(ns, "", "wait", "--for=condition=Ready", "instance/"+name, "--timeout=5m")
			Expect(err).NotTo(HaveOccurred(), out)
		}
		mustKudo(ns, "install", fleetVersion("0.2.0"), "--skip-instance")
		mustKudo(ns, "install", fleetVersion("0.3.0"), "--skip-instance")

		By("previewing the rollout: its waves, and what each Instance's upgrade would change")
		manifest := filepath.Join(GinkgoT().TempDir(), "good.yaml")
		Expect(os.WriteFile(manifest, []byte(fmt.Sprintf(rolloutManifest, "good", "0.2.0")), 0o600)).To(Succeed())
		out, err := kudo(ns, "rollout", "preview", "-f", manifest)
		Expect(exitCode(err)).To(Equal(1), out)
		_, _ = fmt.Fprintf(GinkgoWriter, "$ kubectl kudo rollout preview -f good.yaml\n%s", out)
		Expect(out).To(ContainSubstring("Wave 1: f01\n"))
		Expect(out).To(ContainSubstring("Wave 2: f02, f03, f04\n"))
		Expect(out).To(ContainSubstring("Wave 3: f05, f06, f07, f08, f09, f10, f11, f12\n"))
		for _, name := range names {
			Expect(out).To(MatchRegexp(`\n%s/%s +deploy +0 +1 +0 +0 +0 +0\n`, ns, name))
		}

		By("rolling 0.2.0 out in waves of 1, 3 and 8")
		start := time.Now()
		out, err = kubectlIn(ns, "", "apply", "-f", manifest)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectlIn(ns, "", "wait", "--for=condition=Complete", "rollout/good", "--timeout=10m")
		Expect(err).NotTo(HaveOccurred(), out)
		status := mustKudo(ns, "rollout", "status", "good")
		_, _ = fmt.Fprintf(GinkgoWriter, "good rollout in %s\n$ kubectl kudo rollout status good\n%s", time.Since(start).Round(time.Second), status)
		Expect(status).To(ContainSubstring("12 of 12 Instances upgraded. 12 Instances run 0.2.0"))
		Expect(status).To(MatchRegexp(`\n1 +Complete +f01 +\d+s\n2 +Complete +f02, f03, f04 +\d+s\n3 +Complete +f05, .*f12 +\d+s\n`))
		upgraded := fleetState(ctx, Default, ns, names)
		for _, name := range names {
			Expect(upgraded[name]).To(Equal("fleet-1.27.0-0.2.0 generation 2"), name)
			Expect(ranVersions(ctx, ns, name)).To(Equal([]string{"fleet-1.27.0-0.1.0 COMPLETE", "fleet-1.27.0-0.2.0 COMPLETE"}), name)
		}

		By("rolling 0.3.0 out: its canary never gets ready, times out, and is rolled back")
		start = time.Now()
		out, err = kubectlIn(ns, fmt.Sprintf(rolloutManifest, "bad", "0.3.0"), "apply", "-f", "-")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectlIn(ns, "", "wait", "--for=condition=Stalled", "rollout/bad", "--timeout=5m")
		Expect(err).NotTo(HaveOccurred(), out)
		status = mustKudo(ns, "rollout", "status", "bad")
		_, _ = fmt.Fprintf(GinkgoWriter, "bad rollout stopped in %s\n$ kubectl kudo rollout status bad\n%s", time.Since(start).Round(time.Second), status)
		Expect(status).To(ContainSubstring("Failed: Instance f01: its upgrade plan failed: "))
		Expect(status).To(MatchRegexp(`\n1 +RolledBack +f01 +\d+s\n2 +Pending +f02, f03, f04 +\n3 +Pending +f05, .*f12 +\n`))
		Eventually(func(g Gomega) {
			g.Expect(ranVersions(ctx, ns, "f01")).To(Equal([]string{"fleet-1.27.0-0.1.0 COMPLETE", "fleet-1.27.0-0.2.0 COMPLETE",
				"fleet-1.27.0-0.3.0 FATAL_ERROR", "fleet-1.27.0-0.2.0 COMPLETE"}))
		}, "3m").Should(Succeed())
		after := fleetState(ctx, Default, ns, names)
		Expect(after["f01"]).To(Equal("fleet-1.27.0-0.2.0 generation 4"), "0.3.0's pod template, then 0.2.0's again")
		for _, name := range names[1:] {
			Expect(after[name]).To(Equal(upgraded[name]), "%s is untouched", name)
			Expect(ranVersions(ctx, ns, name)).To(HaveLen(2), name)
		}
		_, _ = fmt.Fprintf(GinkgoWriter, "$ kubectl kudo plan history --instance f01\n%s", mustKudo(ns, "plan", "history", "--instance", "f01"))

		By("showing both rollouts and the fleet in the dashboard")
		u := dashboard(ns)
		tab := browserContext()
		Expect(within(tab, time.Minute, chromedp.Navigate(page(u, "/rollouts/"+ns+"/bad")),
			chromedp.WaitVisible(`[data-state="Stalled"]`), chromedp.WaitVisible(`tr[data-wave="1"][data-phase="RolledBack"]`))).To(Succeed())
		screenshot(tab, "rollout")
		Expect(within(tab, time.Minute, chromedp.Navigate(page(u, "/")),
			chromedp.WaitVisible(`[data-rollout="`+ns+`/good"]`), chromedp.WaitVisible(`tr[data-instance="`+ns+`/f12"]`))).To(Succeed())
		screenshot(tab, "fleet-rollouts")
		Expect(within(tab, 2*time.Minute, chromedp.Navigate(page(u, "/rollouts/"+ns+"/bad/preview")),
			chromedp.WaitVisible(`pre.preview`))).To(Succeed())
		screenshot(tab, "rollout-preview")
	})
})
