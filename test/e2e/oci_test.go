package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

var _ = Describe("Signed packages", func() {
	It("signs a package as cosign signs an image: cosign verifies ours, we verify cosign's, and refuse the unsigned and another key's", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		keys := GinkgoT().TempDir()
		for _, prefix := range []string{"cosign", "other"} {
			out, err := cosign(keys, "generate-key-pair", "--output-key-prefix", prefix)
			Expect(err).NotTo(HaveOccurred(), out)
		}
		GinkgoT().Setenv("COSIGN_PASSWORD", cosignPassword)
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
		parent := push(filepath.Join("testdata", "deps", "parent"), "parent")
		out, err = cosign(keys, append([]string{"sign", "--key", "cosign.key", "--tlog-upload=false", "--use-signing-config=false",
			strings.TrimPrefix(parent, "oci://")}, cosignTrust...)...)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(mustKudo(ns, append([]string{"package", "verify", parent, "--key", filepath.Join(keys, "cosign.pub")}, trust...)...)).
			To(ContainSubstring("Verified: " + parent + ", signed with " + filepath.Join(keys, "cosign.pub")))
		out, err = kudo(ns, append([]string{"package", "verify", parent, "--key", filepath.Join(keys, "other.pub")}, trust...)...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("none of its 1 signatures verifies with the 1 keys given"))

		By("an unsigned package is refused")
		unsigned := push(filepath.Join(corpus.Examples(), "hello", "operator"), "hello")
		out, err = kudo(ns, append([]string{"package", "verify", unsigned, "--key", filepath.Join(keys, "cosign.pub")}, trust...)...)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("is not signed: no Sigstore bundle refers to it"))
	})
})
