package packagecmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/packages"
)

// VerifyOptions are the flags of `package verify`.
type VerifyOptions struct {
	Path              string
	KubernetesVersion string
}

func newVerifyCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &VerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify <dir|tgz>",
		Short: "Check a package against KUDO's rules",
		Long: "Check a package: errors are what would fail to install or run, warnings what is defined but unused\n" +
			"or what kudo-ng has to change (API versions the Kubernetes version no longer serves).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return RunVerify(cmd.Context(), streams, opts)
		},
	}
	cmd.Flags().StringVar(&opts.KubernetesVersion, "kubernetes-version", packages.DefaultKubernetesVersion,
		"Kubernetes version whose served API versions the templates are checked against")
	return cmd
}

// RunVerify prints the package's errors and warnings; it fails when there are errors.
func RunVerify(_ context.Context, streams genericiooptions.IOStreams, opts *VerifyOptions) error {
	p, err := packages.Read(opts.Path)
	if err != nil {
		return err
	}
	report := packages.Verify(p, packages.VerifyOptions{KubernetesVersion: opts.KubernetesVersion})
	for _, w := range report.Warnings {
		_, _ = fmt.Fprintf(streams.Out, "Warning: %s\n", w)
	}
	for _, e := range report.Errors {
		_, _ = fmt.Fprintf(streams.Out, "Error: %s\n", e)
	}
	if len(report.Errors) > 0 {
		return fmt.Errorf("package %s has %d error(s)", opts.Path, len(report.Errors))
	}
	_, err = fmt.Fprintf(streams.Out, "package %s %s is valid (%d warning(s))\n",
		p.Operator.Name, p.Operator.OperatorVersion, len(report.Warnings))
	return err
}
