// Package update is `kubectl kudo update`: change an Instance's parameters,
// which runs the plan they trigger.
package update

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/preview"
)

// Options are the flags of update.
type Options struct {
	action.Update
	action.WaitOptions
	Preview action.PreviewOptions
}

// NewCmd returns the update command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "update --instance NAME -p NAME=VALUE...",
		Short: "Change the parameters of an Instance; the plan they trigger runs",
		Example: `  kubectl kudo update --instance zk -p NODE_COUNT=5 --wait
  kubectl kudo update --instance zk -p NODE_COUNT=5 --diff`,
		Args: cobra.NoArgs,
		RunE: action.RunE(flags, streams, func(ctx context.Context, cfg action.Config, _ []string) error {
			return Run(ctx, cfg, opts)
		}),
	}
	clientutil.InstanceFlag(cmd, &opts.Instance, flags)
	opts.ParameterOptions.AddFlags(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("parameter", clientutil.CompleteParameters(flags))
	opts.AddFlags(cmd.Flags(), "Wait until the triggered plan has finished")
	opts.Preview.AddFlags(cmd.Flags())
	return cmd
}

// Run updates (action.Update), says what it changed and, with --wait, waits
// for the plan the change triggers.
func Run(ctx context.Context, cfg action.Config, opts *Options) error {
	if err := opts.Preview.Check(opts.Wait); err != nil {
		return err
	}
	if opts.Preview.Enabled() {
		return opts.Preview.Preview(cfg.Out, func() (*preview.Report, error) { return opts.Update.Preview(ctx, cfg) })
	}
	change, err := opts.Run(ctx, cfg)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(cfg.Out, "%s updated\n", change.Object)
	if !opts.Wait {
		return nil
	}
	return change.Wait(ctx, cfg, opts.WaitTime)
}
