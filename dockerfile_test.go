package main

import (
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The image is built where no Docker engine runs here: check at least that
// the Dockerfile and .dockerignore let in every source file of the manager,
// so a new top-level package cannot break the image unnoticed.
func TestDockerfileCopiesTheManagersSources(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/kudo-ng/kudo"
	needed := []string{"go.mod", "go.sum"}
	files, err := exec.Command("go", "list", "-f", "{{range .GoFiles}}{{.}} {{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	needed = append(needed, strings.Fields(string(files))...)
	for _, pkg := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(pkg, module+"/"); ok {
			top, _, _ := strings.Cut(rel, "/")
			needed = append(needed, top+"/")
		}
	}
	slices.Sort(needed)
	needed = slices.Compact(needed)

	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages := strings.Split(string(dockerfile), "\nFROM ")
	if len(stages) != 3 {
		t.Fatalf("Dockerfile: want a builder stage and a runtime stage, got %d stages", len(stages)-1)
	}
	builder := stages[1]
	// A build of main.go alone misses the package's other files.
	if !regexp.MustCompile(`(?m)^RUN .*go build .* \.$`).MatchString(builder) {
		t.Error("the Dockerfile's builder stage does not go build the package .")
	}
	copied := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^COPY (\S+) `).FindAllStringSubmatch(builder, -1) {
		copied[m[1]] = true
	}
	ignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, line := range strings.Split(string(ignore), "\n") {
		if p, ok := strings.CutPrefix(line, "!"); ok {
			allowed[p] = true
		}
	}
	for _, p := range needed {
		if !copied[p] {
			t.Errorf("the Dockerfile's builder stage does not COPY %s", p)
		}
		if !allowed[p] && !allowed[path.Clean(p)] {
			t.Errorf(".dockerignore does not let in %s", p)
		}
	}
}
