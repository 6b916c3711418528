package packagecmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/output"
	"github.com/kudo-ng/kudo/internal/packages"
)

// CreateOptions are the flags of `package create`.
type CreateOptions struct {
	Path        string
	Destination string
	Overwrite   bool
	Output      output.Format
}

func newCreateCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &CreateOptions{}
	cmd := &cobra.Command{
		Use:   "create <dir>",
		Short: "Write a verified package directory as a tarball",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return RunCreate(cmd.Context(), streams, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Destination, "destination", "d", ".", "Directory to write the tarball to")
	cmd.Flags().BoolVarP(&opts.Overwrite, "overwrite", "w", false, "Overwrite an existing tarball")
	output.Flag(cmd.Flags(), &opts.Output, "Output format for command results, NOT the package format: json or yaml")
	return cmd
}

// RunCreate verifies the package, printing what package verify prints, and
// writes <name>-<appVersion>_<operatorVersion>.tgz, as KUDO did.
func RunCreate(_ context.Context, streams genericiooptions.IOStreams, opts *CreateOptions) error {
	if err := opts.Output.Validate(); err != nil {
		return err
	}
	p, err := packages.Read(opts.Path)
	if err != nil {
		return err
	}
	if err := writeReport(streams.Out, opts.Output, packages.Verify(p, packages.VerifyOptions{})); err != nil {
		return err
	}
	target := filepath.Join(opts.Destination, p.TarballName())
	f, err := createFile(target, opts.Overwrite)
	if err != nil {
		return err
	}
	if err := p.WriteTarball(f); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if opts.Output == "" {
		_, err = fmt.Fprintf(streams.Out, "Package created: %s\n", target)
	}
	return err
}

// createFile creates the file target, which may exist only to be
// overwritten.
func createFile(target string, overwrite bool) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(target, flags, 0o644)
	if os.IsExist(err) {
		return nil, fmt.Errorf("%s exists; use --overwrite to replace it", target)
	}
	return f, err
}
