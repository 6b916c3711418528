// Package explain is `kubectl kudo explain` (kudo-ng): the story of an
// Instance's readiness, from what its manager recorded — its conditions,
// the plan it runs or ran last, and, for each step that waits, the objects
// it waits on, what judged each (a package's health rule or kstatus), the
// values a rule read, and since when.
package explain

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// NewCmd returns the explain command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	var instance string
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Explain why an Instance is or is not ready: its plan, the objects its steps wait on, the rules that judged them (kudo-ng)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ns, err := clientutil.New(flags)
			if err != nil {
				return err
			}
			i, _, err := clientutil.GetInstance(cmd.Context(), c, ns, instance)
			if err != nil {
				return err
			}
			return Write(streams.Out, i, time.Now())
		},
	}
	clientutil.InstanceFlag(cmd, &instance, flags)
	return cmd
}

// Write prints the story of i's readiness as of now.
func Write(w io.Writer, i *kudov1beta1.Instance, now time.Time) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Instance %s/%s of %s\n", i.Namespace, i.Name, i.Spec.OperatorVersion.Name)
	said := ""
	for _, t := range []string{kudov1beta1.ReadyCondition, kudov1beta1.ReconcilingCondition, kudov1beta1.StalledCondition} {
		c := meta.FindStatusCondition(i.Status.Conditions, t)
		if c == nil {
			continue
		}
		fmt.Fprintf(&b, "%s: %s (%s), since %s\n", c.Type, c.Status, c.Reason, at(c.LastTransitionTime, now))
		// Reconciling and Stalled mostly repeat Ready's message.
		if c.Message != "" && c.Message != said {
			fmt.Fprintf(&b, "  %s\n", c.Message)
			said = c.Message
		}
	}
	a := i.Status.ActivePlan
	if a == nil {
		b.WriteString("No plan has run yet.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	ps := i.Status.PlanStatus[a.Name]
	fmt.Fprintf(&b, "Plan %s [%s]", a.Name, ps.Status)
	if ps.StartedAt != nil {
		fmt.Fprintf(&b, ", started %s", at(*ps.StartedAt, now))
	}
	b.WriteString(action.InParentheses(ps.Message) + "\n")
	for _, phase := range ps.Phases {
		fmt.Fprintf(&b, "  Phase %s [%s]\n", phase.Name, phase.Status)
		for _, s := range phase.Steps {
			writeStep(&b, &s, now)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeStep prints a step; one that runs, with what it waits on.
func writeStep(b *strings.Builder, s *kudov1beta1.StepStatus, now time.Time) {
	fmt.Fprintf(b, "    Step %s [%s]", s.Name, s.Status)
	if s.StartedAt != nil {
		fmt.Fprintf(b, ", started %s", at(*s.StartedAt, now))
	}
	b.WriteString("\n")
	if s.Status != kudov1beta1.ExecutionInProgress && s.Status != kudov1beta1.ExecutionError && s.Status != kudov1beta1.ExecutionFatalError {
		return
	}
	if len(s.WaitingOn) == 0 && s.Message != "" {
		fmt.Fprintf(b, "      %s\n", s.Message)
	}
	for _, w := range s.WaitingOn {
		fmt.Fprintf(b, "      %s %s [%s]", w.APIVersion, action.ObjectName(&w), w.Status)
		if w.Since != nil {
			fmt.Fprintf(b, ", waited on since %s", at(*w.Since, now))
		}
		b.WriteString("\n")
		fmt.Fprintf(b, "        judged by: %s\n", w.Rule)
		for _, o := range w.Observed {
			fmt.Fprintf(b, "        %s = %s\n", o.Field, o.Value)
		}
		if w.Message != "" {
			fmt.Fprintf(b, "        %s\n", w.Message)
		}
	}
	if s.MoreWaitingOn > 0 {
		fmt.Fprintf(b, "      … and %d more objects not listed\n", s.MoreWaitingOn)
	}
}

// at is a time in UTC and how long ago it was.
func at(t metav1.Time, now time.Time) string {
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.DateTime), duration.HumanDuration(now.Sub(t.Time)))
}
