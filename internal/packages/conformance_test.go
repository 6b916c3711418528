package packages

import (
	"os"
	"path/filepath"
	"testing"
)

// conformanceDir holds real KUDO packages, beside the repository.
var conformanceDir = filepath.Join("..", "..", "..", "shared", "conformance")

func conformancePackages(t testing.TB) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(conformanceDir, "*", "operator"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no conformance packages in %s: %v", conformanceDir, err)
	}
	return dirs
}

func TestConformancePackagesVerify(t *testing.T) {
	for _, dir := range conformancePackages(t) {
		name := filepath.Base(filepath.Dir(dir))
		t.Run(name, func(t *testing.T) {
			p, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			report := Verify(p, VerifyOptions{})
			for _, e := range report.Errors {
				t.Errorf("error: %s", e)
			}
			for _, w := range report.Warnings {
				t.Logf("warning: %s", w)
			}
		})
	}
	if _, err := os.Stat(conformanceDir); err != nil {
		t.Fatal(err)
	}
}
