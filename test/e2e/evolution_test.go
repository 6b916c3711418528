package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/corpus"
)

// renamedHello writes examples/hello as 0.1.0, and its next version 0.2.0,
// which renames replicas to count (default 2) with a rule, serving the API
// version v2; both name their kind RenamedHello, which no other spec's
// hello holds. It returns the two operator directories.
func renamedHello() (first, next string) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	first, next = filepath.Join(dir, "0.1.0"), filepath.Join(dir, "0.2.0")
	for _, version := range []string{first, next} {
		Expect(os.CopyFS(version, os.DirFS(hello))).To(Succeed())
	}
	edit := func(file string, replacements ...string) {
		GinkgoHelper()
		content, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred())
		edited := strings.NewReplacer(replacements...).Replace(string(content))
		Expect(edited).NotTo(Equal(string(content)), file)
		Expect(os.WriteFile(file, []byte(edited), 0o600)).To(Succeed())
	}
	edit(filepath.Join(first, "operator.yaml"), "\ntasks:\n", "\ntypedAPI: {kind: RenamedHello, version: v1}\ntasks:\n")
	edit(filepath.Join(next, "operator.yaml"), "operatorVersion: 0.1.0", "operatorVersion: 0.2.0",
		"\ntasks:\n", "\ntypedAPI: {kind: RenamedHello, version: v2}\ntasks:\n")
	edit(filepath.Join(next, "params.yaml"), "  - name: replicas\n", "  - name: count\n    oldName: replicas\n", "default: 2\n", "default: 3\n")
	edit(filepath.Join(next, "templates", "deployment.yaml"), ".Params.replicas", ".Params.count")
	return first, next
}

// specAt is a field of a typed object's spec, or with field "" the spec,
// read with kubectl at an API version of its kind.
func specAt(ns, resource, name, field string) string {
	GinkgoHelper()
	path := ".spec"
	if field != "" {
		path += "." + field
	}
	out, err := kubectlIn(ns, "", "get", resource, name, "-o", "jsonpath={"+path+"}")
	Expect(err).NotTo(HaveOccurred(), out)
	return out
}

