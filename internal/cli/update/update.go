// Package update is `kubectl kudo update`: change an Instance's parameters,
// which runs the plan they trigger.
package update

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Options are the flags of update.
type Options struct {
	Instance       string
	Parameters     []string
	ParameterFiles []string
	Wait           bool
	WaitTime       time.Duration
}

// NewCmd returns the update command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:     "update --instance NAME -p NAME=VALUE...",
		Short:   "Change the parameters of an Instance; the plan they trigger runs",
		Example: "  kubectl kudo update --instance zk -p NODE_COUNT=5 --wait",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := clientutil.New(flags)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), c, ns, streams, opts)
		},
	}
	clientutil.InstanceFlag(cmd, &opts.Instance, flags)
	clientutil.ParameterFlags(cmd.Flags(), &opts.Parameters, &opts.ParameterFiles)
	_ = cmd.RegisterFlagCompletionFunc("parameter", clientutil.CompleteParameters(flags))
	clientutil.WaitFlags(cmd.Flags(), &opts.Wait, &opts.WaitTime, "Wait until the triggered plan has finished")
	return cmd
}

// Run checks the new values against the OperatorVersion, then patches them:
// into the Instance, or into the typed object that makes it.
func Run(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	if len(opts.Parameters) == 0 && len(opts.ParameterFiles) == 0 {
		return fmt.Errorf("nothing to update: give parameters with -p NAME=VALUE or -P FILE")
	}
	i, ov, err := clientutil.GetInstance(ctx, c, ns, opts.Instance)
	if err != nil {
		return err
	}
	changes, err := params.Resolve(params.Optional(ov.Spec.Parameters), opts.ParameterFiles, opts.Parameters)
	if err != nil {
		return err
	}
	clientutil.WarnPlainSensitive(streams.ErrOut, changes, ov.Spec.Parameters)
	if typed := typedapi.HolderOf(i); typed != nil {
		spec, err := clientutil.TypedChanges(changes, ov.Spec.Parameters)
		if err != nil {
			return err
		}
		if err := clientutil.PatchTyped(ctx, c, typed, spec); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(streams.Out, "%s updated\n", clientutil.TypedName(typed))
		if opts.Wait {
			if err := clientutil.AwaitInstanceOf(ctx, c, typed, changes.AppliedTo); err != nil {
				return err
			}
		}
	} else {
		patch := client.MergeFrom(i.DeepCopy())
		changes.ApplyTo(&i.Spec)
		if err := c.Patch(ctx, i, patch); err != nil {
			return fmt.Errorf("updating Instance %s: %w", i.Name, err)
		}
		_, _ = fmt.Fprintf(streams.Out, "instance.kudo.dev/%s updated\n", i.Name)
	}
	if !opts.Wait {
		return nil
	}
	return action.Wait(ctx, c, ns, streams.Out, i.Name, opts.WaitTime)
}
