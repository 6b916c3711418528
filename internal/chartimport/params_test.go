package chartimport

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The values of operator-framework/helm-operator-plugins' test chart
// (v0.8.0, pkg/internal/testdata/test-chart, Apache-2.0), as params.yaml.
func TestParametersOfARealChartsValues(t *testing.T) {
	values, err := os.ReadFile(filepath.Join("testdata", "test-chart-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	params, err := Parameters(values, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := yaml.Marshal(packages.ParamsFile{APIVersion: "v1beta1", Parameters: params})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, []byte("---\n"+ValuesTemplate(params))...)
	golden := filepath.Join("testdata", "test-chart-params.golden")
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
		t.Errorf("params.yaml and values template (-want +got):\n%s", diff)
	}
}

func TestTheSchemaSaysBetter(t *testing.T) {
	values := []byte("# -- How many pods.\nreplicas: 1\nlevel: info\nport: null\n")
	schema := []byte(`{"properties": {
		"replicas": {"type": "integer", "description": "Pods of the web server."},
		"level": {"type": "string", "enum": ["debug", "info"]},
		"port": {"type": ["integer", "null"]}}}`)
	got, err := Parameters(values, schema)
	if err != nil {
		t.Fatal(err)
	}
	no := ptrFalse()
	want := []packages.Parameter{
		{Name: "replicas", Required: no, Type: kudov1beta1.IntegerValueType, Default: 1, Description: "Pods of the web server."},
		{Name: "level", Required: no, Type: kudov1beta1.StringValueType, Default: "info", Enum: &[]any{"debug", "info"}},
		{Name: "port", Required: no, Type: kudov1beta1.IntegerValueType},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
}

func TestValuesThatAreNoChartsAreRefused(t *testing.T) {
	for name, tc := range map[string]struct{ values, schema, want string }{
		"a list":            {values: "- a\n- b\n", want: "values.yaml: not a map of values"},
		"an alias bomb":     {values: "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + bomb(), want: "values.yaml: "},
		"a schema not JSON": {values: "a: 1\n", schema: "{", want: "values.schema.json: "},
	} {
		t.Run(name, func(t *testing.T) {
			var schema []byte
			if tc.schema != "" {
				schema = []byte(tc.schema)
			}
			_, err := Parameters([]byte(tc.values), schema)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q…", err, tc.want)
			}
		})
	}
}

// bomb is eight levels of lists of ten aliases of the last: 10^9 nodes.
func bomb() string {
	var b strings.Builder
	prev := "a"
	for level := range 8 {
		name := string(rune('b' + level))
		b.WriteString(name + ": &" + name + " [")
		b.WriteString(strings.TrimSuffix(strings.Repeat("*"+prev+", ", 10), ", "))
		b.WriteString("]\n")
		prev = name
	}
	return b.String()
}

func TestTheCommentAboveAKeyDescribesIt(t *testing.T) {
	values := []byte("# Default values for web.\n\n# -- How many pods\n# run at once.\nreplicas: 1\nimage:\n  # not a top-level key's\n  tag: x\n")
	got, err := Parameters(values, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Description != "How many pods run at once." || got[1].Description != "" {
		t.Errorf("descriptions %q, %q", got[0].Description, got[1].Description)
	}
}

// A chart nobody here wrote, imported: the package verifies, and its Helm
// task renders the chart with the values its parameters default to.
func TestAnImportedChartIsAPackageThatVerifies(t *testing.T) {
	files, err := Package(filepath.Join("..", "chartrender", "testdata", "test-chart-1.2.3.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := packages.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if report := packages.Verify(p, packages.VerifyOptions{}); len(report.Errors) > 0 {
		t.Fatalf("package verify: %v", report.Errors)
	}
	if p.Operator.Name != "test-chart" || p.Operator.OperatorVersion != "1.2.3" || p.Operator.AppVersion != "1.16.0" || len(p.Charts) != 1 {
		t.Errorf("operator.yaml %+v, charts %d", p.Operator, len(p.Charts))
	}
}

// FuzzParameters: whatever values.yaml and values.schema.json hold, the
// import refuses them or makes parameters, within the bounded parser.
func FuzzParameters(f *testing.F) {
	f.Add([]byte("replicas: 1\nimage: {repository: nginx}\n"), []byte(`{"properties": {"replicas": {"type": "integer"}}}`))
	f.Add([]byte("a: &a [x, x]\nb: [*a, *a]\n"), []byte(nil))
	f.Add([]byte("# c\nk: null\n"), []byte(`{"properties": {"k": {"type": ["string", "null"], "enum": [1, "a"]}}}`))
	f.Fuzz(func(t *testing.T, values, schema []byte) {
		params, err := Parameters(values, schema)
		if err != nil {
			return
		}
		for _, p := range params {
			if p.Type == "" {
				t.Fatalf("parameter %q has no type", p.Name)
			}
		}
		_ = ValuesTemplate(params)
	})
}
