package packagecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/chartimport"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/trust"
)

// ImportOptions are package import's.
type ImportOptions struct {
	// Chart is a directory, a .tgz, an oci:// reference, or with Repo the
	// name of a chart of that repository.
	Chart     string
	Directory string
	Overwrite bool
	// Repo is a classic chart repository's URL; Version a version of the
	// chart there, or a constraint.
	Repo, Version string
	// Keys, one of which must have signed a chart in an OCI registry.
	Keys     []string
	Registry resolve.Registry
}

func newImportCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &ImportOptions{}
	cmd := &cobra.Command{
		Use:   "import CHART",
		Short: "Write a package that runs a Helm chart (a directory, a .tgz, oci://, a repository's) as a Helm task, its values as parameters",
		Long: "Write a package that runs a Helm chart as a Helm task, its values as parameters. The chart is copied into\n" +
			"the package: the manager never downloads one. A chart in an OCI registry is pulled by the digest its tag\n" +
			"resolves to, with --key once one of the keys is found to have signed it; a chart repository's by its\n" +
			"index.yaml, checked against the digest the index gives.",
		Example: `  kubectl kudo package import ./charts/web --directory web-operator
  kubectl kudo package import web-1.2.3.tgz
  kubectl kudo package import oci://registry.example.com/charts/web:1.2.3 --key cosign.pub
  kubectl kudo package import web --repo https://charts.example.com --version "~1.2"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Chart = args[0]
			return RunImport(cmd.Context(), streams, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Directory, "directory", "d", "", "Directory of the package (default ./operator)")
	f.BoolVarP(&opts.Overwrite, "overwrite", "w", false, "Overwrite an existing directory's package files")
	f.StringVar(&opts.Repo, "repo", "", "URL of the classic chart repository CHART is a chart of")
	f.StringVar(&opts.Version, "version", "", "Version of the chart in --repo, or a constraint (default the newest)")
	f.StringSliceVar(&opts.Keys, "key", nil, "Public keys (PEM, as cosign.pub), one of which must have signed the chart in an OCI registry")
	opts.Registry.AddFlags(f)
	return cmd
}

// RunImport writes the package of the chart, and checks it.
func RunImport(ctx context.Context, streams genericiooptions.IOStreams, opts *ImportOptions) error {
	chartPath, cleanup, err := fetchChart(ctx, streams.Out, opts)
	if err != nil {
		return err
	}
	defer cleanup()
	files, err := chartimport.Package(chartPath)
	if err != nil {
		return err
	}
	dir := opts.Directory
	if dir == "" {
		dir = filepath.Join(".", "operator")
	}
	if _, err := os.Stat(dir); err == nil && !opts.Overwrite {
		return fmt.Errorf("%s exists: choose another --directory, or pass --overwrite", dir)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	p, err := packages.Read(dir)
	if err != nil {
		return err
	}
	if report := packages.Verify(p, packages.VerifyOptions{}); len(report.Errors) > 0 {
		errs := []error{fmt.Errorf("the package written in %s does not verify", dir)}
		for _, issue := range report.Errors {
			errs = append(errs, errors.New(issue.String()))
		}
		return errors.Join(errs...)
	}
	_, err = fmt.Fprintf(streams.Out, "package %s %s written in %s: %d parameters from the chart's values\n",
		p.Operator.Name, p.Operator.OperatorVersion, dir, len(p.Params.Parameters))
	return err
}

// fetchChart is the path of the chart opts names: a local one as it is; one
// of a registry or a repository downloaded into a file of its own, which
// cleanup removes.
func fetchChart(ctx context.Context, out io.Writer, opts *ImportOptions) (string, func(), error) {
	var tarball []byte
	var from string
	switch {
	case opts.Repo != "":
		if len(opts.Keys) > 0 {
			return "", nil, errors.New("--key checks the signature of a chart in an OCI registry, not of one in a chart repository")
		}
		var err error
		if tarball, from, err = resolve.HelmChart(ctx, opts.Repo, opts.Chart, opts.Version); err != nil {
			return "", nil, err
		}
	case ocipkg.IsRef(opts.Chart):
		if opts.Version != "" {
			return "", nil, fmt.Errorf("--version is of a chart in --repo: %s names its version by its tag or digest", opts.Chart)
		}
		pulled, err := pullChart(ctx, out, opts)
		if err != nil {
			return "", nil, err
		}
		tarball, from = pulled.Tarball, pulled.Ref
	default:
		if opts.Version != "" || len(opts.Keys) > 0 {
			return "", nil, fmt.Errorf("--version and --key are of a chart in a repository or a registry, not of %s", opts.Chart)
		}
		return opts.Chart, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "kudo-chart-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	path := filepath.Join(dir, "chart.tgz")
	if err := os.WriteFile(path, tarball, 0o600); err != nil {
		cleanup()
		return "", nil, err
	}
	if _, err := fmt.Fprintf(out, "chart from %s\n", from); err != nil {
		cleanup()
		return "", nil, err
	}
	return path, cleanup, nil
}

// pullChart pulls a chart from a registry; with keys, once one of them is
// found to have signed it, by the digest signed.
func pullChart(ctx context.Context, out io.Writer, opts *ImportOptions) (*ocipkg.PulledChart, error) {
	c, err := opts.Registry.Client()
	if err != nil {
		return nil, err
	}
	ref := opts.Chart
	if len(opts.Keys) > 0 {
		keys, err := readPublicKeys(opts.Keys)
		if err != nil {
			return nil, err
		}
		verified, err := trust.VerifyChart(ctx, c, ref, keys)
		if err != nil {
			return nil, err
		}
		_, err = fmt.Fprintf(out, "Verified: %s, signed with %s (signature %s)\n", verified.Ref, verified.Authority, verified.Signature)
		if err != nil {
			return nil, err
		}
		ref = verified.Ref
	}
	return c.PullChart(ctx, ref)
}
