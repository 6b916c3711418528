package resolve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestAPackageIsCheckedBeforeItsDependenciesAreFetched: upgrade refuses
// another package, or an older one, before it reaches for what it depends
// on (a registry, a repository).
func TestAPackageIsCheckedBeforeItsDependenciesAreFetched(t *testing.T) {
	dir := t.TempDir()
	writePackage(t, dir, "a", "../missing")
	req := Request{Ref: filepath.Join(dir, "a")}

	refused := errors.New("package a is not b, the package of Instance x")
	var checked string
	_, _, err := PackageAndDependencies(context.Background(), req, func(p *packages.Package) error {
		checked = p.Operator.Name
		return refused
	})
	if !errors.Is(err, refused) || checked != "a" {
		t.Fatalf("PackageAndDependencies = %v after checking %q, want the check's refusal of a, before its missing dependency", err, checked)
	}

	_, _, err = PackageAndDependencies(context.Background(), req, nil)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("PackageAndDependencies = %v, want the missing dependency named", err)
	}

	writePackage(t, dir, "missing", "../a-leaf")
	leaf := "apiVersion: kudo.dev/v1beta1\nname: leaf\noperatorVersion: 0.3.0\nkubernetesVersion: 1.20.0\nplans:\n  deploy: {}\n"
	if err := os.MkdirAll(filepath.Join(dir, "a-leaf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a-leaf", "operator.yaml"), []byte(leaf), 0o644); err != nil {
		t.Fatal(err)
	}
	p, deps, err := PackageAndDependencies(context.Background(), req, func(*packages.Package) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if p.Operator.Name != "a" || len(deps) != 2 || deps[0].Operator.Name != "leaf" || deps[1].Operator.Name != "missing" {
		t.Fatalf("PackageAndDependencies = %s and %v, want a and its dependencies, deepest first", p.Operator.Name, deps)
	}
}
