package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/corpus"
)

// localRegistry is the local control plane's registry (hack/cluster/node.sh).
const localRegistry = "10.244.0.1:5000"

// copyPackage copies a package directory of testdata, changing each file
// with edit, into a directory of the spec.
func copyPackage(from string, edit func(name, content string) string) string {
	GinkgoHelper()
	to := GinkgoT().TempDir()
	Expect(filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(to, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), []byte(edit(rel, string(data))), 0o644)
	})).To(Succeed())
	return to
}

var _ = Describe("Packages from OCI registries", func() {
	It("pushes a package to the cluster's registry, installs a dependency by tag with its digest recorded, and runs that digest after the tag moved", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		trust := []string{"--ca-file", cluster.RegistryCA()}
		repository := "oci://" + localRegistry + "/" + ns + "/child"
		tag := repository + ":0.1.0"
		digestOf := func(out string) string {
			GinkgoHelper()
			m := regexp.MustCompile(`Digest: (sha256:[0-9a-f]{64})`).FindStringSubmatch(out)
			Expect(m).To(HaveLen(2), out)
			return m[1]
		}
		child := filepath.Join("testdata", "deps", "child")
		pushed := digestOf(mustKudo(ns, append([]string{"package", "push", child, tag}, trust...)...))
		Expect(digestOf(mustKudo(ns, append([]string{"package", "push", child, repository + ":again"}, trust...)...))).
			To(Equal(pushed), "the same package pushes to the same digest")
		Expect(mustKudo(ns, append([]string{"search", "--repo", repository}, trust...)...)).
			To(MatchRegexp(`child\s+0\.1\.0`), "a repository's tags are its versions")

		parent := copyPackage(filepath.Join("testdata", "deps", "parent"), func(_, content string) string {
			return strings.ReplaceAll(content, "package: ../child", "package: "+tag)
		})
		out := mustKudo(ns, append([]string{"install", parent, "--instance", "app", "--wait"}, trust...)...)
		Expect(out).To(ContainSubstring("operatorversion.kudo.dev/child-0.1.0 created"))
		ov := &kudov1beta1.OperatorVersion{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "child-0.1.0"}, ov)).To(Succeed())
		Expect(ov.Annotations).To(HaveKeyWithValue(kudov1beta1.PackageDigestAnnotation, repository+"@"+pushed))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "parent-0.1.0"}, ov)).To(Succeed())
		Expect(ov.Annotations).NotTo(HaveKey(kudov1beta1.PackageDigestAnnotation))

		By("the tag moves to another package")
		moved := copyPackage(child, func(name, content string) string {
			if name == "params.yaml" {
				return content + "\n# moved\n"
			}
			return content
		})
		movedDigest := digestOf(mustKudo(ns, append([]string{"package", "push", moved, tag}, trust...)...))
		Expect(movedDigest).NotTo(Equal(pushed))
		dir := GinkgoT().TempDir()
		Expect(digestOf(mustKudo(ns, append([]string{"package", "pull", tag, "-d", dir}, trust...)...))).To(Equal(movedDigest))
		Expect(digestOf(mustKudo(ns, append([]string{"package", "pull", repository + "@" + pushed, "-d", dir, "-w"}, trust...)...))).
			To(Equal(pushed))

		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "child-0.1.0"}, ov)).To(Succeed())
		Expect(ov.Annotations).To(HaveKeyWithValue(kudov1beta1.PackageDigestAnnotation, repository+"@"+pushed))
		i := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-child"}, i)).To(Succeed())
		Expect(i.Spec.OperatorVersion.Name).To(Equal("child-0.1.0"))
		Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))

		_, err := kudo(ns, "package", "pull", tag, "-d", dir)
		Expect(err).To(HaveOccurred(), "without the registry's CA, its certificate is not trusted")
	})
})

