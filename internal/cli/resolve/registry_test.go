package resolve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/ocipkg/ocitest"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/corpus"
)

// helloAt is the hello example as operatorVersion version.
func helloAt(t *testing.T, version string) *packages.Package {
	t.Helper()
	hello, err := packages.Read(filepath.Join(corpus.Examples(), "hello", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range hello.Files {
		if name == packages.OperatorFileName {
			data = []byte(strings.Replace(string(data), "operatorVersion: 0.1.0", "operatorVersion: "+version, 1))
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := packages.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestARepositoryInARegistryListsItsTagsAsVersions: search, repo add and
// install by name read an OCI repository's tags as its versions; tags of
// signatures and of other artifacts are no versions.
func TestARepositoryInARegistryListsItsTagsAsVersions(t *testing.T) {
	// Without the referrers API, a signature is also a tag (sha256-…).
	host, c := ocitest.Registry(t, false, nil)
	repository := "oci://" + host + "/team/hello"
	ctx := context.Background()
	var newest *ocipkg.Pushed
	for _, version := range []string{"0.1.0", "0.2.0"} {
		pushed, err := c.Push(ctx, helloAt(t, version), repository+":"+version)
		if err != nil {
			t.Fatal(err)
		}
		newest = pushed
	}
	if _, err := c.Push(ctx, helloAt(t, "0.2.0"), repository+":latest"); err != nil {
		t.Fatal(err)
	}
	signer, _ := ocitest.Signer(t)
	if _, err := c.Sign(ctx, repository+":0.2.0", signer); err != nil {
		t.Fatal(err)
	}

	access := Registry{PlainHTTP: true}
	index, err := Index(ctx, repository, access)
	if err != nil {
		t.Fatal(err)
	}
	listed := make([]string, 0, 2)
	for _, pv := range index.Entries["hello"] {
		listed = append(listed, pv.OperatorVersion+" "+pv.URLs[0])
	}
	if len(index.Entries) != 1 || len(listed) != 2 || listed[0] != "0.2.0 "+repository+"@"+newest.Digest {
		t.Errorf("index = %s, want hello 0.2.0 (%s) then 0.1.0", strings.Join(listed, ","), newest.Digest)
	}

	p, err := Package(ctx, Request{Ref: "hello", Repo: repository, Registry: access})
	if err != nil {
		t.Fatal(err)
	}
	if p.Operator.OperatorVersion != "0.2.0" || p.Origin != repository+"@"+newest.Digest {
		t.Errorf("install hello = %s from %s, want the newest by its digest", p.Operator.OperatorVersion, p.Origin)
	}
	p, err = Package(ctx, Request{Ref: "hello", Repo: repository, OperatorVersion: "0.1.0", Registry: access})
	if err != nil || p.Operator.OperatorVersion != "0.1.0" {
		t.Errorf("install hello --operator-version 0.1.0 = %v, %v", p, err)
	}
	if _, err := Index(ctx, repository+":0.1.0", access); err == nil || !strings.Contains(err.Error(), "names no tag nor digest") {
		t.Errorf("Index of a tag = %v", err)
	}
}

// TestAPackageFromARegistryMayNotDependOnAPath: a path a registry's package
// names would be whatever the user running the CLI has there, even a
// package that exists.
func TestAPackageFromARegistryMayNotDependOnAPath(t *testing.T) {
	dir := t.TempDir()
	leaf := filepath.Join(dir, "leaf")
	if err := os.MkdirAll(leaf, 0o755); err != nil {
		t.Fatal(err)
	}
	operator := "apiVersion: kudo.dev/v1beta1\nname: leaf\noperatorVersion: 0.1.0\nkubernetesVersion: 1.20.0\nplans:\n  deploy: {}\n"
	if err := os.WriteFile(filepath.Join(leaf, "operator.yaml"), []byte(operator), 0o644); err != nil {
		t.Fatal(err)
	}
	writePackage(t, dir, "parent", leaf)
	parent, err := packages.Read(filepath.Join(dir, "parent"))
	if err != nil {
		t.Fatal(err)
	}
	if deps, err := Dependencies(context.Background(), parent, filepath.Join(dir, "parent"), "", Registry{}); err != nil || len(deps) != 1 {
		t.Fatalf("from its directory, the parent depends on %v: %v", deps, err)
	}

	host, c := ocitest.Registry(t, true, nil)
	ref := "oci://" + host + "/team/parent:0.1.0"
	// Dependencies named the task's package by what it resolved to.
	if parent, err = packages.Read(filepath.Join(dir, "parent")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(context.Background(), parent, ref); err != nil {
		t.Fatal(err)
	}
	pulled, err := Package(context.Background(), Request{Ref: ref, Registry: Registry{PlainHTTP: true}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dependencies(context.Background(), pulled, ref, "", Registry{PlainHTTP: true})
	want := "dependency " + leaf + " of parent: a package read from " + ref + " may not name a directory or file: " +
		"name its package oci://… or by its name in a repository"
	if err == nil || err.Error() != want {
		t.Errorf("the dependencies of the pulled parent: %v, want %s", err, want)
	}
}
