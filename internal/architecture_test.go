package internal_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryPackageIsMapped: docs/architecture.md's folder map names every
// package under internal/, so that a newcomer finds each.
func TestEveryPackageIsMapped(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	// A line of the map starting with internal/ names a package; a name
	// ending in / in it or in the lines that continue it (indented) names
	// one below it.
	mapped := map[string]bool{}
	var parent string
	for _, line := range strings.Split(string(doc), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
			parent = ""
			continue
		case strings.HasPrefix(line, "internal/"):
			parent = strings.TrimSuffix(fields[0], "/")
			mapped[parent] = true
			fields = fields[1:]
		case !strings.HasPrefix(line, " "):
			parent = ""
		}
		for _, f := range fields {
			if name, ok := strings.CutSuffix(strings.Trim(f, ",;:()"), "/"); ok && parent != "" && !strings.Contains(name, "/") {
				mapped[parent+"/"+name] = true
			}
		}
	}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "testdata") {
			return err
		}
		if pkg := filepath.Join("internal", filepath.Dir(path)); !mapped[pkg] {
			t.Errorf("%s is not in docs/architecture.md's folder map", pkg)
			mapped[pkg] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// eachProductFile calls visit with the path, from the repository's root,
// and the text of each Go file of the product (no tests).
func eachProductFile(t *testing.T, visit func(rel string, src []byte)) {
	t.Helper()
	root := ".."
	for _, dir := range []string{"api", "cmd", "controllers", "internal", "main.go"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			visit(rel, src)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestOneWriterPerObject: every server-side apply goes through
// internal/objects (field manager, forced ownership, the error naming the
// object, in one place), and every status write through the controllers'
// one status writer, which the patchers call: no controller or verb writes
// them its own way.
func TestOneWriterPerObject(t *testing.T) {
	writers := map[*regexp.Regexp][]string{
		regexp.MustCompile(`client\.Apply\b`): {filepath.Join("internal", "objects", "objects.go")},
		regexp.MustCompile(`\.Status\(\)\.(Patch|Update|Apply)\(|\.SubResource\("status"\)`): {
			filepath.Join("controllers", "status.go"),
		},
	}
	eachProductFile(t, func(rel string, src []byte) {
		for write, allowed := range writers {
			if write.Match(src) && !slices.Contains(allowed, rel) {
				t.Errorf("%s writes with %s: only %s may", rel, write, strings.Join(allowed, ", "))
			}
		}
	})
}

// TestOneHomePerConcept: what several parties decide, one function decides
// for all (docs/architecture.md, "One writer, one home"): the Instance of a
// typed object (typedapi.InstanceOf), and whether a registry's signature
// verifies a package (internal/trust, for the manager and the CLI alike).
func TestOneHomePerConcept(t *testing.T) {
	homes := []struct {
		call *regexp.Regexp
		home string
	}{
		{regexp.MustCompile(`typedapi\.(OperatorVersionOf|InstanceSpec)\(`), filepath.Join("internal", "typedapi")},
		{regexp.MustCompile(`\b(\w+)\.Verify\(ctx`), filepath.Join("internal", "trust")},
	}
	eachProductFile(t, func(rel string, src []byte) {
		for _, h := range homes {
			for _, m := range h.call.FindAllStringSubmatch(string(src), -1) {
				// The trust package's own Verify is the home's door.
				if strings.HasPrefix(rel, h.home+string(filepath.Separator)) || (len(m) > 1 && m[1] == "trust") {
					continue
				}
				t.Errorf("%s calls %s: only %s decides it", rel, m[0], h.home)
			}
		}
	})
}
