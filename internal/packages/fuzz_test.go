package packages

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kudo-ng/kudo/test/corpus"
)

// seedFiles adds the file of every example package, and of every package of
// the conformance corpus when it is there, to a fuzz corpus.
func seedFiles(f *testing.F, name string) {
	dirs := examplePackages(f)
	if dir, err := corpus.Dir(); err == nil && dir != "" {
		dirs = append(dirs, conformancePackages(f)...)
	}
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzOperatorFile(f *testing.F) {
	seedFiles(f, OperatorFileName)
	params, err := os.ReadFile(filepath.Join(corpus.Examples(), "hello", "operator", ParamsFileName))
	if err != nil {
		f.Fatal(err)
	}
	template := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n")
	f.Fuzz(func(t *testing.T, operator []byte) {
		p, err := parseFiles(map[string][]byte{
			OperatorFileName: operator, ParamsFileName: params, "templates/deployment.yaml": template,
		})
		if err != nil {
			return
		}
		// Whatever parses must verify and convert without panicking.
		Verify(p, VerifyOptions{})
		_, _, _ = p.Convert("default")
	})
}

func FuzzParamsFile(f *testing.F) {
	seedFiles(f, ParamsFileName)
	f.Add([]byte("parameters:\n- name: A\n  default: [1, {a: b}]\n  type: array\n  enum: [[1]]\n"))
	operator, err := os.ReadFile(filepath.Join(corpus.Examples(), "hello", "operator", OperatorFileName))
	if err != nil {
		f.Fatal(err)
	}
	template := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: {{ .Params.replicas }}\n")
	f.Fuzz(func(t *testing.T, params []byte) {
		p, err := parseFiles(map[string][]byte{
			OperatorFileName: operator, ParamsFileName: params, "templates/deployment.yaml": template,
		})
		if err != nil {
			return
		}
		report := Verify(p, VerifyOptions{})
		_, _, err = p.Convert("default")
		if len(report.Errors) == 0 && err != nil {
			t.Fatalf("a package that verifies does not convert: %v", err)
		}
	})
}
