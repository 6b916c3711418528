// Package uninstall is `kubectl kudo uninstall`: delete an Instance; its
// cleanup plan runs first, then what it owned goes.
package uninstall

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// Options are the flags of uninstall.
type Options struct {
	Instance string
	Wait     bool
	WaitTime time.Duration
	Poll     time.Duration
}

// NewCmd returns the uninstall command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{Poll: 250 * time.Millisecond}
	cmd := &cobra.Command{
		Use:   "uninstall --instance NAME",
		Short: "Delete an Instance, after its cleanup plan",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := clientutil.New(flags)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), c, ns, streams, opts)
		},
	}
	clientutil.InstanceFlag(cmd, &opts.Instance, flags)
	clientutil.WaitFlags(cmd.Flags(), &opts.Wait, &opts.WaitTime, "Wait until the Instance is gone")
	return cmd
}

// Run deletes the Instance and, with Wait, waits until it is gone.
func Run(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: opts.Instance}, i); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("instance %s not found in namespace %s", opts.Instance, ns)
		}
		return err
	}
	if err := c.Delete(ctx, i); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Instance %s: %w", i.Name, err)
	}
	_, _ = fmt.Fprintf(streams.Out, "instance.kudo.dev/%s deleted\n", i.Name)
	if !opts.Wait {
		return nil
	}
	deadline := time.Now().Add(opts.WaitTime)
	for {
		err := c.Get(ctx, client.ObjectKeyFromObject(i), &kudov1beta1.Instance{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("instance %s is still there after %s: see kubectl kudo plan status --instance %s", i.Name, opts.WaitTime, i.Name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(opts.Poll):
		}
	}
}
