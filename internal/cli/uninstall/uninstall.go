// Package uninstall is `kubectl kudo uninstall`: delete an Instance; its
// cleanup plan runs first, then what it applied goes.
package uninstall

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// NewCmd returns the uninstall command: flags over action.Uninstall, which
// says what it deletes and waits for as it goes.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &action.Uninstall{Poll: 250 * time.Millisecond}
	cmd := &cobra.Command{
		Use:   "uninstall --instance NAME",
		Short: "Delete an Instance, after its cleanup plan",
		Args:  cobra.NoArgs,
		RunE: action.RunE(flags, streams, func(ctx context.Context, cfg action.Config, _ []string) error {
			return opts.Run(ctx, cfg)
		}),
	}
	clientutil.InstanceFlag(cmd, &opts.Instance, flags)
	opts.AddFlags(cmd.Flags(), "Wait until the Instance and every object it applied are gone")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "Cancel the Instance's cleanup plan once it runs (within --wait-time): "+
		"the manager then removes what the Instance applied and lets it go, for a cleanup that cannot finish")
	return cmd
}
