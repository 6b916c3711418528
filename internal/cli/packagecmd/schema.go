package packagecmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// SchemaOptions are the flags of `package schema`.
type SchemaOptions struct {
	Path   string
	Output string
}

// The forms package schema prints.
const (
	schemaCRD        = "crd"
	schemaOpenAPI    = "openapi"
	schemaJSONSchema = "json-schema"
)

func newSchemaCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &SchemaOptions{}
	cmd := &cobra.Command{
		Use:   "schema <dir|tgz>",
		Short: "Print the typed API of a package: its CustomResourceDefinition, OpenAPI or JSON schema",
		Long: "Print the kind kudo-ng serves a package as (docs/typed-apis.md), with a field for each parameter:\n" +
			"the CustomResourceDefinition the manager applies (crd), its OpenAPI v3 schema (openapi), or that\n" +
			"schema as a JSON Schema for editors and GitOps validation (json-schema).",
		Example: "  kubectl kudo package schema ../zk/operator\n" +
			"  kubectl kudo package schema ../zk/operator -o json-schema > zookeeper.schema.json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return RunSchema(streams, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", schemaCRD, "What to print: crd, openapi or json-schema")
	return cmd
}

// RunSchema prints the package's typed API in the form asked for.
func RunSchema(streams genericiooptions.IOStreams, opts *SchemaOptions) error {
	if opts.Output != schemaCRD && opts.Output != schemaOpenAPI && opts.Output != schemaJSONSchema {
		return fmt.Errorf("--output %q: must be crd, openapi or json-schema", opts.Output)
	}
	p, err := packages.Read(opts.Path)
	if err != nil {
		return err
	}
	_, ov, err := p.Convert("")
	if err != nil {
		return err
	}
	names, err := typedapi.NamesOf(p.Operator.Name, ov.Spec.TypedAPI)
	if err != nil {
		return fmt.Errorf("%s: %w", packages.OperatorFileName, err)
	}
	crd, err := typedapi.CRD(names, p.Operator.Name, ov.Spec.Parameters)
	if err != nil {
		return fmt.Errorf("%s: %w", packages.ParamsFileName, err)
	}
	var out []byte
	switch opts.Output {
	case schemaCRD:
		out, err = yaml.Marshal(crd)
	case schemaOpenAPI:
		out, err = yaml.Marshal(crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	case schemaJSONSchema:
		out, err = jsonSchema(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, names)
	}
	if err != nil {
		return err
	}
	_, err = streams.Out.Write(out)
	return err
}

// jsonSchema is the OpenAPI v3 schema as a JSON Schema document: OpenAPI's
// schema objects are JSON Schema's, and the x-kubernetes- keywords are
// annotations to a JSON Schema validator.
func jsonSchema(schema any, names typedapi.Names) ([]byte, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	doc["title"] = names.Kind
	doc["x-kubernetes-group-version-kind"] = []map[string]string{{"group": names.Group, "version": names.Version, "kind": names.Kind}}
	out, err := json.MarshalIndent(doc, "", "  ")
	return append(out, '\n'), err
}
