package packagecmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/prompt"
	"github.com/kudo-ng/kudo/internal/packages"
)

// NewOptions are the flags of `package new`, and the answers of -i.
type NewOptions struct {
	Name      string
	Directory string
	// Overwrite writes into an existing directory, over its files.
	Overwrite bool
	// Interactive asks KUDO's questions for what follows.
	Interactive       bool
	OperatorVersion   string
	AppVersion        string
	KUDOVersion       string
	KubernetesVersion string
	URL               string
	Maintainer        kudov1beta1.Maintainer
}

func newNewCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &NewOptions{AppVersion: "1.0.0", URL: "https://example.com"}
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Start a package: operator.yaml, params.yaml and a template that verify",
		Example: `  kubectl kudo package new web
  kubectl kudo package new -i`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1:
				opts.Name = args[0]
			case !opts.Interactive:
				return errors.New("expecting exactly one argument - name of the operator. Or use -i for interactive mode")
			}
			opts.defaults()
			if opts.Interactive {
				if err := askNew(prompt.New(streams.In, streams.Out), opts); err != nil {
					return err
				}
			}
			return RunNew(cmd.Context(), streams, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Directory, "directory", "d", newDirectory, "Directory of the package")
	f.BoolVarP(&opts.Overwrite, "overwrite", "w", false, "Overwrite an existing directory's package files")
	f.BoolVarP(&opts.Interactive, "interactive", "i", false, "Ask KUDO's questions: name, directory, versions, URL, maintainer")
	return cmd
}

// defaults fills what operator.yaml needs and was not given.
func (o *NewOptions) defaults() {
	o.OperatorVersion = cmp.Or(o.OperatorVersion, "0.1.0")
	o.KubernetesVersion = cmp.Or(o.KubernetesVersion, "1.20.0")
	o.Maintainer.Name = cmp.Or(o.Maintainer.Name, "Your name")
	o.Maintainer.Email = cmp.Or(o.Maintainer.Email, "you@example.com")
}

// askNew asks what KUDO's package new -i asked.
func askNew(ask *prompt.Prompter, opts *NewOptions) error {
	semverOrEmpty := func(s string) error {
		if _, err := semver.NewVersion(s); s != "" && err != nil {
			return fmt.Errorf("%q is not semver: %w", s, err)
		}
		return nil
	}
	questions := []struct {
		label string
		into  *string
		check func(string) error
	}{
		{"Operator Name", &opts.Name, atLeast(3, "operator name must have more than 3 characters")},
		{"Operator directory", &opts.Directory, nil},
		{"Operator Version", &opts.OperatorVersion, func(s string) error {
			if s == "" {
				return errors.New("operator version is required in semver format")
			}
			return semverOrEmpty(s)
		}},
		{"Application Version", &opts.AppVersion, semverOrEmpty},
		{"Required KUDO Version", &opts.KUDOVersion, nil},
		{"Required Kubernetes Version", &opts.KubernetesVersion, semverOrEmpty},
		{"Project URL", &opts.URL, nil},
		{"Maintainer Name", &opts.Maintainer.Name, atLeast(1, "maintainer name must be > than 1 character")},
		{"Maintainer Email", &opts.Maintainer.Email, func(s string) error {
			if !emailAddress.MatchString(s) {
				return errors.New("maintainer email must be valid email address")
			}
			return nil
		}},
	}
	if opts.Name == "" {
		opts.Name = "myoperator"
	}
	for _, q := range questions {
		def := *q.into
		answer, err := ask.Text(q.label, def, q.check)
		if err != nil {
			return err
		}
		*q.into = answer
	}
	return nil
}

var newFiles = map[string]string{
	"operator.yaml": `apiVersion: kudo.dev/v1beta1
name: {{ printf "%q" .Name }}
operatorVersion: {{ printf "%q" .OperatorVersion }}
{{- with .AppVersion }}
appVersion: {{ printf "%q" . }}{{ end }}
{{- with .KUDOVersion }}
kudoVersion: {{ printf "%q" . }}{{ end }}
kubernetesVersion: {{ printf "%q" .KubernetesVersion }}
maintainers:
  - name: {{ printf "%q" .Maintainer.Name }}
    email: {{ printf "%q" .Maintainer.Email }}
{{- with .URL }}
url: {{ printf "%q" . }}{{ end }}
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

// newDirectory is where KUDO's package new wrote, so that its next
// documented step, package add in the same directory, finds the package.
const newDirectory = "operator"

// RunNew writes the package; an existing directory only with Overwrite, and
// never inside a package, which KUDO refused too.
func RunNew(_ context.Context, streams genericiooptions.IOStreams, opts *NewOptions) error {
	dir := cmp.Or(opts.Directory, newDirectory)
	opts.defaults()
	if _, err := os.Stat(dir); err == nil && !opts.Overwrite {
		return fmt.Errorf("%s exists: choose another --directory, or pass --overwrite", dir)
	}
	if _, err := os.Stat(packages.OperatorFileName); err == nil {
		return fmt.Errorf("%s exists in the current directory: creating an operator in an operator is not supported", packages.OperatorFileName)
	}
	for name, content := range newFiles {
		// operator.yaml has the answers; the template is the package's own.
		if name == packages.OperatorFileName {
			var b strings.Builder
			if err := template.Must(template.New(name).Parse(content)).Execute(&b, opts); err != nil {
				return err
			}
			content = b.String()
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(streams.Out, "package %s created in %s\n", opts.Name, dir)
	return err
}
