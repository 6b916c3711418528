package e2e

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/corpus"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/health/*.golden from what the CLI prints")

// stable replaces what changes from run to run in the CLI's output: times,
// ages and the spec's namespace.
func stable(out, ns string) string {
	out = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`).ReplaceAllString(out, "TIME")
	out = regexp.MustCompile(`\(\S+ ago\)`).ReplaceAllString(out, "(AGE ago)")
	return strings.ReplaceAll(out, ns, "NAMESPACE")
}

func expectGolden(name, out string) {
	GinkgoHelper()
	golden := filepath.Join("testdata", "health", name+".golden")
	if *updateGolden {
		Expect(os.WriteFile(golden, []byte(out), 0o644)).To(Succeed())
	}
	want, err := os.ReadFile(golden)
	Expect(err).NotTo(HaveOccurred())
	Expect(out).To(Equal(string(want)), "%s differs", golden)
}

// setWidgetStatus writes the Widget's status, as its controller would: the
// local control plane runs none.
func setWidgetStatus(ctx context.Context, ns string, status map[string]any) {
	GinkgoHelper()
	w := &unstructured.Unstructured{}
	w.SetAPIVersion("example.kudo.dev/v1")
	w.SetKind("Widget")
	Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w"}, w) }).Should(Succeed())
	patch := client.MergeFrom(w.DeepCopy())
	w.Object["status"] = status
	Expect(k8sClient.Status().Patch(ctx, w, patch)).To(Succeed())
}

var _ = Describe("Health rules shipped in a package", func() {
	It("waits on the Widget's status.phase, says why in plan status and explain, and fails on the rule's failed expression", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		widget := filepath.Join(corpus.Examples(), "widget", "operator")
		Expect(mustKudo(ns, "package", "verify", widget)).To(ContainSubstring("package is valid"))

		// The install's output is read while it waits, so that the widget
		// turns Ready only once the wait has printed why it waited.
		install, err := cluster.KudoCommand(ns, "install", widget, "--instance", "w", "--wait", "--wait-time", "120")
		Expect(err).NotTo(HaveOccurred())
		printed := gbytes.NewBuffer()
		install.Stdout, install.Stderr = printed, printed
		Expect(install.Start()).To(Succeed())
		installed := make(chan error, 1)
		go func() { installed <- install.Wait() }()
		waitingLine := `waiting for Widget w: healthChecks[0].current: status.phase == 'Ready' does not hold yet (status.phase="Pending")`
		Eventually(func(g Gomega) {
			i := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w"}, i)).To(Succeed())
			steps := i.Status.PlanStatus["deploy"].Phases
			g.Expect(steps).NotTo(BeEmpty())
			g.Expect(steps[0].Steps[1].WaitingOn).NotTo(BeEmpty())
		}).Should(Succeed())
		setWidgetStatus(ctx, ns, map[string]any{"phase": "Pending"})
		Eventually(func(g Gomega) {
			g.Expect(mustKudo(ns, "plan", "status", "--instance", "w")).To(ContainSubstring(`status.phase="Pending"`))
		}).Should(Succeed())
		expectGolden("plan-status-waiting", stable(mustKudo(ns, "plan", "status", "--instance", "w"), ns))
		expectGolden("explain-waiting", stable(mustKudo(ns, "explain", "--instance", "w"), ns))

		Eventually(func() string { return string(printed.Contents()) }).Should(ContainSubstring(waitingLine))

		setWidgetStatus(ctx, ns, map[string]any{"phase": "Ready", "size": int64(1)})
		Eventually(installed).WithTimeout(2*time.Minute).Should(Receive(BeNil()), "%s", printed.Contents())
		Expect(string(printed.Contents())).To(ContainSubstring("instance w is deployed"))
		Expect(mustKudo(ns, "explain", "--instance", "w")).To(MatchRegexp(`Ready: True \(ResourcesReady\)`))

		setWidgetStatus(ctx, ns, map[string]any{"phase": "Failed", "size": int64(1)})
		out, err := kudo(ns, "plan", "trigger", "--name", "deploy", "--instance", "w", "--wait", "--wait-time", "120")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring(`Widget w has failed: healthChecks[0].failed: status.phase == 'Failed' holds (status.phase="Failed")`))
		expectGolden("explain-failed", stable(mustKudo(ns, "explain", "--instance", "w"), ns))

		mustKudo(ns, "uninstall", "--instance", "w", "--wait")
	})
})
