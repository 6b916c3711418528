package plan

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/output"
	"github.com/kudo-ng/kudo/internal/cli/tree"
	"github.com/kudo-ng/kudo/internal/engine"
)

// Options are the flags the plan verbs share.
type Options struct {
	Instance string
	Name     string
	Output   output.Format
	Wait     bool
	WaitTime time.Duration
	// Poll is how often --wait looks again.
	Poll time.Duration
}

func (o *Options) waiting() action.Waiting { return action.Waiting{Timeout: o.WaitTime, Poll: o.Poll} }

// verb is what a plan verb does, given a client of the cluster.
type verb func(context.Context, client.Client, string, genericiooptions.IOStreams, *Options) error

// NewCmd returns the plan command and its verbs.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "plan", Short: "Show, trigger, cancel and retry an Instance's plans"}
	sub := func(use, short string, run verb, wait bool) (*cobra.Command, *Options) {
		opts := &Options{Poll: 500 * time.Millisecond}
		c := &cobra.Command{
			Use: use, Short: short, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				c, ns, err := clientutil.New(flags)
				if err != nil {
					return err
				}
				return run(cmd.Context(), c, ns, streams, opts)
			},
		}
		clientutil.InstanceFlag(c, &opts.Instance, flags)
		if wait {
			clientutil.WaitFlags(c.Flags(), &opts.Wait, &opts.WaitTime, "Wait until the plan has finished")
		}
		cmd.AddCommand(c)
		return c, opts
	}
	status, statusOpts := sub("status", "Show the plans of an Instance as a tree", Status, true)
	output.Flag(status.Flags(), &statusOpts.Output, "Output format: json or yaml, the Instance's status (default: the tree)")
	trigger, triggerOpts := sub("trigger", "Run a plan of an Instance", Trigger, true)
	trigger.Flags().StringVar(&triggerOpts.Name, "name", "", "The plan to run")
	_ = trigger.MarkFlagRequired("name")
	sub("history", "List the last run of each plan of an Instance", History, false)
	sub("cancel", "Cancel the running plan of an Instance (kudo-ng)", Cancel, false)
	sub("retry", "Resume the failed plan of an Instance from its failed steps (kudo-ng)", Retry, true)
	return cmd
}

// Status prints the plan tree of the Instance; with Wait, it prints it again
// on every change until the running plan ends.
func Status(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	if err := opts.Output.Validate(); err != nil {
		return err
	}
	i, ov, err := action.ReadInstance(ctx, c, ns, opts.Instance)
	if err != nil {
		return err
	}
	if opts.Output != "" {
		return output.Object(streams.Out, opts.Output, i.Status)
	}
	if !opts.Wait {
		return WriteStatus(streams.Out, i, ov)
	}
	return action.WaitFor(ctx, c, streams.Out, opts.waiting(), i, ov, reprintTree)
}

// reprintTree prints the whole tree again on every change (plan status).
func reprintTree(out io.Writer, last, cur *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error {
	if last != nil && cur.ResourceVersion == last.ResourceVersion {
		return nil
	}
	return WriteStatus(out, cur, ov)
}

// Trigger asks for a plan (action.PlanRequest), as KUDO's plan trigger does;
// with Wait, it prints the run's progress until it ends.
func Trigger(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	r, err := (&action.PlanRequest{Instance: opts.Instance, Plan: opts.Name}).Trigger(ctx, action.NewConfig(c, ns, streams))
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(streams.Out, "Triggered plan %s for Instance %s\n", r.Plan, r.Instance.Name)
	return waitIfAsked(ctx, c, streams, opts, r)
}

// Cancel cancels the running plan (action.PlanRequest).
func Cancel(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	r, err := (&action.PlanRequest{Instance: opts.Instance}).Cancel(ctx, action.NewConfig(c, ns, streams))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "Cancelled plan %s of Instance %s\n", r.Plan, r.Instance.Name)
	return err
}

// Retry resumes the failed plan from its failed steps (action.PlanRequest);
// with Wait, it prints the run's progress until it ends.
func Retry(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	r, err := (&action.PlanRequest{Instance: opts.Instance}).Retry(ctx, action.NewConfig(c, ns, streams))
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(streams.Out, "Retrying plan %s of Instance %s from its failed steps\n", r.Plan, r.Instance.Name)
	return waitIfAsked(ctx, c, streams, opts, r)
}

// waitIfAsked prints, with --wait, the progress of the run asked for until
// it ends.
func waitIfAsked(ctx context.Context, c client.Client, streams genericiooptions.IOStreams, opts *Options, r *action.Requested) error {
	if !opts.Wait {
		return nil
	}
	return action.WaitFor(ctx, c, streams.Out, opts.waiting(), r.Instance, r.OperatorVersion, action.WriteProgress)
}

// History lists the last run of every plan, most recent first.
func History(ctx context.Context, c client.Client, ns string, streams genericiooptions.IOStreams, opts *Options) error {
	i, _, err := action.ReadInstance(ctx, c, ns, opts.Instance)
	if err != nil {
		return err
	}
	root := tree.New(".")
	for _, name := range slices.Sorted(maps.Keys(i.Status.PlanStatus)) {
		ps := i.Status.PlanStatus[name]
		run := "never run"
		switch {
		case ps.LastUpdatedTimestamp != nil && !ps.LastUpdatedTimestamp.IsZero():
			run = fmt.Sprintf("last finished run at %s (%s)", ps.LastUpdatedTimestamp.UTC().Format("2006-01-02T15:04:05"), ps.Status)
		case ps.Status.IsRunning():
			run = "is running"
		case ps.Status != "":
			run = string(ps.Status)
		}
		line := fmt.Sprintf("%s (%s)", name, run)
		if ps.UID != "" {
			line += " uid " + string(ps.UID)
		}
		root.Add(line)
	}
	// KUDO's tree ends with an empty line.
	_, _ = fmt.Fprintln(streams.Out, root.String())
	return writeRevisions(streams.Out, i)
}

// writeRevisions lists the runs kubectl kudo rollback can return to
// (kudo-ng), below KUDO's history.
func writeRevisions(out io.Writer, i *kudov1beta1.Instance) error {
	if len(i.Status.Revisions) == 0 {
		return nil
	}
	_, _ = fmt.Fprintf(out, "Revisions (kubectl kudo rollback --to-revision N):\n")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "REVISION\tPLAN\tSTATUS\tOPERATOR VERSION\tSTARTED\tPARAMETERS")
	for _, r := range slices.Backward(engine.Revisions(&i.Status)) {
		started := ""
		if r.StartedAt != nil {
			started = r.StartedAt.UTC().Format(time.DateTime)
		}
		_, _ = fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n",
			r.Number, r.Plan, r.Status, r.OperatorVersion, started, action.DescribeParameters(&r))
	}
	return w.Flush()
}
