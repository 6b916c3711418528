package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// A user clones the repository and runs make demo: nothing of ours may be
// needed beside it. The clone is of the committed tree (HEAD), as CI's is.
var _ = Describe("A clone of the repository with nothing beside it", func() {
	It("runs make demo's package part: installs examples/hello, shows it not Ready naming its deleted Deployment, and corrects it", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		lone := GinkgoT().TempDir()
		clone := filepath.Join(lone, "kudo-ng")
		out, err := exec.Command("git", "clone", "--quiet", cluster.Root, clone).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		entries, err := os.ReadDir(lone)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(1), "the clone has something beside it")

		demo := exec.Command(filepath.Join(clone, "hack", "demo-package.sh"))
		demo.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig, "NAMESPACE="+ns,
			"KUBECTL="+filepath.Join(os.Getenv("ENVTEST_ASSETS"), "kubectl"), "KUDO_OPERATORS=")
		out, err = demo.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(string(out)).To(ContainSubstring("instance hello-instance is deployed"))
		Expect(string(out)).To(ContainSubstring("Not ready (Missing): Deployment " + ns + "/hello-instance is missing"))
		Expect(string(out)).To(MatchRegexp(`DriftCorrected\s+`))
	})
})
