// Package rolloutcmd is `kubectl kudo rollout` (kudo-ng): a Rollout's waves
// and where it is, and pausing and resuming it.
package rolloutcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/yamlbound"
)

// NewCmd returns the rollout command and its verbs.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "rollout", Short: "Show, pause and resume Rollouts of a package's new version (kudo-ng)"}
	verb := func(use, short string, run func(context.Context, client.Client, string, string) error) *cobra.Command {
		return &cobra.Command{
			Use: use + " NAME", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, ns, err := clientutil.New(flags)
				if err != nil {
					return err
				}
				return run(cmd.Context(), c, ns, args[0])
			},
		}
	}
	status := verb("status", "Show a Rollout's waves, and what the current one waits for",
		func(ctx context.Context, c client.Client, ns, name string) error {
			ro := &kudov1alpha1.Rollout{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
				return err
			}
			return PrintStatus(streams.Out, ro, time.Now())
		})
	set := func(use, short, field string, value bool, done string) *cobra.Command {
		return verb(use, short, func(ctx context.Context, c client.Client, ns, name string) error {
			return setSpec(ctx, c, ns, name, field, value, done, streams.Out)
		})
	}
	cmd.AddCommand(status, previewCmd(streams, flags),
		set("pause", "Start no more upgrades; those running go on", "paused", true, "paused"),
		set("resume", "Start upgrades again", "paused", false, "resumed"),
		set("abort", "Stop for good, and roll the current wave's upgraded Instances back", "abort", true, "aborted"),
		set("undo", "Roll every Instance the rollout upgraded back to what it ran before", "undo", true, "undone"))
	return cmd
}

// setSpec sets a field of the Rollout's spec, and says so as kubectl does.
func setSpec(ctx context.Context, c client.Client, ns, name, field string, value bool, done string, out io.Writer) error {
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{field: value}})
	if err != nil {
		return err
	}
	ro := &kudov1alpha1.Rollout{}
	ro.Namespace, ro.Name = ns, name
	if err := c.Patch(ctx, ro, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "rollout.kudo.dev/%s %s\n", name, done)
	return err
}

// PrintStatus prints the Rollout as rollout status does: a line of where it
// is, the failure that paused it, then a line per wave.
func PrintStatus(w io.Writer, ro *kudov1alpha1.Rollout, now time.Time) error {
	ready := apimeta.FindStatusCondition(ro.Status.Conditions, kudov1beta1.ReadyCondition)
	state := "not started"
	if ready != nil {
		state = ready.Message
	}
	_, _ = fmt.Fprintf(w, "Rollout %s of %s to %s: %d of %d Instances upgraded. %s\n", ro.Name, ro.Spec.Operator, ro.Spec.OperatorVersion,
		ro.Status.Updated, ro.Status.Total, state)
	switch f := ro.Status.Failure; {
	case f == nil:
	case f.Instance == "":
		_, _ = fmt.Fprintf(w, "Stopped: %s\n", f.Reason)
	default:
		_, _ = fmt.Fprintf(w, "Failed: Instance %s: %s\n", f.Instance, f.Reason)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	byCluster := len(ro.Spec.Strategy.Clusters) > 0
	if byCluster {
		_, _ = fmt.Fprintln(tw, "WAVE\tCLUSTER\tPHASE\tINSTANCES\tTOOK")
	} else {
		_, _ = fmt.Fprintln(tw, "WAVE\tPHASE\tINSTANCES\tTOOK")
	}
	for n, wave := range ro.Status.Waves {
		took := ""
		switch {
		case wave.StartedAt != nil && wave.CompletedAt != nil:
			took = wave.CompletedAt.Sub(wave.StartedAt.Time).Round(time.Second).String()
		case wave.StartedAt != nil:
			took = now.Sub(wave.StartedAt.Time).Round(time.Second).String() + " so far"
		}
		if byCluster {
			_, _ = fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", n+1, wave.Cluster, wave.Phase, strings.Join(wave.Instances, ", "), took)
		} else {
			_, _ = fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", n+1, wave.Phase, strings.Join(wave.Instances, ", "), took)
		}
	}
	return tw.Flush()
}

// maxRolloutBytes bounds a Rollout's manifest: one object, small.
const maxRolloutBytes = 1 << 20

// previewCmd is `rollout preview NAME | -f FILE`: the waves the Rollout
// would plan now and what each Instance's upgrade would do, as the caller,
// writing nothing.
func previewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &action.PreviewOptions{}
	var file string
	cmd := &cobra.Command{
		Use:   "preview NAME | -f FILE",
		Short: "Show the waves a Rollout would plan now, and what upgrading each Instance would do, writing nothing",
		Args:  cobra.MaximumNArgs(1),
		RunE: action.RunE(flags, streams, func(ctx context.Context, cfg action.Config, args []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			ro, err := readRollout(ctx, cfg, args, file, streams.In)
			if err != nil {
				return err
			}
			waves, err := action.PreviewRollout(ctx, cfg, ro)
			if err != nil {
				return &action.PreviewFailed{Err: err}
			}
			return opts.PrintRollout(cfg.Out, waves)
		}),
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", `A Rollout's manifest, "-" for standard input, rather than NAME`)
	cmd.Flags().BoolVar(&opts.Diff, "diff", false, "Print each Instance's plan and the diff of every object it would change")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "Print the preview as json or yaml")
	return cmd
}

// readRollout is the Rollout NAME in the namespace, or the one of a manifest.
func readRollout(ctx context.Context, cfg action.Config, args []string, file string, in io.Reader) (*kudov1alpha1.Rollout, error) {
	ro := &kudov1alpha1.Rollout{}
	switch {
	case len(args) == 1 && file == "":
		return ro, cfg.Client.Get(ctx, types.NamespacedName{Namespace: cfg.Namespace, Name: args[0]}, ro)
	case len(args) == 0 && file != "":
	default:
		return nil, errors.New("name a Rollout, or give its manifest with -f FILE")
	}
	data, err := clientutil.ReadFile(file, in, maxRolloutBytes)
	if err != nil {
		return nil, err
	}
	if err := yamlbound.Unmarshal(data, ro, yamlbound.Within(maxRolloutBytes)); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if ro.Namespace == "" {
		ro.Namespace = cfg.Namespace
	}
	return ro, nil
}
