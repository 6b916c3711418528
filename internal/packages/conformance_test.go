package packages

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/kudo-ng/kudo/test/corpus"
)

// conformancePackages are the operator/ directories of the conformance
// corpus; the test is skipped without it.
func conformancePackages(t testing.TB) []string {
	t.Helper()
	dir := corpus.Require(t)
	dirs, err := filepath.Glob(filepath.Join(dir, "*", "operator"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no packages in %s (%s/*/operator): %v", corpus.Variable, dir, err)
	}
	return dirs
}

// examplePackages are the project's own packages in examples/.
func examplePackages(t testing.TB) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(corpus.Examples(), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == OperatorFileName {
			dirs = append(dirs, filepath.Dir(path))
		}
		return err
	})
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no packages in %s: %v", corpus.Examples(), err)
	}
	return dirs
}

func TestConformancePackagesVerify(t *testing.T) {
	verifyEach(t, conformancePackages(t), false)
}

// TestExamplePackagesVerify: the project's own packages have no error and no
// warning either, since they are what users copy.
func TestExamplePackagesVerify(t *testing.T) {
	verifyEach(t, examplePackages(t), true)
}

// verifyEach verifies each package, failing on its errors and, when
// strict, on its warnings too.
func verifyEach(t *testing.T, dirs []string, strict bool) {
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			p, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			report := Verify(p, VerifyOptions{})
			for _, e := range report.Errors {
				t.Errorf("error: %s", e)
			}
			warn := t.Logf
			if strict {
				warn = t.Errorf
			}
			for _, w := range report.Warnings {
				warn("warning: %s", w)
			}
		})
	}
}

// TestPackageVerifyTakesWhatKUDOsVerifyTook: KUDO v0.19's own test packages
// (testdata/kudo-v0.19, copied from its module's test/) whose templates
// render only with the value an Instance sets for a required parameter
// without default verify without error, as KUDO's package verify said
// "package is valid" of them.
func TestPackageVerifyTakesWhatKUDOsVerifyTook(t *testing.T) {
	verifyEach(t, []string{
		filepath.Join("testdata", "kudo-v0.19", "immutable-param"),
		filepath.Join("testdata", "kudo-v0.19", "simple-op-0.2.0"),
	}, false)
}
