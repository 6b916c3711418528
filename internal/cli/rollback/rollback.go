// Package rollback is `kubectl kudo rollback` (kudo-ng): return an Instance
// to the OperatorVersion and parameters of an earlier plan run, which runs
// the plan KUDO runs for that change of spec.
package rollback

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// Options are the flags of rollback.
type Options struct {
	action.Rollback
	action.WaitOptions
}

// NewCmd returns the rollback command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "rollback --instance NAME [--to-revision N]",
		Short: "Return an Instance to the OperatorVersion and parameters of an earlier plan run (kudo-ng)",
		Long: `Return an Instance to the OperatorVersion and parameters an earlier plan run started
from: its revision, as kubectl kudo plan history lists them. The plan KUDO runs for
that change of spec runs: upgrade (or deploy) for another OperatorVersion, the plans
the changed parameters trigger otherwise.`,
		Example: `  kubectl kudo rollback --instance zk --wait
  kubectl kudo rollback --instance zk --to-revision 3`,
		Args: cobra.NoArgs,
		RunE: action.RunE(flags, streams, func(ctx context.Context, cfg action.Config, _ []string) error {
			return Run(ctx, cfg, opts)
		}),
	}
	clientutil.InstanceFlag(cmd, &opts.Instance, flags)
	cmd.Flags().Int64Var(&opts.Revision, "to-revision", 0,
		"The revision to return to (default: the newest completed one with another OperatorVersion or other parameters)")
	opts.AddFlags(cmd.Flags(), "Wait until the plan the rollback runs has finished")
	return cmd
}

// Run rolls back (action.Rollback), says to what and, with --wait, waits
// for the plan the rollback runs.
func Run(ctx context.Context, cfg action.Config, opts *Options) error {
	change, target, err := opts.Run(ctx, cfg)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(cfg.Out, "Instance %s rolled back to revision %d: OperatorVersion %s, parameters %s\n",
		change.Instance.Name, target.Number, target.OperatorVersion, action.DescribeParameters(target))
	if !opts.Wait {
		return nil
	}
	return change.Wait(ctx, cfg, opts.WaitTime)
}
