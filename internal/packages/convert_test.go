package packages

import (
	"strings"
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// TestArrayAndMapParametersWithoutDefaultAreNeverMissing: converting a
// package, KUDO wrote the absent default of an array or map parameter as
// YAML, so such a parameter has the default null and an Instance may leave
// it unset (Cassandra's NODE_TOLERATIONS); a required scalar without default
// stays required.
func TestArrayAndMapParametersWithoutDefaultAreNeverMissing(t *testing.T) {
	p := &Package{
		Operator: &OperatorFile{Name: "cassandra", OperatorVersion: "1.0.0"},
		Params: &ParamsFile{Parameters: []Parameter{
			{Name: "NODE_TOLERATIONS", Type: kudov1beta1.ArrayValueType},
			{Name: "LABELS", Type: kudov1beta1.MapValueType},
			{Name: "PASSWORD"},
			{Name: "NODES", Default: 3},
		}},
	}
	_, ov, err := p.Convert("ns")
	if err != nil {
		t.Fatal(err)
	}
	defaults := map[string]*string{}
	for i := range ov.Spec.Parameters {
		defaults[ov.Spec.Parameters[i].Name] = ov.Spec.Parameters[i].Default
	}
	for _, name := range []string{"NODE_TOLERATIONS", "LABELS"} {
		if d := defaults[name]; d == nil || *d != "null" {
			t.Errorf("%s: default %v, want null", name, d)
		}
	}
	if defaults["PASSWORD"] != nil || defaults["NODES"] == nil || *defaults["NODES"] != "3" {
		t.Errorf("scalar defaults changed: PASSWORD %v, NODES %v", defaults["PASSWORD"], defaults["NODES"])
	}
	if _, err := params.Resolve(ov.Spec.Parameters, nil, []string{"PASSWORD=s3cr3t"}); err != nil {
		t.Errorf("installing without the array and map parameters: %v", err)
	}
	if _, err := params.Resolve(ov.Spec.Parameters, nil, nil); err == nil {
		t.Error("a required scalar without default may be left out")
	}
	values, err := params.Values(ov.Spec.Parameters, nil)
	if err != nil || values["NODE_TOLERATIONS"] != nil && len(values["NODE_TOLERATIONS"].([]any)) != 0 {
		t.Errorf("NODE_TOLERATIONS renders as %#v, %v; want an empty list", values["NODE_TOLERATIONS"], err)
	}
}

func TestAnOperatorVersionNamesTheDigestItsPackageCameFrom(t *testing.T) {
	p := &Package{Operator: &OperatorFile{Name: "hello", OperatorVersion: "0.1.0"}, Params: &ParamsFile{}}
	_, ov, err := p.Convert("ns")
	if err != nil || ov.Annotations[kudov1beta1.PackageDigestAnnotation] != "" {
		t.Fatalf("a package from a directory: %v, %v; want no digest", ov.Annotations, err)
	}
	p.Origin = "oci://registry.example/packages/hello@sha256:" + strings.Repeat("a", 64)
	if _, ov, err = p.Convert("ns"); err != nil || ov.Annotations[kudov1beta1.PackageDigestAnnotation] != p.Origin {
		t.Errorf("a package from a registry: %v, %v; want %s", ov.Annotations, err, p.Origin)
	}
}
