package resolve

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kudo-ng/kudo/internal/packages"
)

// writePackage writes a package named name whose only task installs dep.
func writePackage(t *testing.T, dir, name, dep string) {
	t.Helper()
	operator := "apiVersion: kudo.dev/v1beta1\nname: " + name + "\noperatorVersion: 0.1.0\nkubernetesVersion: 1.20.0\n" +
		"tasks:\n  - name: dep\n    kind: KudoOperator\n    spec:\n      package: " + dep + "\n" +
		"plans:\n  deploy:\n    phases:\n      - name: main\n        steps:\n          - name: dep\n            tasks: [dep]\n"
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "operator.yaml"), []byte(operator), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDependencies(t *testing.T) {
	dir := t.TempDir()
	writePackage(t, dir, "a", "../b")
	writePackage(t, dir, "b", "../a")
	p, err := packages.Read(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dependencies(context.Background(), p, filepath.Join(dir, "a"), "", Registry{})
	if err == nil || err.Error() != "circular dependency: a → b → a" {
		t.Fatalf("a cycle: %v", err)
	}

	writePackage(t, dir, "b", "../c")
	if err := os.MkdirAll(filepath.Join(dir, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	leaf := "apiVersion: kudo.dev/v1beta1\nname: c\noperatorVersion: 0.2.0\nkubernetesVersion: 1.20.0\nplans:\n  deploy: {}\n"
	if err := os.WriteFile(filepath.Join(dir, "c", "operator.yaml"), []byte(leaf), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = packages.Read(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	deps, err := Dependencies(context.Background(), p, filepath.Join(dir, "a"), "", Registry{})
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 2 || deps[0].Operator.Name != "c" || deps[1].Operator.Name != "b" {
		t.Fatalf("dependencies, deepest first: %v", deps)
	}
	// The tasks now name what they resolved to, for the controller.
	if spec := p.Operator.Tasks[0].Spec; spec.Package != "b" || spec.OperatorVersion != "0.1.0" {
		t.Errorf("task spec = %+v", spec)
	}
}
