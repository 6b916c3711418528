package packagecmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gosuri/uitable"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/output"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/trust"
)

// VerifyOptions are the flags of `package verify`.
type VerifyOptions struct {
	Path              string
	KubernetesVersion string
	Output            output.Format
	ParamChecks       []string
	// Keys are public key files one of which must have signed a package
	// in an OCI registry.
	Keys     []string
	Registry resolve.Registry
	// Previous are directories or tarballs of earlier versions of the
	// package, whose typed API the package's may not break.
	Previous []string
}

func newVerifyCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &VerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify <dir|tgz|oci://REGISTRY/REPOSITORY:TAG|@sha256:DIGEST>",
		Short: "Check a package against KUDO's rules, and a package in an OCI registry's signature",
		Long: "Check a package: errors are what would fail to install or run, warnings what is defined but unused\n" +
			"or what kudo-ng has to change (API versions the Kubernetes version no longer serves).\n" +
			"With --key, a package in an OCI registry must first have a signature by one of the keys\n" +
			"(kubectl kudo package sign, or cosign sign --key), and the digest it signed is the one checked.",
		Example: "  kubectl kudo package verify ../zk/operator\n  kubectl kudo package verify ../zk/operator -o json --param-checks all\n" +
			"  kubectl kudo package verify oci://registry.example.com/packages/zookeeper:0.3.3 --key cosign.pub",
		Args: cobra.ExactArgs(1),
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
	f.StringSliceVar(&opts.Keys, "key", nil,
		"Public keys (PEM, as cosign.pub), one of which must have signed the package in an OCI registry")
	f.StringSliceVar(&opts.Previous, "previous", nil, "Earlier versions of the package (directories or tarballs), whose typed API "+
		"the package's may not break: a field removed that no rule carries, a type changed, a new required field, a narrowed enum (kudo-ng)")
	opts.Registry.AddFlags(f)
	return cmd
}

// RunVerify prints the package's warnings and errors, as KUDO's tables or
// as its result object; it fails when there are errors.
func RunVerify(ctx context.Context, streams genericiooptions.IOStreams, opts *VerifyOptions) error {
	if err := opts.Output.Validate(); err != nil {
		return err
	}
	checks, err := packages.ParseParamChecks(opts.ParamChecks)
	if err != nil {
		return err
	}
	p, err := readVerified(ctx, streams.Out, opts)
	if err != nil {
		return err
	}
	previous := make([]*packages.Package, 0, len(opts.Previous))
	for _, path := range opts.Previous {
		prev, err := packages.Read(path)
		if err != nil {
			return fmt.Errorf("--previous %s: %w", path, err)
		}
		previous = append(previous, prev)
	}
	report := packages.Verify(p, packages.VerifyOptions{KubernetesVersion: opts.KubernetesVersion, ParamChecks: checks, Previous: previous})
	return writeReport(streams.Out, opts.Output, report)
}

// readVerified reads the package; one in an OCI registry, with keys, once
// one of them is found to have signed it, by the digest signed.
func readVerified(ctx context.Context, out io.Writer, opts *VerifyOptions) (*packages.Package, error) {
	if !ocipkg.IsRef(opts.Path) {
		if len(opts.Keys) > 0 {
			return nil, fmt.Errorf("--key checks the signature of a package in an OCI registry (%s...), not of %s", ocipkg.Scheme, opts.Path)
		}
		return packages.Read(opts.Path)
	}
	c, err := opts.Registry.Client()
	if err != nil {
		return nil, err
	}
	if len(opts.Keys) == 0 {
		pulled, err := c.Pull(ctx, opts.Path)
		if err != nil {
			return nil, err
		}
		return pulled.Package, nil
	}
	keys, err := readPublicKeys(opts.Keys)
	if err != nil {
		return nil, err
	}
	// As the manager verifies it under a TrustPolicy of these keys: its
	// dependencies in registries too.
	signed, err := trust.VerifySigned(ctx, c, opts.Path, keys, nil)
	if err != nil {
		return nil, err
	}
	if opts.Output == "" {
		if _, err := fmt.Fprintf(out, "Verified: %s, signed with %s (signature %s)\n",
			signed.Verified.Ref, signed.Verified.Authority, signed.Verified.Signature); err != nil {
			return nil, err
		}
	}
	return signed.Package, nil
}

// result is KUDO's verify result, as -o writes it: the lists are never null.
type result struct {
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
	Valid    bool     `json:"valid"`
}

// writeReport writes the report as KUDO did, the findings KUDO made in its
// words and order: a Warnings and an Errors table, then "package is valid";
// or with -o its result object. A report with errors is KUDO's error.
func writeReport(out io.Writer, format output.Format, report *packages.Report) error {
	errs, warnings := report.AsKUDOSaid()
	r := result{Errors: errs, Warnings: warnings, Valid: len(errs) == 0}
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

// section is KUDO's table of a heading and its lines, nothing when there
// are none.
func section(out io.Writer, heading string, lines []string) {
	if len(lines) == 0 {
		return
	}
	table := uitable.New()
	table.AddRow(heading)
	for _, line := range lines {
		table.AddRow(line)
	}
	_, _ = fmt.Fprintln(out, table)
}
