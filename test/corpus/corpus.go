// Package corpus finds KUDO's real operator packages, the conformance corpus
// that kudo-ng must verify, install and run unchanged. It is not part of the
// repository: the tests that need it read it from the directory that
// KUDO_OPERATORS names, laid out as kudobuilder/operators' repository/
// (DIR/<name>/operator, DIR/<name>/tests), and skip when there is none.
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Variable names the corpus' directory.
const Variable = "KUDO_OPERATORS"

// Dir is the corpus' directory: $KUDO_OPERATORS, else, when it is not set,
// ../shared/conformance beside the repository if that exists; "" is absent,
// as is the variable set empty. A directory the variable names that does not
// exist is an error, not a skip: whoever set it meant the specs to run.
func Dir() (string, error) {
	if dir, set := os.LookupEnv(Variable); set {
		if dir == "" {
			return "", nil
		}
		if _, err := os.Stat(dir); err != nil {
			return "", fmt.Errorf("%s=%s: %w", Variable, dir, err)
		}
		return filepath.Abs(dir)
	}
	corpusBeside := filepath.Join(Root(), "..", "shared", "conformance")
	if _, err := os.Stat(corpusBeside); err != nil {
		return "", nil
	}
	return filepath.Abs(corpusBeside)
}

// Root is the repository's top directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Examples is the directory of the project's own example packages.
func Examples() string { return filepath.Join(Root(), "examples") }

// SkipReason is the one line a test that needs the corpus says when it is
// absent.
const SkipReason = "the conformance corpus is absent: set " + Variable + "=DIR (kudobuilder/operators' repository/) to run this"

// Require returns the corpus' directory, or skips the test when it is absent.
func Require(t testing.TB) string {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		t.Skip(SkipReason)
	}
	return dir
}

// Package is the operator/ directory of the corpus' package name.
func Package(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(Require(t), name, "operator")
}
