package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/preview"
	"github.com/kudo-ng/kudo/test/corpus"
)

// exitCode is the code kubectl kudo exited with.
func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	Expect(err).NotTo(HaveOccurred())
	return 0
}

// versions are the generations of the objects, or their resource versions
// for kinds without one, by kind/name; "" for one that does not exist.
func versions(ctx context.Context, ns string, objs ...[3]string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, o := range objs {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(o[0])
		u.SetKind(o[1])
		Expect(client.IgnoreNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: o[2]}, u))).To(Succeed())
		version := u.GetResourceVersion()
		if u.GetGeneration() > 0 {
			version = fmt.Sprint(u.GetGeneration())
		}
		out[o[1]+"/"+o[2]] = version
	}
	return out
}

// asApplied is what of an object a preview can promise: Shown, without
// the annotations other controllers add or change afterwards (a
// Deployment's revision) and the labels that carry the uid the API server gives a Job
// when it is really created, which no dry run can know.
func asApplied(obj, promised map[string]any) map[string]any {
	GinkgoHelper()
	u := preview.Shown(&unstructured.Unstructured{Object: obj}).DeepCopy()
	annotations := u.GetAnnotations()
	want, _, _ := unstructured.NestedStringMap(promised, "metadata", "annotations")
	for k := range annotations {
		if _, ok := want[k]; !ok || k == "deployment.kubernetes.io/revision" {
			delete(annotations, k)
		}
	}
	u.SetAnnotations(annotations)
	if u.GetKind() == "Job" {
		for _, path := range [][]string{{"spec", "selector"}, {"spec", "template", "metadata", "labels"}, {"metadata", "labels"}} {
			unstructured.RemoveNestedField(u.Object, path...)
		}
	}
	// As JSON decodes it, numbers and all, as the preview was.
	b, err := json.Marshal(u.Object)
	Expect(err).NotTo(HaveOccurred())
	var out map[string]any
	Expect(json.Unmarshal(b, &out)).To(Succeed())
	return out
}

