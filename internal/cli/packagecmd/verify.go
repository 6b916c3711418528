package packagecmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/output"
	"github.com/kudo-ng/kudo/internal/packages"
)

// VerifyOptions are the flags of `package verify`.
type VerifyOptions struct {
	Path              string
	KubernetesVersion string
	Output            output.Format
	ParamChecks       []string
}

func newVerifyCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &VerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify <dir|tgz>",
		Short: "Check a package against KUDO's rules",
		Long: "Check a package: errors are what would fail to install or run, warnings what is defined but unused\n" +
			"or what kudo-ng has to change (API versions the Kubernetes version no longer serves).",
		Example: "  kubectl kudo package verify ../zk/operator\n  kubectl kudo package verify ../zk/operator -o json --param-checks all",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return RunVerify(cmd.Context(), streams, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.KubernetesVersion, "kubernetes-version", packages.DefaultKubernetesVersion,
		"Kubernetes version whose served API versions the templates are checked against")
	output.Flag(f, &opts.Output, "Output format for command results: json or yaml")
	f.StringSliceVar(&opts.ParamChecks, "param-checks", nil,
		"Additional parameter checks: ["+strings.Join(packages.ParamCheckNames, " ")+"]")
	return cmd
}

// RunVerify prints the package's warnings and errors, as KUDO's tables or
// as its result object; it fails when there are errors.
func RunVerify(_ context.Context, streams genericiooptions.IOStreams, opts *VerifyOptions) error {
	if err := opts.Output.Validate(); err != nil {
		return err
	}
	checks, err := packages.ParseParamChecks(opts.ParamChecks)
	if err != nil {
		return err
	}
	p, err := packages.Read(opts.Path)
	if err != nil {
		return err
	}
	report := packages.Verify(p, packages.VerifyOptions{KubernetesVersion: opts.KubernetesVersion, ParamChecks: checks})
	return writeReport(streams.Out, opts.Output, report)
}

// result is KUDO's verify result, as -o writes it: the lists are never null.
type result struct {
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
	Valid    bool     `json:"valid"`
}

// writeReport writes the report as KUDO did: a Warnings and an Errors
// section, then "package is valid"; or with -o its result object. A report
// with errors is KUDO's error.
func writeReport(out io.Writer, format output.Format, report *packages.Report) error {
	r := result{Errors: texts(report.Errors), Warnings: texts(report.Warnings), Valid: len(report.Errors) == 0}
	if format != "" {
		if err := output.Object(out, format, r); err != nil {
			return err
		}
	} else {
		section(out, "Warnings", r.Warnings)
		section(out, "Errors", r.Errors)
		if r.Valid {
			_, _ = fmt.Fprintln(out, "package is valid")
		}
	}
	if !r.Valid {
		return fmt.Errorf("found %d package verification errors", len(r.Errors))
	}
	return nil
}

func texts(issues []packages.Issue) []string {
	out := make([]string, 0, len(issues))
	for _, i := range issues {
		out = append(out, i.String())
	}
	return out
}

// section is a heading and its lines, nothing when there are none.
func section(out io.Writer, heading string, lines []string) {
	if len(lines) == 0 {
		return
	}
	_, _ = fmt.Fprintln(out, heading)
	for _, line := range lines {
		_, _ = fmt.Fprintln(out, line)
	}
}
