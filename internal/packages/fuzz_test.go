package packages

import (
	"os"
	"path/filepath"
	"testing"
)

// seedFiles adds the operator.yaml and params.yaml of every conformance
// package to a fuzz corpus.
func seedFiles(f *testing.F, name string) {
	for _, dir := range conformancePackages(f) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzOperatorFile(f *testing.F) {
	seedFiles(f, OperatorFileName)
	params, err := os.ReadFile(filepath.Join(conformanceDir, "first-operator", "operator", ParamsFileName))
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
	operator, err := os.ReadFile(filepath.Join(conformanceDir, "first-operator", "operator", OperatorFileName))
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
