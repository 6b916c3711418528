// Package diff is `kubectl kudo diff -f FILE`: what applying the typed
// objects of a manifest would do to the Instances they make.
package diff

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/action"
)

// NewCmd returns the diff command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &action.Diff{In: streams.In}
	preview := &action.PreviewOptions{Diff: true}
	cmd := &cobra.Command{
		Use:   "diff -f FILE",
		Short: "Show what applying typed objects would change: the plan their Instances would run, and each object's diff (kudo-ng)",
		Long: `Show what applying the typed objects of a manifest (kubectl apply -f FILE) would do, as
install, update and upgrade --diff do for an Instance: the plan each object's Instance would run,
and the diff of every object that plan would create, change or delete, pruning included. Reads and
dry runs are made with your credentials; nothing is written. Exits 0 when nothing would change, 1
when something would, 2 when the preview failed, as kubectl diff does.`,
		Example: "  kubectl kudo diff -f zk.yaml\n  kubectl kudo diff -f - -o yaml < zk.yaml",
		Args:    cobra.NoArgs,
		RunE: action.RunE(flags, streams, func(ctx context.Context, cfg action.Config, _ []string) error {
			if err := preview.Validate(); err != nil {
				return err
			}
			reports, err := opts.Preview(ctx, cfg)
			if err != nil {
				return &action.PreviewFailed{Err: err}
			}
			return preview.Print(cfg.Out, reports...)
		}),
	}
	cmd.Flags().StringVarP(&opts.File, "filename", "f", "", `The manifest of typed objects, "-" for standard input`)
	_ = cmd.MarkFlagRequired("filename")
	cmd.Flags().StringVarP(&preview.Output, "output", "o", "", "Print the preview as json or yaml")
	return cmd
}
