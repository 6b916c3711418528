package e2e

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// dashboard runs kubectl kudo dashboard in ns with args and returns the URL
// it printed, token included; it stops with the spec.
func dashboard(ns string, args ...string) *url.URL {
	GinkgoHelper()
	cmd, err := cluster.KudoCommand(ns, append(args, "dashboard", "--no-open")...)
	Expect(err).NotTo(HaveOccurred())
	cmd.Stderr = GinkgoWriter
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	})
	printed := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if m := regexp.MustCompile(`is at (http://\S+)`).FindStringSubmatch(lines.Text()); m != nil {
				printed <- m[1]
			}
		}
	}()
	var link string
	Eventually(printed, "1m").Should(Receive(&link))
	u, err := url.Parse(link)
	Expect(err).NotTo(HaveOccurred())
	return u
}

// page is the dashboard's page at path, with the token of u.
func page(u *url.URL, path string) string {
	p := *u
	p.Path = path
	return p.String()
}

// browserContext is a tab of Debian's Chromium, headless, started for the
// spec.
func browserContext() context.Context {
	GinkgoHelper()
	chromium, err := exec.LookPath("chromium")
	Expect(err).NotTo(HaveOccurred(), "the dashboard's browser test needs Debian's chromium (make chromium)")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(GinkgoT().TempDir()), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	DeferCleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	DeferCleanup(cancelTab)
	// The first run starts the browser, which lives as long as tab.
	Expect(chromedp.Do(tab)).To(Succeed())
	return tab
}

// screenshot saves the tab's page as NAME.png among the suite's artifacts,
// which outlive its cluster (bin/artifacts/dashboard).
func screenshot(tab context.Context, name string) {
	GinkgoHelper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(cluster.Root, "bin", "artifacts", "dashboard")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)).To(Succeed())
	GinkgoWriter.Printf("screenshot %s\n", filepath.Join(dir, name+".png"))
}

// within runs the actions with a deadline.
func within(tab context.Context, d time.Duration, actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(tab, d)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// evaluate is the value of a JavaScript expression in the tab's page.
func evaluate[T any](tab context.Context, expression string, opts ...chromedp.EvaluateOption) T {
	GinkgoHelper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](expression, opts...))
	Expect(err).NotTo(HaveOccurred())
	return v
}

// slowstart is a package whose deploy plan waits 5 seconds for its
// Deployment to be available: long enough for a page to show it running.
var slowstart = filepath.Join("testdata", "slowstart", "operator")

