package internal_test

import (
	"io/fs"
	"os"
	"path/filepath"
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