var _ = Describe("A preview of an upgrade", func() {
	It("prints the diff, changes nothing, exits 1, and the upgrade then applies what it showed", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		first := filepath.Join(corpus.Examples(), "upgrade", "0.1.0", "operator")
		next := filepath.Join(corpus.Examples(), "upgrade", "0.2.0", "operator")
		mustKudo(ns, "install", first, "--instance", "up", "--wait")
		mustKudo(ns, "install", first, "--instance", "up2", "--wait")
		snapshot := func() map[string]string {
			return versions(ctx, ns, [3]string{"kudo.dev/v1beta1", "Instance", "up"}, [3]string{"apps/v1", "Deployment", "up"},
				[3]string{"v1", "ConfigMap", "up-page"}, [3]string{"v1", "ConfigMap", "up-pages"})
		}
		unchanged := snapshot()
		Expect(unchanged).To(HaveKeyWithValue("ConfigMap/up-pages", ""))

		out, err := kudo(ns, "upgrade", next, "--instance", "up", "--diff")
		Expect(exitCode(err)).To(Equal(1), out)
		_, _ = fmt.Fprintf(GinkgoWriter, "$ kubectl kudo upgrade %s --instance up --diff\n%s", next, out)
		for _, line := range []string{
			fmt.Sprintf("Instance %s/up: upgrade (OperatorVersion upgrade-1.28.0-0.2.0) runs plan upgrade\n", ns),
			"  phase migrate, step migrate: migrate (Apply)\n  phase main, step app: app (Apply)\n",
			fmt.Sprintf("Job %s/up-migrate: create (task migrate)\n", ns),
			fmt.Sprintf("ConfigMap %s/up-pages: create (task app)\n", ns),
			fmt.Sprintf("Deployment %s/up: configure (task app)\n", ns),
			"-      - image: nginx:1.27.0\n+      - image: nginx:1.28.0\n",
			"-        kudo.dev/operator-version: 0.1.0\n", "+        kudo.dev/operator-version: 0.2.0\n",
			"-          name: up-page\n+          name: up-pages\n",
			fmt.Sprintf("Service %s/up: unchanged (task app)\n", ns),
			fmt.Sprintf("PodDisruptionBudget %s/up: create (task app)\n", ns),
			fmt.Sprintf("ConfigMap %s/up-page: prune (task app)\n", ns),
			"-  index.html: <p>up, version 0.1.0</p>\n",
			fmt.Sprintf("Instance %s/up: 3 to create, 1 to configure, 1 to delete (1 pruned), 0 kept, 0 refused, 1 unchanged\n", ns),
		} {
			Expect(out).To(ContainSubstring(line))
		}
		Expect(snapshot()).To(Equal(unchanged), "a preview changes nothing")
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "upgrade-1.28.0-0.2.0"},
			&kudov1beta1.OperatorVersion{}))).To(BeTrue(), "a preview installs no OperatorVersion")

		out, err = kudo(ns, "upgrade", next, "--instance", "up", "--dry-run=server", "-o", "json")
		Expect(exitCode(err)).To(Equal(1), out)
		var reports []preview.Report
		Expect(json.Unmarshal([]byte(out), &reports)).To(Succeed(), out)
		Expect(reports).To(HaveLen(1))

		By("previewing the fleet: a line per Instance")
		out, err = kudo(ns, "upgrade", next, "-l", "", "--dry-run=server")
		Expect(exitCode(err)).To(Equal(1), out)
		_, _ = fmt.Fprintf(GinkgoWriter, "$ kubectl kudo upgrade %s -l '' --dry-run=server\n%s", next, out)
		Expect(out).To(MatchRegexp(`INSTANCE +PLAN +CREATE +CONFIGURE +DELETE +KEEP +REFUSE +UNCHANGED\n`))
		for _, name := range []string{"up", "up2"} {
			Expect(out).To(MatchRegexp(`\n%s/%s +upgrade +3 +1 +1 +0 +0 +1\n`, ns, name))
		}
		Expect(out).NotTo(ContainSubstring("--- live"), "--dry-run=server prints no diff")
		Expect(snapshot()).To(Equal(unchanged), "a preview changes nothing")

		By("upgrading: the plan applies what the preview showed")
		mustKudo(ns, "upgrade", next, "--instance", "up", "--wait")
		for _, o := range reports[0].Objects {
			switch o.Verb {
			case preview.Create, preview.Configure:
				live := &unstructured.Unstructured{}
				live.SetAPIVersion(o.APIVersion)
				live.SetKind(o.Kind)
				Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.Name}, live)).To(Succeed())
				Expect(asApplied(live.Object, o.Would)).To(Equal(asApplied(o.Would, o.Would)), o.Describe())
			case preview.Prune:
				Eventually(func() bool {
					return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.Name}, &unstructured.Unstructured{
						Object: map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind}}))
				}).Should(BeTrue(), o.Describe())
			}
		}

		out, err = kudo(ns, "upgrade", next, "--instance", "up", "--diff")
		Expect(exitCode(err)).To(Equal(2), out)
		Expect(out).To(ContainSubstring("is not newer than the installed 0.2.0"))
		out, err = kudo(ns, "update", "--instance", "up", "-p", "replicas=2", "--diff")
		Expect(exitCode(err)).To(Equal(0), out)
		Expect(out).To(ContainSubstring(fmt.Sprintf("Instance %s/up: 0 to create, 0 to configure, 0 to delete (0 pruned), 0 kept, 0 refused, 4 unchanged", ns)))
	})

	It("kubectl kudo diff -f shows what applying typed objects would do", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		pkg := filepath.Join(GinkgoT().TempDir(), "operator")
		Expect(os.CopyFS(pkg, os.DirFS(hello))).To(Succeed())
		manifest, err := os.ReadFile(filepath.Join(pkg, "operator.yaml"))
		Expect(err).NotTo(HaveOccurred())
		// A kind of its own: other specs' hello hold hellos.
		typed := strings.Replace(string(manifest), "\ntasks:\n", "\ntypedAPI: {kind: PreviewHello}\ntasks:\n", 1)
		Expect(os.WriteFile(filepath.Join(pkg, "operator.yaml"), []byte(typed), 0o600)).To(Succeed())
		mustKudo(ns, "install", pkg, "--skip-instance")
		Eventually(func() error { _, err := kubectlIn(ns, "", "get", "previewhellos"); return err }).Should(Succeed())
		object := func(name string, replicas int) string {
			file := filepath.Join(GinkgoT().TempDir(), name+".yaml")
			Expect(os.WriteFile(file, []byte(fmt.Sprintf("apiVersion: packages.kudo.dev/v1\nkind: PreviewHello\n"+
				"metadata: {name: %s}\nspec: {replicas: %d}\n", name, replicas)), 0o600)).To(Succeed())
			return file
		}
		two := object("ph", 2)
		out, err := kubectlIn(ns, "", "apply", "-f", two)
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectlIn(ns, "", "wait", "--for=condition=Ready", "previewhello/ph", "--timeout=5m")
		Expect(err).NotTo(HaveOccurred(), out)

		out, err = kudo(ns, "diff", "-f", two)
		Expect(exitCode(err)).To(Equal(0), out)
		out, err = kudo(ns, "diff", "-f", object("ph", 3))
		Expect(exitCode(err)).To(Equal(1), out)
		_, _ = fmt.Fprintf(GinkgoWriter, "$ kubectl kudo diff -f ph.yaml  # replicas: 3\n%s", out)
		Expect(out).To(ContainSubstring(fmt.Sprintf("Instance %s/ph: update (OperatorVersion hello-1.27.0-0.1.0) runs plan deploy\n", ns)))
		Expect(out).To(ContainSubstring(fmt.Sprintf("Deployment %s/ph: configure (task app)\n", ns)))
		Expect(out).To(ContainSubstring("-  replicas: 2\n+  replicas: 3\n"))
		out, err = kudo(ns, "diff", "-f", object("ph2", 1))
		Expect(exitCode(err)).To(Equal(1), out)
		Expect(out).To(ContainSubstring(fmt.Sprintf("Instance %s/ph2: install (OperatorVersion hello-1.27.0-0.1.0) runs plan deploy\n", ns)))
		Expect(out).To(ContainSubstring(fmt.Sprintf("Deployment %s/ph2: create (task app)\n", ns)))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ph2"}, &kudov1beta1.Instance{}))).To(BeTrue())
	})

	It("previews an install of every task kind: the pod a Pipe runs, a Delete of what the plan applied, a child Instance", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		out, err := kudo(ns, "install", filepath.Join(corpus.Examples(), "all-tasks", "operator"), "--instance", "app", "--dry-run=server")
		Expect(exitCode(err)).To(Equal(1), out)
		_, _ = fmt.Fprintf(GinkgoWriter, "$ kubectl kudo install examples/all-tasks/operator --instance app --dry-run=server\n%s", out)
		for _, line := range []string{
			fmt.Sprintf("Instance %s/app: install (OperatorVersion all-tasks-1.37.0-0.1.0) runs plan deploy\n", ns),
			"  phase run, step app: settings (Apply), app (Apply), expose (Toggle)\n",
			"task generate (Pipe): ",
			fmt.Sprintf("Job %s/app-migrate: create (task migrate)\n", ns),
			fmt.Sprintf("Job %s/app-migrate: delete (task tidy)\n", ns),
			fmt.Sprintf("Instance %s/app-hello: install (OperatorVersion hello-1.27.0-0.1.0) runs plan deploy\n", ns),
			fmt.Sprintf("Deployment %s/app-hello: create (task app)\n", ns),
		} {
			Expect(out).To(ContainSubstring(line))
		}
		Expect(out).NotTo(ContainSubstring("--- live"), "--dry-run=server prints no diff")
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, &kudov1beta1.Instance{}))).To(BeTrue())
		list := &kudov1beta1.OperatorVersionList{}
		Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(BeEmpty(), "a preview installs no OperatorVersion, the child's neither")
	})
})