var _ = Describe("The dashboard", func() {
	It("shows an Instance's plan turn from IN_PROGRESS to COMPLETE without a reload, in a real browser", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		u := dashboard(ns)

		By("refusing a request without its token")
		res, err := http.Get(page(&url.URL{Scheme: u.Scheme, Host: u.Host}, "/"))
		Expect(err).NotTo(HaveOccurred())
		_ = res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusForbidden))

		tab := browserContext()
		By("opening the page of an Instance that does not exist yet")
		Expect(within(tab, time.Minute, chromedp.Navigate(page(u, "/instances/"+ns+"/web")),
			chromedp.WaitVisible(`[data-found="false"]`))).To(Succeed())
		// The page records the deploy plan's statuses as it shows them, and
		// a mark a reload would lose.
		evaluate[bool](tab, `
			window.mark = 'no reload';
			window.seen = [];
			new MutationObserver(() => {
				const d = document.querySelector('details[data-plan="deploy"]');
				if (d && window.seen[window.seen.length - 1] !== d.dataset.status) window.seen.push(d.dataset.status);
			}).observe(document.getElementById('content'), {childList: true, subtree: true});
			true`)
		Expect(within(tab, time.Minute, chromedp.WaitReady(`body[data-live="on"]`))).To(Succeed())

		By("installing a package whose deploy plan runs for seconds while the page is open")
		mustKudo(ns, "install", slowstart, "--instance", "web")
		Expect(within(tab, time.Minute, chromedp.WaitVisible(`li.step[data-step="app"][data-status="IN_PROGRESS"] ul.waiting`))).To(Succeed())
		screenshot(tab, "instance-running")
		Expect(within(tab, 3*time.Minute, chromedp.WaitVisible(`details[data-plan="deploy"][data-status="COMPLETE"]`))).To(Succeed())
		Expect(evaluate[string](tab, `window.mark`)).To(Equal("no reload"))
		seen := evaluate[[]string](tab, `window.seen`)
		Expect(seen).To(ContainElement("IN_PROGRESS"))
		Expect(seen[len(seen)-1]).To(Equal("COMPLETE"))
		GinkgoWriter.Printf("the page showed the deploy plan as %v\n", seen)
		Expect(within(tab, time.Minute, chromedp.WaitVisible(`[data-found="true"][data-state="Ready"]`))).To(Succeed())
		screenshot(tab, "instance")

		By("showing the fleet, the Operator and its version")
		Expect(within(tab, time.Minute, chromedp.Navigate(page(u, "/")),
			chromedp.WaitVisible(`tr[data-instance="`+ns+`/web"][data-state="Ready"]`))).To(Succeed())
		screenshot(tab, "fleet")
		var web kudov1beta1.Instance
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &web)).To(Succeed())
		Expect(within(tab, time.Minute, chromedp.Navigate(page(u, "/operatorversions/"+ns+"/"+web.Spec.OperatorVersion.Name)),
			chromedp.WaitVisible(`//td/code[text()="replicas"]`))).To(Succeed())
		screenshot(tab, "operatorversion")
		Expect(within(tab, time.Minute, chromedp.Navigate(page(u, "/operators/"+ns+"/slowstart")),
			chromedp.WaitVisible(`//td/a[text()="`+web.Spec.OperatorVersion.Name+`"]`))).To(Succeed())
		screenshot(tab, "operator")

		By("running a plan with a button")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(&web), &web)).To(Succeed())
		ran := web.Status.PlanStatus["deploy"].UID
		Expect(within(tab, time.Minute, chromedp.Navigate(page(u, "/instances/"+ns+"/web")),
			chromedp.WaitVisible(`#trigger:not([disabled])`),
			chromedp.SetValue(`select[name="plan"]`, "deploy"),
			chromedp.Click(`#trigger`),
			chromedp.WaitVisible(`//div[@id="flash" and contains(., "plan deploy asked for on `+ns+`/web")]`))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(&web), &web)).To(Succeed())
			g.Expect(web.Status.PlanStatus["deploy"].UID).NotTo(Equal(ran))
		}).Should(Succeed())
	})

	It("offers a user who may not run a plan no button, and says why", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		mustKudo(ns, "install", hello, "--instance", "web", "--wait")
		viewer := "viewer-" + ns
		Expect(k8sClient.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kudo-viewer"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"kudo.dev"}, Resources: []string{"instances", "operators", "operatorversions"},
				Verbs: []string{"get", "list", "watch"}}}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kudo-viewer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "kudo-viewer"},
			Subjects: []rbacv1.Subject{userSubject(viewer)}})).To(Succeed())
		u := dashboard(ns, "--as", viewer)

		tab := browserContext()
		Expect(within(tab, time.Minute, chromedp.Navigate(page(u, "/instances/"+ns+"/web")),
			chromedp.WaitVisible(`[data-found="true"]`),
			chromedp.WaitVisible(`#trigger[disabled]`))).To(Succeed())
		Expect(evaluate[string](tab, `document.getElementById('trigger').title`)).
			To(HavePrefix("you may not patch instances.kudo.dev in namespace " + ns))
		Expect(evaluate[string](tab, `document.querySelector('footer.hidden-kinds').textContent`)).To(ContainSubstring("Event"))
		screenshot(tab, "refused")

		By("refusing the action even when the page sends it")
		answer := evaluate[map[string]any](tab, `
			fetch('/actions/trigger', {method: 'POST',
				headers: {'X-Kudo-Token': document.querySelector('meta[name="kudo-token"]').content},
				body: new URLSearchParams({namespace: '`+ns+`', instance: 'web', plan: 'deploy'})})
			.then(async (r) => ({status: r.status, ...(await r.json())}))`, chromedp.EvalAwaitPromise)
		Expect(answer).To(HaveKeyWithValue("status", BeEquivalentTo(http.StatusForbidden)))
		Expect(answer["message"]).To(ContainSubstring(`cannot patch resource "instances"`))
	})
})