// cosign runs the cosign binary make cosign builds, in dir, with the
// password of the keys it makes and reads.
func cosign(dir string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(cluster.Root, "bin", "cosign"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD="+cosignPassword)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

const cosignPassword = "e2e-password"

// cosignKeys makes two key pairs with cosign, cosign.key/.pub and
// other.key/.pub, in a directory of the spec, and sets the password that
// reads them for kubectl kudo.
func cosignKeys() string {
	GinkgoHelper()
	keys := GinkgoT().TempDir()
	for _, prefix := range []string{"cosign", "other"} {
		out, err := cosign(keys, "generate-key-pair", "--output-key-prefix", prefix)
		Expect(err).NotTo(HaveOccurred(), out)
	}
	GinkgoT().Setenv("COSIGN_PASSWORD", cosignPassword)
	return keys
}

var _ = Describe("Signed packages", func() {
	It("signs a package as cosign signs an image: cosign verifies ours, we verify cosign's, and refuse the unsigned and another key's", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		keys := cosignKeys()
		trust := []string{"--ca-file", cluster.RegistryCA()}
		cosignTrust := []string{"--registry-cacert", cluster.RegistryCA()}
		digestOf := func(out string) string {
			GinkgoHelper()
			m := regexp.MustCompile(`Digest: (sha256:[0-9a-f]{64})`).FindStringSubmatch(out)
			Expect(m).To(HaveLen(2), out)
			return m[1]
		}
		push := func(dir, name string) string {
			GinkgoHelper()
			repository := "oci://" + localRegistry + "/" + ns + "/" + name
			return repository + "@" + digestOf(mustKudo(ns, append([]string{"package", "push", dir, repository + ":0.1.0"}, trust...)...))
		}
		hello := push(filepath.Join("testdata", "deps", "child"), "child")

		By("we sign, cosign verifies")
		out := mustKudo(ns, append([]string{"package", "sign", hello, "--key", filepath.Join(keys, "cosign.key")}, trust...)...)
		Expect(out).To(ContainSubstring("Signature: sha256:"))
		imageRef := strings.TrimPrefix(hello, "oci://")
		out, err := cosign(keys, append([]string{"verify", "--key", "cosign.pub", "--insecure-ignore-tlog", imageRef}, cosignTrust...)...)
		Expect(err).NotTo(HaveOccurred(), out)
		AddReportEntry("cosign verify of kubectl kudo package sign's signature", out)
		out, err = cosign(keys, append([]string{"verify", "--key", "other.pub", "--insecure-ignore-tlog", imageRef}, cosignTrust...)...)
		Expect(err).To(HaveOccurred(), out)

		By("cosign signs, we verify")
		widget := push(filepath.Join(corpus.Examples(), "widget", "operator"), "widget")
		out, err = cosign(keys, append([]string{"sign", "--key", "cosign.key", "--tlog-upload=false", "--use-signing-config=false",
			strings.TrimPrefix(widget, "oci://")}, cosignTrust...)...)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(mustKudo(ns, append([]string{"package", "verify", widget, "--key", filepath.Join(keys, "cosign.pub")}, trust...)...)).
			To(ContainSubstring("Verified: " + widget + ", signed with " + filepath.Join(keys, "cosign.pub")))
		out, err = kudo(ns, append([]string{"package", "verify", widget, "--key", filepath.Join(keys, "other.pub")}, trust...)...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("none of its 1 signatures verifies as made by " + filepath.Join(keys, "other.pub")))

		By("an unsigned package is refused")
		unsigned := push(filepath.Join(corpus.Examples(), "hello", "operator"), "hello")
		out, err = kudo(ns, append([]string{"package", "verify", unsigned, "--key", filepath.Join(keys, "cosign.pub")}, trust...)...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("is not signed: no Sigstore bundle refers to it"))
	})
})

// releasePolicy creates TrustPolicy ns, in mode, of the packages matched
// (every one when none), trusting the release key of keys (cosignKeys) and
// the cluster's registry, and waits for it to be Ready.
func releasePolicy(ctx context.Context, ns, keys string, mode kudov1alpha1.TrustMode, packages ...kudov1alpha1.PackageMatch) {
	GinkgoHelper()
	publicKey, err := os.ReadFile(filepath.Join(keys, "cosign.pub"))
	Expect(err).NotTo(HaveOccurred())
	ca, err := os.ReadFile(cluster.RegistryCA())
	Expect(err).NotTo(HaveOccurred())
	policy := &kudov1alpha1.TrustPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: kudov1alpha1.TrustPolicySpec{
			Mode:        mode,
			Packages:    packages,
			Authorities: []kudov1alpha1.Authority{{Name: "release", Key: &kudov1alpha1.KeyAuthority{PublicKey: string(publicKey)}}},
			Registry:    kudov1alpha1.RegistryAccess{CABundle: string(ca)},
		},
	}
	Expect(k8sClient.Create(ctx, policy)).To(Succeed())
	DeferCleanup(func() { Expect(k8sClient.Delete(context.Background(), policy)).To(Succeed()) })
	out, err := cluster.Kubectl("wait", "trustpolicy/"+ns, "--for=condition=Ready", "--timeout=60s")
	Expect(err).NotTo(HaveOccurred(), out)
}

