// Package upgrade is `kubectl kudo upgrade`: move an Instance to a newer
// OperatorVersion of its package; its upgrade plan (or update, or deploy) runs.
package upgrade

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

// Options are the flags of upgrade.
type Options struct {
	action.Upgrade
	action.WaitOptions
	// Selector upgrades a fleet: every Instance, or typed object, of the
	// package in the namespace whose labels match, rather than --instance;
	// BySelector says it was given ("" matches every one).
	Selector   string
	BySelector bool
	Preview    action.PreviewOptions
}

// NewCmd returns the upgrade command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "upgrade <name|dir|tgz|url> --instance NAME | -l SELECTOR",
		Short: "Upgrade an Instance to a newer version of its package",
		Args:  cobra.ExactArgs(1),
		RunE: action.RunE(flags, streams, func(ctx context.Context, cfg action.Config, args []string) error {
			opts.Package = args[0]
			return Run(ctx, cfg, opts)
		}),
		PreRun: func(cmd *cobra.Command, _ []string) { opts.BySelector = cmd.Flags().Changed("selector") },
	}
	f := cmd.Flags()
	clientutil.InstanceFlag(cmd, &opts.Instance, flags)
	f.StringVarP(&opts.Selector, "selector", "l", "", "Upgrade every Instance, and typed object, of the package in the namespace "+
		"whose labels match, one after the other (kudo-ng; -l '' upgrades every one), rather than --instance")
	// --instance, or -l.
	delete(f.Lookup("instance").Annotations, cobra.BashCompOneRequiredFlag)
	cmd.MarkFlagsOneRequired("instance", "selector")
	cmd.MarkFlagsMutuallyExclusive("instance", "selector")
	opts.ParameterOptions.AddFlags(f)
	opts.PackageOptions.AddFlags(f, "to upgrade to")
	opts.WriteOptions.AddFlags(f)
	opts.AddFlags(f, "Wait until the upgrade's plan has finished")
	opts.Preview.AddFlags(f)
	return cmd
}

// Run upgrades (action.Upgrade) the Instance, or each of the fleet the
// selector matches, says what it changed and, with --wait, waits for the
// plan the upgrade runs.
func Run(ctx context.Context, cfg action.Config, opts *Options) error {
	if err := opts.Preview.Check(opts.Wait); err != nil {
		return err
	}
	if !opts.BySelector {
		if opts.Preview.Enabled() {
			return opts.Preview.Preview(cfg.Out, func() (*preview.Report, error) { return opts.Upgrade.Preview(ctx, cfg) })
		}
		return upgrade(ctx, cfg, opts)
	}
	fleet, err := opts.Fleet(ctx, cfg, opts.Selector)
	if err != nil {
		return err
	}
	if len(fleet) == 0 {
		return fmt.Errorf("no Instance or typed object of the package in namespace %s matches %q", cfg.Namespace, opts.Selector)
	}
	if opts.Preview.Enabled() {
		return previewFleet(ctx, cfg, opts, fleet)
	}
	for _, name := range fleet {
		one := *opts
		one.Instance = name
		if err := upgrade(ctx, cfg, &one); err != nil {
			return fmt.Errorf("%s (upgraded before it: those listed above): %w", name, err)
		}
	}
	return nil
}

func upgrade(ctx context.Context, cfg action.Config, opts *Options) error {
	change, ov, err := opts.Run(ctx, cfg)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(cfg.Out, "%s upgraded to %s\n", change.Object, ov.Name)
	if !opts.Wait {
		return nil
	}
	return change.Wait(ctx, cfg, opts.WaitTime)
}

// previewFleet previews the upgrade of each Instance of the fleet, then
// sums them up, one line each.
func previewFleet(ctx context.Context, cfg action.Config, opts *Options, fleet []string) error {
	reports := make([]*preview.Report, 0, len(fleet))
	for _, name := range fleet {
		one := opts.Upgrade
		one.Instance = name
		r, err := one.Preview(ctx, cfg)
		if err != nil {
			return &action.PreviewFailed{Err: fmt.Errorf("%s: %w", name, err)}
		}
		reports = append(reports, r)
	}
	return opts.Preview.Print(cfg.Out, reports...)
}
