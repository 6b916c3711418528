package packagecmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewOptions are the flags of `package new`.
type NewOptions struct {
	Name      string
	Directory string
}

func newNewCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &NewOptions{}
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Start a package: operator.yaml, params.yaml and a template that verify",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			return RunNew(cmd.Context(), streams, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Directory, "directory", "d", "", "Directory of the package (default NAME/operator)")
	return cmd
}

var newFiles = map[string]string{
	"operator.yaml": `apiVersion: kudo.dev/v1beta1
name: "NAME"
operatorVersion: "0.1.0"
appVersion: "1.0.0"
kubernetesVersion: 1.20.0
maintainers:
  - name: Your name
    email: you@example.com
url: https://example.com
tasks:
  - name: app
    kind: Apply
    spec:
      resources:
        - deployment.yaml
plans:
  deploy:
    strategy: serial
    phases:
      - name: main
        strategy: parallel
        steps:
          - name: app
            tasks:
              - app
`,
	"params.yaml": `apiVersion: kudo.dev/v1beta1
parameters:
  - name: REPLICAS
    description: Number of replicas of the application
    default: 1
    type: integer
`,
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Name }}
spec:
  replicas: {{ .Params.REPLICAS }}
  selector:
    matchLabels:
      app: {{ .Name }}
  template:
    metadata:
      labels:
        app: {{ .Name }}
    spec:
      containers:
        - name: app
          image: nginx:1.27
`,
}

// RunNew writes the package, refusing to overwrite anything.
func RunNew(_ context.Context, streams genericiooptions.IOStreams, opts *NewOptions) error {
	dir := opts.Directory
	if dir == "" {
		dir = filepath.Join(opts.Name, "operator")
	}
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists: choose another --directory", dir)
	}
	for name, content := range newFiles {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(content, "NAME", opts.Name)), 0o644); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(streams.Out, "package %s created in %s\n", opts.Name, dir)
	return err
}