var _ = Describe("A cluster that runs only signed packages", func() {
	It("verifies in the manager: in Enforce the signed package and a signed dependency deploy, the unsigned and another key's are refused naming the policy; Audit lets them run unverified", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		keys := cosignKeys()
		registryAccess := []string{"--ca-file", cluster.RegistryCA()}
		repository := "oci://" + localRegistry + "/" + ns + "/"
		child := filepath.Join("testdata", "deps", "child")
		named := func(name string) string {
			return copyPackage(child, func(file, content string) string {
				if file == "operator.yaml" {
					return strings.Replace(content, "name: child", "name: "+name, 1)
				}
				return content
			})
		}
		for name, dir := range map[string]string{"child": child, "unsigned": named("unsigned"), "stranger": named("stranger")} {
			mustKudo(ns, append([]string{"package", "push", dir, repository + name + ":0.1.0"}, registryAccess...)...)
		}
		mustKudo(ns, append([]string{"package", "sign", repository + "child:0.1.0", "--key", filepath.Join(keys, "cosign.key")}, registryAccess...)...)
		mustKudo(ns, append([]string{"package", "sign", repository + "stranger:0.1.0", "--key", filepath.Join(keys, "other.key")}, registryAccess...)...)

		releasePolicy(ctx, ns, keys, kudov1alpha1.Enforce, kudov1alpha1.PackageMatch{Prefix: localRegistry + "/" + ns + "/"})

		verified := func(g Gomega, name string) *metav1.Condition {
			ov := &kudov1beta1.OperatorVersion{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-0.1.0"}, ov)).To(Succeed())
			c := meta.FindStatusCondition(ov.Status.Conditions, "Verified")
			g.Expect(c).NotTo(BeNil())
			return c
		}

		By("a package from a directory whose KudoOperator dependency is the signed package, by tag")
		parent := copyPackage(filepath.Join("testdata", "deps", "parent"), func(_, content string) string {
			return strings.ReplaceAll(content, "package: ../child", "package: "+repository+"child:0.1.0")
		})
		mustKudo(ns, append([]string{"install", parent, "--instance", "app", "--wait"}, registryAccess...)...)
		Eventually(func(g Gomega) {
			c := verified(g, "child")
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("signed by release of TrustPolicy " + ns))
		}).Should(Succeed())
		AddReportEntry("the Verified condition of the signed dependency", verified(Default, "child").Message)

		By("install --verify refuses another key's signature before writing anything")
		out, err := kudo(ns, append([]string{"install", repository + "stranger:0.1.0", "--instance", "stranger", "--verify"}, registryAccess...)...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("--verify: TrustPolicy " + ns + ": "))
		Expect(out).To(ContainSubstring("verifies as made by release"))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stranger-0.1.0"}, &kudov1beta1.OperatorVersion{})).
			To(MatchError(ContainSubstring("not found")))

		By("without --verify, the manager refuses it: its Instance runs nothing, and admission refuses the next, naming the policy")
		// Admission lets the Instance in while the manager has not judged
		// the OperatorVersion the same install made just before, and
		// refuses it once it has; --wait ends on the manager's refusal:
		// either is an error naming the policy.
		out, err = kudo(ns, append([]string{"install", repository + "stranger:0.1.0", "--instance", "stranger", "--wait"}, registryAccess...)...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("TrustPolicy " + ns + " enforces signatures on it"))
		AddReportEntry("install --wait of a package signed by another key", out)
		Eventually(func(g Gomega) {
			c := verified(g, "stranger")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Message).To(ContainSubstring("verifies as made by release"))
			if !strings.Contains(out, "runs no plan") {
				return
			}
			i := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stranger"}, i)).To(Succeed())
			ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal("Unverified"))
			g.Expect(ready.Message).To(ContainSubstring("TrustPolicy " + ns + " enforces signatures on it"))
		}).Should(Succeed())
		Expect(cluster.Kubectl("get", "deployments", "-n", ns, "-o", "name")).NotTo(ContainSubstring("stranger"))
		out, err = kudo(ns, "install", "stranger", "--in-cluster", "--instance", "stranger-again")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("TrustPolicy " + ns + " enforces signatures on it"))
		AddReportEntry("admission of an Instance of a package signed by another key", out)

		_, installErr := kudo(ns, append([]string{"install", repository + "unsigned:0.1.0", "--instance", "unsigned"}, registryAccess...)...)
		Eventually(func(g Gomega) {
			c := verified(g, "unsigned")
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Message).To(ContainSubstring("is not signed"))
		}).Should(Succeed())
		out, err = kudo(ns, "install", "unsigned", "--in-cluster", "--instance", "unsigned-again")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("TrustPolicy " + ns + " enforces signatures on it"))
		AddReportEntry("admission of an Instance of an unsigned package", out)

		By("the signed tag moves to an unsigned package: the installed digest stays verified, and runs")
		childOV := &kudov1beta1.OperatorVersion{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "child-0.1.0"}, childOV)).To(Succeed())
		pinned := childOV.Annotations[kudov1beta1.PackageDigestAnnotation]
		mustKudo(ns, append([]string{"package", "push", named("child-moved"), repository + "child:0.1.0"}, registryAccess...)...)
		out, err = kudo(ns, append([]string{"package", "verify", repository + "child:0.1.0", "--key", filepath.Join(keys, "cosign.pub")},
			registryAccess...)...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("is not signed"))

		By("in Audit, the unsigned package runs, still not verified")
		out, err = cluster.Kubectl("patch", "trustpolicy", ns, "--type=merge", "-p", `{"spec":{"mode":"Audit"}}`)
		Expect(err).NotTo(HaveOccurred(), out)
		if installErr != nil {
			mustKudo(ns, "install", "unsigned", "--in-cluster", "--instance", "unsigned")
		}
		Eventually(func(g Gomega) {
			i := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "unsigned"}, i)).To(Succeed())
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(verified(g, "unsigned").Status).To(Equal(metav1.ConditionFalse))
		}).WithTimeout(3 * time.Minute).Should(Succeed())
		// The policy's change verified every OperatorVersion it covers
		// again: the manager reads the digest, never the tag.
		c := verified(Default, "child")
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Message).To(ContainSubstring(pinned))
		app := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, app)).To(Succeed())
		Expect(meta.IsStatusConditionTrue(app.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
	})

	It("trusts, by a policy naming no packages, signatures and not locations: the manager reaches no registry at an internal address, "+
		"as a package's digest may name one, unless the policy allows it (issue 62)", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		keys := cosignKeys()
		registryAccess := []string{"--ca-file", cluster.RegistryCA()}
		child := "oci://" + localRegistry + "/" + ns + "/child:0.1.0"
		mustKudo(ns, append([]string{"package", "push", filepath.Join("testdata", "deps", "child"), child}, registryAccess...)...)
		mustKudo(ns, append([]string{"package", "sign", child, "--key", filepath.Join(keys, "cosign.key")}, registryAccess...)...)

		// Audit: a policy of every package would otherwise stop every other
		// OperatorVersion of the cluster.
		releasePolicy(ctx, ns, keys, kudov1alpha1.Audit)

		mustKudo(ns, append([]string{"install", child, "--skip-instance"}, registryAccess...)...)
		verified := func(g Gomega) *metav1.Condition {
			ov := &kudov1beta1.OperatorVersion{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "child-0.1.0"}, ov)).To(Succeed())
			c := meta.FindStatusCondition(ov.Status.Conditions, "Verified")
			g.Expect(c).NotTo(BeNil())
			return c
		}
		Eventually(func(g Gomega) {
			c := verified(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Message).To(ContainSubstring(strings.Split(localRegistry, ":")[0] + " is an internal address, and TrustPolicy " + ns + " names no packages"))
		}).Should(Succeed())
		AddReportEntry("the Verified condition of a package at an internal address, by a policy naming no packages", verified(Default).Message)

		out, err := cluster.Kubectl("patch", "trustpolicy", ns, "--type=merge", "-p", `{"spec":{"registry":{"allowInternalAddresses":true}}}`)
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func(g Gomega) {
			c := verified(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("signed by release of TrustPolicy " + ns))
		}).Should(Succeed())
	})
})
