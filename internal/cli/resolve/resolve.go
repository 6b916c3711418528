// Package resolve finds the package a kubectl-kudo verb names — a
// directory, a tarball, a URL, a package in an OCI registry or a name in a
// repository — and the packages its KudoOperator tasks depend on.
package resolve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/packages"
)

// Request says which package to find.
type Request struct {
	// Ref is a directory, a .tgz file, an http(s) or file URL of a
	// tarball, an oci:// reference, or a name.
	Ref string
	// Repo is the URL of the repository a name is looked up in.
	Repo            string
	AppVersion      string
	OperatorVersion string
	// Registry is how OCI registries are reached.
	Registry Registry
}

// Package finds and reads a package.
func Package(ctx context.Context, req Request) (*packages.Package, error) {
	switch {
	case ocipkg.IsRef(req.Ref):
		return pull(ctx, req)
	case strings.HasPrefix(req.Ref, "http://") || strings.HasPrefix(req.Ref, "https://") || strings.HasPrefix(req.Ref, fileScheme):
		data, err := download(ctx, req.Ref)
		if err != nil {
			return nil, err
		}
		return tarball(req.Ref, data)
	case exists(req.Ref):
		return packages.Read(req.Ref)
	case IsPath(req.Ref):
		return nil, fmt.Errorf("package %s: no such directory or file", req.Ref)
	}
	return fromRepo(ctx, req)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

func tarball(name string, data []byte) (*packages.Package, error) {
	p, err := packages.ReadTarball(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// fromRepo finds a package by name (and versions) in a repository's index.
func fromRepo(ctx context.Context, req Request) (*packages.Package, error) {
	if req.Repo == "" {
		return nil, fmt.Errorf("package %s is not a directory or file, and no repository is configured: pass --repo URL", req.Ref)
	}
	index, err := Index(ctx, req.Repo, req.Registry)
	if err != nil {
		return nil, fmt.Errorf("package %s is not a directory or file, and %w: add a repository with kubectl kudo repo add NAME URL "+
			"and use it with kubectl kudo repo context NAME, or pass --repo URL", req.Ref, err)
	}
	base := strings.TrimSuffix(req.Repo, "/")
	for _, pv := range index.Entries[req.Ref] {
		if (req.OperatorVersion != "" && pv.OperatorVersion != req.OperatorVersion) || (req.AppVersion != "" && pv.AppVersion != req.AppVersion) {
			continue
		}
		if len(pv.URLs) == 0 {
			return nil, fmt.Errorf("repository %s lists %s %s without a URL", req.Repo, pv.Name, pv.OperatorVersion)
		}
		url := pv.URLs[0]
		if ocipkg.IsRef(url) {
			return pull(ctx, Request{Ref: url, Registry: req.Registry})
		}
		if !strings.Contains(url, "://") {
			url = base + "/" + url
		}
		// Only a repository on disk may send the CLI to a file: another's
		// index would have it read whatever it names of this machine.
		if strings.HasPrefix(url, fileScheme) && !strings.HasPrefix(base, fileScheme) {
			return nil, fmt.Errorf("repository %s lists %s %s at %s: only a repository on disk (file://) may name a file",
				req.Repo, pv.Name, pv.OperatorVersion, url)
		}
		tgz, err := download(ctx, url)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(tgz)
		if pv.Digest != "" && hex.EncodeToString(sum[:]) != pv.Digest {
			return nil, fmt.Errorf("%s: digest mismatch: the repository's index says %s", url, pv.Digest)
		}
		return tarball(url, tgz)
	}
	return nil, fmt.Errorf("package %s%s not found in repository %s", req.Ref, versions(req), req.Repo)
}

// Index downloads and parses the index of the repository at url; that of
// a repository in an OCI registry (oci://REGISTRY/REPOSITORY) lists the
// packages its tags name, reached as registry says.
func Index(ctx context.Context, url string, registry Registry) (*packages.Index, error) {
	if ocipkg.IsRef(url) {
		return registryIndex(ctx, url, registry)
	}
	data, err := download(ctx, strings.TrimSuffix(url, "/")+"/"+packages.IndexFileName)
	if err != nil {
		return nil, fmt.Errorf("repository %s is unreachable: %w", url, err)
	}
	index, err := packages.ParseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", url, err)
	}
	return index, nil
}

func versions(req Request) string {
	s := ""
	if req.OperatorVersion != "" {
		s += " operatorVersion " + req.OperatorVersion
	}
	if req.AppVersion != "" {
		s += " appVersion " + req.AppVersion
	}
	return s
}

// IsPath says whether a package is named by a directory or a file (a file://
// URL too), rather than by a URL of elsewhere or a name in a repository.
func IsPath(ref string) bool {
	return strings.HasPrefix(ref, fileScheme) || !strings.Contains(ref, "://") && strings.ContainsAny(ref, "/.")
}

// PackageAndDependencies reads the package req names and then the packages
// its KudoOperator tasks install (Dependencies), which go with it: what
// install, upgrade and rbac work from. check, when not nil, refuses the
// package before its dependencies are fetched.
func PackageAndDependencies(ctx context.Context, req Request, check func(*packages.Package) error) (
	*packages.Package, []*packages.Package, error) {
	p, err := Package(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	if check != nil {
		if err := check(p); err != nil {
			return nil, nil, err
		}
	}
	deps, err := Dependencies(ctx, p, req.Ref, req.Repo, req.Registry)
	if err != nil {
		return nil, nil, err
	}
	return p, deps, nil
}

// Dependencies finds, depth first, the packages the KudoOperator tasks of p
// install, each once; a package that depends on itself, directly or not, is
// an error naming the cycle. ref is where p was found. A dependency's
// package is an oci:// reference (reached as registry says), a name in the
// repository, or, for a package read from this machine's disk, a directory
// or file, relative to its parent's directory. A package from a registry or
// a URL may not name a path: it would name whatever the user running the
// CLI has there. Each task is rewritten to name the package and versions it
// resolved to, which is what the controller looks up in the cluster.
func Dependencies(ctx context.Context, p *packages.Package, ref string, repo string, registry Registry) ([]*packages.Package, error) {
	var out []*packages.Package
	seen := map[string]bool{}
	var walk func(p *packages.Package, parentRef string, chain []string) error
	walk = func(p *packages.Package, parentRef string, chain []string) error {
		onDisk, dir := exists(parentRef), ""
		if isDir(parentRef) {
			dir = parentRef
		}
		for k := range p.Operator.Tasks {
			t := &p.Operator.Tasks[k]
			if t.Kind != kudov1beta1.KudoOperatorTaskKind {
				continue
			}
			ref := t.Spec.Package
			if IsPath(ref) && !onDisk {
				return fmt.Errorf("dependency %s of %s: a package read from %s may not name a directory or file: "+
					"name its package oci://… or by its name in a repository", t.Spec.Package, p.Operator.Name, parentRef)
			}
			if dir != "" && exists(filepath.Join(dir, ref)) {
				ref = filepath.Join(dir, ref)
			}
			dep, err := Package(ctx, Request{Ref: ref, Repo: repo, AppVersion: t.Spec.AppVersion, OperatorVersion: t.Spec.OperatorVersion,
				Registry: registry})
			if err != nil {
				return fmt.Errorf("dependency %s of %s: %w", t.Spec.Package, p.Operator.Name, err)
			}
			name := dep.Operator.Name
			t.Spec.Package, t.Spec.OperatorVersion, t.Spec.AppVersion = name, dep.Operator.OperatorVersion, dep.Operator.AppVersion
			for _, c := range chain {
				if c == name {
					return fmt.Errorf("circular dependency: %s → %s", strings.Join(chain, " → "), name)
				}
			}
			key := name + "@" + dep.Operator.AppVersion + "_" + dep.Operator.OperatorVersion
			if seen[key] {
				continue
			}
			seen[key] = true
			if err := walk(dep, ref, append(chain, name)); err != nil {
				return err
			}
			out = append(out, dep)
		}
		return nil
	}
	return out, walk(p, ref, []string{p.Operator.Name})
}