// helloKeepsItsReplicas is the rename of issue 65, as a user meets it: h2
// keeps 4 pods through the install of a version that renames replicas, and
// through its upgrade, read as count: 4 at the new API version and
// replicas: 4 at the old.
func helloKeepsItsReplicas(ctx context.Context, ns string) {
	GinkgoHelper()
	first, next := renamedHello()
	mustKudo(ns, "install", first, "--skip-instance")
	Eventually(func() error { _, err := kubectlIn(ns, "", "get", "renamedhellos"); return err }).Should(Succeed())
	_, err := kubectlIn(ns, "apiVersion: packages.kudo.dev/v1\nkind: RenamedHello\nmetadata: {name: h2}\nspec: {replicas: 4}\n", "apply")
	Expect(err).NotTo(HaveOccurred())
	out, err := kubectlIn(ns, "", "wait", "--for=condition=Ready", "renamedhello/h2", "--timeout=5m")
	Expect(err).NotTo(HaveOccurred(), out)
	Expect(readyReplicas(ctx, ns, "h2")).To(BeEquivalentTo(4))

	By("installing 0.2.0, which serves v2: no upgrade yet, nothing changes")
	mustKudo(ns, "install", next, "--skip-instance")
	Eventually(func() (string, error) {
		return kubectlIn(ns, "", "get", "renamedhellos.v2.packages.kudo.dev", "h2", "-o", "jsonpath={.spec.count}")
	}).Should(Equal("4"))
	Expect(specAt(ns, "renamedhellos.v1.packages.kudo.dev", "h2", "replicas")).To(Equal("4"))
	Consistently(func() int32 { return readyReplicas(ctx, ns, "h2") }, "5s").Should(BeEquivalentTo(4))

	By("upgrading h2 to 0.2.0: count carries the 4")
	Expect(mustKudo(ns, "upgrade", next, "--instance", "h2", "--wait")).To(ContainSubstring("renamedhello.packages.kudo.dev/h2 upgraded to hello-1.27.0-0.2.0"))
	i := &kudov1beta1.Instance{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h2"}, i)).To(Succeed())
	Expect(i.Spec.OperatorVersion.Name).To(Equal("hello-1.27.0-0.2.0"))
	Expect(i.Spec.Parameters).To(HaveKeyWithValue("count", "4"))
	Expect(readyReplicas(ctx, ns, "h2")).To(BeEquivalentTo(4))
	Expect(specAt(ns, "renamedhellos.v2.packages.kudo.dev", "h2", "count")).To(Equal("4"))
	Expect(specAt(ns, "renamedhellos.v1.packages.kudo.dev", "h2", "replicas")).To(Equal("4"))
	AddReportEntry("h2 at v2 and v1", specAt(ns, "renamedhellos.v2.packages.kudo.dev", "h2", "")+"\n"+
		specAt(ns, "renamedhellos.v1.packages.kudo.dev", "h2", ""))
}

func readyReplicas(ctx context.Context, ns, name string) int32 {
	GinkgoHelper()
	var ready int32
	Eventually(func(g Gomega) { ready = deployment(ctx, g, ns, name).Status.ReadyReplicas }).Should(Succeed())
	return ready
}

// ensembleEvolves runs examples/ensemble's three versions: objects made at
// 0.1.0 (API version v1), read at v1 and v2 once 0.2.0 is installed, which
// renames NODE_COUNT and maps TIER's values; their storage migrated to v2;
// one upgraded; and 0.3.0, which drops size with no rule, refused by
// kubectl kudo upgrade naming the field, the cluster unchanged.
func ensembleEvolves(ctx context.Context, ns string) {
	GinkgoHelper()
	version := func(v string) string { return filepath.Join(corpus.Examples(), "ensemble", v, "operator") }
	mustKudo(ns, "install", version("0.1.0"), "--skip-instance")
	Eventually(func() error { _, err := kubectlIn(ns, "", "get", "ensembles"); return err }).Should(Succeed())
	_, err := kubectlIn(ns, "apiVersion: packages.kudo.dev/v1\nkind: Ensemble\nmetadata: {name: e1}\nspec: {NODE_COUNT: 2, TIER: large}\n"+
		"---\napiVersion: packages.kudo.dev/v1\nkind: Ensemble\nmetadata: {name: e2}\nspec: {NODE_COUNT: 1}\n", "apply")
	Expect(err).NotTo(HaveOccurred())
	out, err := kubectlIn(ns, "", "wait", "--for=condition=Ready", "ensemble/e1", "ensemble/e2", "--timeout=5m")
	Expect(err).NotTo(HaveOccurred(), out)
	storedBefore, err := cluster.Kubectl("get", "crd", "ensembles.packages.kudo.dev", "-o", "jsonpath={.status.storedVersions}")
	Expect(err).NotTo(HaveOccurred())
	Expect(storedBefore).To(Equal(`["v1"]`))

	By("installing 0.2.0: v2 served and stored, v1 still served; the objects read at both")
	mustKudo(ns, "install", version("0.2.0"), "--skip-instance")
	Eventually(func() (string, error) {
		return kubectlIn(ns, "", "get", "ensembles.v2.packages.kudo.dev", "e1", "-o", "jsonpath={.spec}")
	}).Should(MatchJSON(`{"nodes":2,"size":"L"}`))
	Expect(specAt(ns, "ensembles.v1.packages.kudo.dev", "e1", "")).To(MatchJSON(`{"NODE_COUNT":2,"TIER":"large"}`))
	Expect(specAt(ns, "ensembles.v2.packages.kudo.dev", "e2", "")).To(MatchJSON(`{"nodes":1}`))
	var storedAfter string
	Eventually(func() (string, error) {
		storedAfter, err = cluster.Kubectl("get", "crd", "ensembles.packages.kudo.dev", "-o", "jsonpath={.status.storedVersions}")
		return storedAfter, err
	}, "2m").Should(Equal(`["v2"]`))
	AddReportEntry("storedVersions before and after", storedBefore+" → "+storedAfter)
	AddReportEntry("e1 at v1 and v2", specAt(ns, "ensembles.v1.packages.kudo.dev", "e1", "")+"\n"+
		specAt(ns, "ensembles.v2.packages.kudo.dev", "e1", ""))

	By("upgrading e1 to 0.2.0")
	mustKudo(ns, "upgrade", version("0.2.0"), "--instance", "e1", "--wait")
	i := &kudov1beta1.Instance{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "e1"}, i)).To(Succeed())
	Expect(i.Spec.Parameters).To(Equal(map[string]string{"nodes": "2", "size": "L"}))
	Expect(readyReplicas(ctx, ns, "e1")).To(BeEquivalentTo(2))

	By("0.3.0 drops size with no rule: refused, naming the field; nothing changes")
	out, err = kudo(ns, "upgrade", version("0.3.0"), "--instance", "e1")
	Expect(err).To(HaveOccurred())
	Expect(out).To(ContainSubstring("OperatorVersion ensemble-1.27.0-0.3.0 would break the typed API ensembles.packages.kudo.dev"))
	Expect(out).To(ContainSubstring("v2 → v3: spec.size: removed in v3, and no rule carries its value (oldName, or conversion.expression) " +
		"(removed): 1 object(s) hold a value it breaks (e1 of this namespace)"))
	AddReportEntry("0.3.0 refused", out)
	Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ensemble-1.27.0-0.3.0"},
		&kudov1beta1.OperatorVersion{}))).To(BeTrue())
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "e1"}, i)).To(Succeed())
	Expect(i.Spec.OperatorVersion.Name).To(Equal("ensemble-1.27.0-0.2.0"))
	Expect(specAt(ns, "ensembles.v2.packages.kudo.dev", "e1", "")).To(MatchJSON(`{"nodes":2,"size":"L","operatorVersion":"ensemble-1.27.0-0.2.0"}`))
}

var _ = Describe("A typed API that evolves", func() {
	It("keeps a renamed parameter's value through the install of the version that renames it and through the upgrade (issue 65)", func(ctx SpecContext) {
		helloKeepsItsReplicas(ctx, newNamespace(ctx))
	})
})
