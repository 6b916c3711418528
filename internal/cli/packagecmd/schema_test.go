package packagecmd

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/test/corpus"
)

func runSchema(t *testing.T, path, output string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := RunSchema(genericiooptions.IOStreams{Out: &out, ErrOut: &out}, &SchemaOptions{Path: path, Output: output})
	return out.String(), err
}

// TestSchemaPrintsEachForm: package schema prints the widget example's
// CustomResourceDefinition, its OpenAPI schema and its JSON Schema.
func TestSchemaPrintsEachForm(t *testing.T) {
	widget := filepath.Join(corpus.Examples(), "widget", "operator")
	for _, output := range []string{"crd", "openapi", "json-schema"} {
		out, err := runSchema(t, widget, output)
		if err != nil {
			t.Fatalf("-o %s: %v", output, err)
		}
		golden(t, "schema-widget-"+output+".golden", out)
	}
}

func TestSchemaRefusesAnUnknownForm(t *testing.T) {
	_, err := runSchema(t, hello, "xsd")
	if err == nil || !strings.Contains(err.Error(), `--output "xsd": must be crd, openapi or json-schema`) {
		t.Errorf("got %v", err)
	}
}
