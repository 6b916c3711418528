package typedapi_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/typedapi"
	"github.com/kudo-ng/kudo/test/corpus"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// crdOf is the CustomResourceDefinition of the package in dir, which the
// API server's own validation of CustomResourceDefinitions accepts.
func crdOf(t *testing.T, dir string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	pkg, err := packages.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, ov, err := pkg.Convert("default")
	if err != nil {
		t.Fatal(err)
	}
	names, err := typedapi.NamesOf(pkg.Operator.Name, ov.Spec.TypedAPI)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := typedapi.CRD(names, pkg.Operator.Name, ov.Spec.Parameters)
	if err != nil {
		t.Fatal(err)
	}
	if errs := validateCRD(t, crd); len(errs) > 0 {
		t.Fatalf("the API server would refuse the CustomResourceDefinition of %s: %v", dir, errs)
	}
	return crd
}

func validateCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) []string {
	t.Helper()
	// As the API server holds it once created.
	crd = crd.DeepCopy()
	crd.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
	var internal apiextensionsinternal.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, &internal, nil); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal) {
		out = append(out, e.Error())
	}
	return out
}

// TestSchemaOfEveryPackage: the CustomResourceDefinition of each example
// package and of each package of the conformance corpus, as golden files.
func TestSchemaOfEveryPackage(t *testing.T) {
	dirs := map[string]string{}
	examples, err := filepath.Glob(filepath.Join(corpus.Examples(), "*", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range examples {
		dirs["example-"+filepath.Base(filepath.Dir(dir))] = dir
	}
	packagesOfCorpus, err := filepath.Glob(filepath.Join(corpus.Require(t), "*", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range packagesOfCorpus {
		dirs["corpus-"+filepath.Base(filepath.Dir(dir))] = dir
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			got, err := yaml.Marshal(crdOf(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", dir, golden, diff)
			}
		})
	}
}

func schemaOf(t *testing.T, parameters ...kudov1beta1.Parameter) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	names, err := typedapi.NamesOf("test", nil)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := typedapi.CRD(names, "test", parameters)
	if err != nil {
		t.Fatal(err)
	}
	if errs := validateCRD(t, crd); len(errs) > 0 {
		t.Fatalf("the API server would refuse it: %v", errs)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSchemaOfEachParameterType(t *testing.T) {
	for _, tc := range []struct {
		name  string
		param kudov1beta1.Parameter
		want  string
	}{
		{"untyped is a string", kudov1beta1.Parameter{Name: "P", Default: ptr.To("3")},
			`{"description":"Default of the newest version: \"3\".","type":"string"}`},
		{"string with an enum", kudov1beta1.Parameter{Name: "P", Type: "string", Enum: &[]string{"a", "b"}, Description: "d"},
			`{"description":"d.","type":"string","enum":["a","b"]}`},
		{"integer", kudov1beta1.Parameter{Name: "P", Type: "integer", Default: ptr.To("3"), Enum: &[]string{"1", "3"}},
			`{"description":"Default of the newest version: 3.","type":"integer","enum":[1,3]}`},
		{"number", kudov1beta1.Parameter{Name: "P", Type: "number", Default: ptr.To("0.5")},
			`{"description":"Default of the newest version: 0.5.","type":"number"}`},
		{"boolean", kudov1beta1.Parameter{Name: "P", Type: "boolean", Default: ptr.To("true")},
			`{"description":"Default of the newest version: true.","type":"boolean"}`},
		{"array", kudov1beta1.Parameter{Name: "P", Type: "array", Default: ptr.To(`["a",{"b":1}]`)},
			`{"description":"Default of the newest version: [\"a\",{\"b\":1}].","type":"array","items":{"x-kubernetes-preserve-unknown-fields":true}}`},
		{"array with no default", kudov1beta1.Parameter{Name: "P", Type: "array", Default: ptr.To("null")},
			`{"type":"array","items":{"x-kubernetes-preserve-unknown-fields":true}}`},
		{"map", kudov1beta1.Parameter{Name: "P", Type: "map", Default: ptr.To(`{"a":{"b":[1]}}`)},
			`{"description":"Default of the newest version: {\"a\":{\"b\":[1]}}.","type":"object","x-kubernetes-preserve-unknown-fields":true}`},
		{"a string holding YAML stays a string", kudov1beta1.Parameter{Name: "P", Default: ptr.To("a: 1\nb: [2]\n")},
			`{"description":"Default of the newest version: \"a: 1\\nb: [2]\\n\".","type":"string"}`},
		{"the description, the parameter's name when the field differs, the trigger",
			kudov1beta1.Parameter{Name: "log.level", DisplayName: "Log level", Trigger: "update"},
			`{"description":"Log level. Parameter \"log.level\". A change runs the plan \"update\".","type":"string"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := schemaOf(t, tc.param)
			got := asJSON(t, spec.Properties[typedapi.FieldOf(tc.param.Name)])
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestSchemaRequiresWhatKUDORequires(t *testing.T) {
	spec := schemaOf(t,
		kudov1beta1.Parameter{Name: "NO_DEFAULT", Required: ptr.To(true)},
		kudov1beta1.Parameter{Name: "DEFAULTED", Required: ptr.To(true), Default: ptr.To("x")},
		kudov1beta1.Parameter{Name: "OPTIONAL", Required: ptr.To(false)},
	)
	if strings.Join(spec.Required, ",") != "NO_DEFAULT" {
		t.Errorf("required: %v, want only NO_DEFAULT", spec.Required)
	}
	if spec.Default != nil {
		t.Errorf("spec's default %s: with a required field, the spec is required, not defaulted", spec.Default.Raw)
	}
	if spec := schemaOf(t, kudov1beta1.Parameter{Name: "OPTIONAL"}); string(spec.Default.Raw) != "{}" {
		t.Errorf("spec's default %s, want {} so an object without a spec is defaulted too", spec.Default.Raw)
	}
}

func TestSchemaKeepsImmutableParameters(t *testing.T) {
	spec := schemaOf(t, kudov1beta1.Parameter{Name: "DISK", Immutable: ptr.To(true), Default: ptr.To("5Gi")},
		kudov1beta1.Parameter{Name: "in", Immutable: ptr.To(true)})
	if got := asJSON(t, spec.Properties["DISK"].XValidations); got != `[{"rule":"self == oldSelf","message":"parameter DISK is immutable"}]` {
		t.Errorf("DISK's rules: %s", got)
	}
	want := `[{"rule":"has(self.DISK) == has(oldSelf.DISK)","message":"parameter DISK is immutable: it cannot be set or unset after creation"},` +
		`{"rule":"has(self.__in__) == has(oldSelf.__in__)","message":"parameter in is immutable: it cannot be set or unset after creation"}]`
	if got := asJSON(t, spec.XValidations); got != want {
		t.Errorf("spec's rules:\n got %s\nwant %s", got, want)
	}
}

func TestSchemaKeepsTheFieldsOfOlderVersions(t *testing.T) {
	spec, err := typedapi.SpecSchema([]kudov1beta1.Parameter{{Name: "NEW"}}, []kudov1beta1.Parameter{{Name: "OLD", Type: "integer"}, {Name: "NEW"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, spec.Properties["OLD"]); got != `{"description":"Parameter OLD of an older version of the package.","x-kubernetes-preserve-unknown-fields":true}` {
		t.Errorf("OLD: %s", got)
	}
	if spec.Properties["NEW"].Type != "string" {
		t.Errorf("NEW: %+v", spec.Properties["NEW"])
	}
}

func TestSchemaRefusesADefaultOfTheWrongType(t *testing.T) {
	names, _ := typedapi.NamesOf("test", nil)
	_, err := typedapi.CRD(names, "test", []kudov1beta1.Parameter{{Name: "N", Type: "integer", Default: ptr.To("three")}})
	if err == nil || !strings.Contains(err.Error(), `parameter N: default: strconv.ParseInt: parsing "three"`) {
		t.Errorf("got %v", err)
	}
}

func TestParametersRoundTrip(t *testing.T) {
	parameters := []kudov1beta1.Parameter{
		{Name: "S"}, {Name: "I", Type: "integer"}, {Name: "N", Type: "number"}, {Name: "B", Type: "boolean"},
		{Name: "A", Type: "array"}, {Name: "M", Type: "map"}, {Name: "log.level"}, {Name: "UNSET"},
	}
	values := map[string]string{"S": "x: 1", "I": "3", "N": "0.5", "B": "true", "A": `["a",1]`, "M": `{"k":{"v":[true]}}`, "log.level": "debug"}
	spec, err := typedapi.SpecValues(values, parameters)
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, spec); got != `{"A":["a",1],"B":true,"I":3,"M":{"k":{"v":[true]}},"N":0.5,"S":"x: 1","log_level":"debug"}` {
		t.Errorf("spec: %s", got)
	}
	// As an object read from the API server holds them: integers as int64.
	spec["I"] = int64(3)
	spec["OLDER_VERSIONS"] = "kept, not run"
	back, err := typedapi.Parameters(spec, parameters)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(values, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := typedapi.SpecValues(map[string]string{"NOPE": "1"}, parameters); err == nil ||
		!strings.Contains(err.Error(), "parameter NOPE: the OperatorVersion has no such parameter") {
		t.Errorf("an unknown parameter: %v", err)
	}
}

func TestInstanceSpecOfATypedObject(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Parameters: []kudov1beta1.Parameter{
		{Name: "NODE_COUNT", Type: "integer"}, {Name: "PASSWORD", Default: ptr.To("changeme")},
	}}}
	ov.Name = "zookeeper-0.3.1"
	spec := map[string]any{
		"operatorVersion": "ignored: the caller chose ov", "serviceAccountName": "zk",
		"NODE_COUNT": int64(5), "PASSWORD": "changeme",
		"secretParameters": map[string]any{"PASSWORD": map[string]any{"name": "zk-secret", "key": "password"}},
		"kubeConfig":       map[string]any{"secretRef": map[string]any{"name": "prod-kubeconfig"}},
	}
	got, err := typedapi.InstanceSpec(spec, ov)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"operatorVersion":{"name":"zookeeper-0.3.1"},"parameters":{"NODE_COUNT":"5"},` +
		`"secretParameters":{"PASSWORD":{"name":"zk-secret","key":"password"}},"serviceAccountName":"zk",` +
		`"kubeConfig":{"secretRef":{"name":"prod-kubeconfig"}},"planExecution":{}}`
	if s := asJSON(t, got); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

func TestOperatorVersionOfATypedObject(t *testing.T) {
	ov := func(name, operator, version string) kudov1beta1.OperatorVersion {
		v := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: version}}
		v.Name, v.Spec.Operator.Name = name, operator
		return v
	}
	versions := []kudov1beta1.OperatorVersion{ov("zk-1", "zk", "1.0.0"), ov("zk-2", "zk", "2.0.0"), ov("kafka-9", "kafka", "9.0.0")}
	for _, tc := range []struct {
		name          string
		spec          map[string]any
		current, want string
	}{
		{"the newest when nothing names one", nil, "", "zk-2"},
		{"the one the Instance runs: a new version is no upgrade", nil, "zk-1", "zk-1"},
		{"the one the spec names", map[string]any{"operatorVersion": "zk-1"}, "zk-2", "zk-1"},
		{"another Operator's", map[string]any{"operatorVersion": "kafka-9"}, "", "error: OperatorVersion kafka-9 is of Operator kafka, not zk"},
		{"a missing one", map[string]any{"operatorVersion": "zk-3"}, "", `error: OperatorVersion "zk-3" not found in the namespace`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := typedapi.OperatorVersionOf(tc.spec, tc.current, "zk", versions)
			name := ""
			if err != nil {
				name = "error: " + err.Error()
			} else {
				name = got.Name
			}
			if !strings.HasPrefix(name, tc.want) {
				t.Errorf("got %s, want %s", name, tc.want)
			}
		})
	}
	if _, err := typedapi.OperatorVersionOf(nil, "", "redis", versions); err == nil ||
		!strings.Contains(err.Error(), "no OperatorVersion of Operator redis in the namespace") {
		t.Errorf("none of the Operator: %v", err)
	}
}
