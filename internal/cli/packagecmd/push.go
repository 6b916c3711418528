package packagecmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/packages"
)

// PushOptions are the flags of `package push`.
type PushOptions struct {
	Path, Ref string
	Registry  resolve.Registry
}

func newPushCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &PushOptions{}
	cmd := &cobra.Command{
		Use:   "push <dir|tgz> oci://REGISTRY/REPOSITORY:TAG",
		Short: "Verify a package and push it to an OCI registry, printing its digest",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.Ref = args[0], args[1]
			return RunPush(cmd.Context(), streams, opts)
		},
	}
	opts.Registry.AddFlags(cmd.Flags())
	return cmd
}

// RunPush verifies the package, as package create does, and pushes it; a
// package whose KudoOperator task names a directory or file is refused:
// nothing installs it from the registry.
func RunPush(ctx context.Context, streams genericiooptions.IOStreams, opts *PushOptions) error {
	if !ocipkg.IsRef(opts.Ref) {
		return fmt.Errorf("%s: push to a reference that starts with %s", opts.Ref, ocipkg.Scheme)
	}
	p, err := packages.Read(opts.Path)
	if err != nil {
		return err
	}
	if report := packages.Verify(p, packages.VerifyOptions{}); len(report.Errors) > 0 {
		return writeReport(streams.ErrOut, "", report)
	}
	for _, t := range p.Operator.Tasks {
		if t.Kind == kudov1beta1.KudoOperatorTaskKind && resolve.IsPath(t.Spec.Package) {
			return fmt.Errorf("%s: task %s: package %s is a directory or file, which whoever installs from the registry has not: "+
				"push it too, and name it oci://…, or by its name in a repository", packages.OperatorFileName, t.Name, t.Spec.Package)
		}
	}
	c, err := opts.Registry.Client()
	if err != nil {
		return err
	}
	pushed, err := c.Push(ctx, p, opts.Ref)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "Pushed: %s\nDigest: %s\n", pushed.Ref, pushed.Digest)
	return err
}

// PullOptions are the flags of `package pull`.
type PullOptions struct {
	Ref string
	TarballOptions
	Registry resolve.Registry
}

func newPullCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &PullOptions{}
	cmd := &cobra.Command{
		Use:   "pull oci://REGISTRY/REPOSITORY:TAG|@sha256:DIGEST",
		Short: "Fetch a package from an OCI registry as a tarball",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return RunPull(cmd.Context(), streams, opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	opts.Registry.AddFlags(cmd.Flags())
	return cmd
}

// RunPull writes the package's tarball, as pushed, named as package create
// names it.
func RunPull(ctx context.Context, streams genericiooptions.IOStreams, opts *PullOptions) error {
	c, err := opts.Registry.Client()
	if err != nil {
		return err
	}
	pulled, err := c.Pull(ctx, opts.Ref)
	if err != nil {
		return err
	}
	target, err := opts.writeTarball(pulled.Package.TarballName(), func(w io.Writer) error {
		_, err := w.Write(pulled.Tarball)
		return err
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "Pulled: %s\nDigest: %s\nPackage: %s\n", opts.Ref, pulled.Digest, target)
	return err
}
