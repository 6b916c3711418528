package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
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
