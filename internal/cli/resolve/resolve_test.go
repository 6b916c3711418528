package resolve

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestARepositoryOnDiskServesItsPackagesByName: a file:// repository (an
// index and tarballs in a directory, as repo index writes them) serves a
// package by name, as an HTTP one does; a file:// URL reads a tarball too.
func TestARepositoryOnDiskServesItsPackagesByName(t *testing.T) {
	dir := t.TempDir()
	leaf := "apiVersion: kudo.dev/v1beta1\nname: c\noperatorVersion: 0.2.0\nkubernetesVersion: 1.20.0\nplans:\n  deploy: {}\n"
	if err := os.MkdirAll(filepath.Join(dir, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c", "operator.yaml"), []byte(leaf), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	writeRepository(t, filepath.Join(dir, "c"), repo, "file://"+repo)

	p, err := Package(context.Background(), Request{Ref: "c", Repo: "file://" + repo})
	if err != nil || p.Operator.Name != "c" || p.Operator.OperatorVersion != "0.2.0" {
		t.Fatalf("c from file://%s: %v, %v", repo, p, err)
	}
	if _, err := Package(context.Background(), Request{Ref: "file://" + filepath.Join(repo, "c-0.2.0.tgz")}); err != nil {
		t.Errorf("a file URL of a tarball: %v", err)
	}
	_, err = Package(context.Background(), Request{Ref: "d", Repo: "file://" + repo})
	if want := "package d not found in repository file://" + repo; err == nil || err.Error() != want {
		t.Errorf("a package the repository lacks: %v, want %q", err, want)
	}
}

// TestOnlyARepositoryOnDiskMayNameAFile: an HTTP repository's index that
// lists a package at a file:// URL would have the CLI read a file of the
// machine it runs on; it is refused.
func TestOnlyARepositoryOnDiskMayNameAFile(t *testing.T) {
	dir := t.TempDir()
	index := "apiVersion: v1\nentries:\n  c:\n  - name: c\n    operatorVersion: 0.2.0\n    urls: [file:///etc/passwd]\n"
	if err := os.WriteFile(filepath.Join(dir, "index.yaml"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	_, err := Package(context.Background(), Request{Ref: "c", Repo: srv.URL})
	want := "repository " + srv.URL + " lists c 0.2.0 at file:///etc/passwd: only a repository on disk (file://) may name a file"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// TestAPackageFromAURLMayNotDependOnAFileURL: a file:// URL names a file of
// the machine the CLI runs on, as a path does: a package from elsewhere may
// not name one as its dependency.
func TestAPackageFromAURLMayNotDependOnAFileURL(t *testing.T) {
	dir := t.TempDir()
	writePackage(t, dir, "a", "file:///etc/passwd")
	writeRepository(t, filepath.Join(dir, "a"), filepath.Join(dir, "served"), "")
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(dir, "served"))))
	t.Cleanup(srv.Close)
	_, _, err := PackageAndDependencies(context.Background(), Request{Ref: srv.URL + "/a-0.1.0.tgz"}, nil)
	want := "dependency file:///etc/passwd of a: a package read from " + srv.URL + "/a-0.1.0.tgz may not name a directory or file"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %v, want one starting %q", err, want)
	}
}

// TestAnUnreachableRepositorySaysWhichItTriedAndHowToAddOne: a package
// named in a repository that cannot be reached (KUDO's community one, the
// default, where there is no internet) names the repository tried and how
// to use another.
func TestAnUnreachableRepositorySaysWhichItTriedAndHowToAddOne(t *testing.T) {
	_, err := Package(context.Background(), Request{Ref: "zookeeper", Repo: "file:///nowhere"})
	want := "package zookeeper is not a directory or file, and repository file:///nowhere is unreachable: open /nowhere/index.yaml: " +
		"no such file or directory: add a repository with kubectl kudo repo add NAME URL and use it with kubectl kudo repo context NAME, or pass --repo URL"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %q", err, want)
	}
}

// writeRepository writes the tarball of the package in pkg into repo, and
// the index of repo serving it from url.
func writeRepository(t *testing.T, pkg, repo, url string) {
	t.Helper()
	p, err := packages.Read(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	var tgz bytes.Buffer
	if err := p.WriteTarball(&tgz); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, p.TarballName()), tgz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	index, err := packages.IndexDirectory(repo, url, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	data, err := index.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, packages.IndexFileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
