package packagecmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/output"
	"github.com/kudo-ng/kudo/internal/packages"
)

// CreateOptions are the flags of `package create`.
type CreateOptions struct {
	Path string
	TarballOptions
	Output output.Format
}

// TarballOptions say where create and pull write a package's tarball.
type TarballOptions struct {
	Destination string
	Overwrite   bool
}

// AddFlags adds --destination and --overwrite.
func (o *TarballOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVarP(&o.Destination, "destination", "d", ".", "Directory to write the tarball to")
	f.BoolVarP(&o.Overwrite, "overwrite", "w", false, "Overwrite an existing tarball")
}

// writeTarball writes the tarball named name into the destination with
// write, and returns its path; a file of the name is replaced only with
// --overwrite.
func (o *TarballOptions) writeTarball(name string, write func(io.Writer) error) (string, error) {
	target := filepath.Join(o.Destination, name)
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if o.Overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(target, flags, 0o644)
	if os.IsExist(err) {
		return "", fmt.Errorf("%s exists; use --overwrite to replace it", target)
	}
	if err != nil {
		return "", err
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return "", err
	}
	return target, f.Close()
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
	opts.AddFlags(cmd.Flags())
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
	target, err := opts.writeTarball(p.TarballName(), p.WriteTarball)
	if err != nil {
		return err
	}
	if opts.Output == "" {
		_, err = fmt.Fprintf(streams.Out, "Package created: %s\n", target)
	}
	return err
}
