// Package get is `kubectl kudo get`: what is installed in a namespace.
package get

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// NewCmd returns the get command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:       "get instances|operators|operatorversions|all",
		Short:     "List the Instances, Operators or OperatorVersions of a namespace",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"instances", "operators", "operatorversions", "all"},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := clientutil.New(flags)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), c, ns, streams.Out, args[0])
		},
	}
}

// Run prints the tables asked for.
func Run(ctx context.Context, c client.Client, ns string, out io.Writer, what string) error {
	printers := map[string]func(context.Context, client.Client, string, io.Writer) error{
		"instances": instances, "operators": operators, "operatorversions": operatorVersions,
	}
	if what == "all" {
		for _, kind := range []string{"operators", "operatorversions", "instances"} {
			if err := printers[kind](ctx, c, ns, out); err != nil {
				return err
			}
		}
		return nil
	}
	printer, ok := printers[what]
	if !ok {
		return fmt.Errorf("cannot get %q: choose instances, operators, operatorversions or all", what)
	}
	return printer(ctx, c, ns, out)
}

func instances(ctx context.Context, c client.Client, ns string, out io.Writer) error {
	list := &kudov1beta1.InstanceList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "INSTANCE\tOPERATOR VERSION\tPLAN\tPLAN STATUS\tREADY")
	for _, i := range list.Items {
		plan, status := "", ""
		if a := i.Status.ActivePlan; a != nil {
			plan, status = a.Name, string(a.Status)
		}
		ready := "Unknown"
		if cond := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition); cond != nil {
			ready = string(cond.Status)
		}
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", i.Name, i.Spec.OperatorVersion.Name, plan, status, ready)
	}
	return w.Flush()
}

func operators(ctx context.Context, c client.Client, ns string, out io.Writer) error {
	list := &kudov1beta1.OperatorList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "OPERATOR\tVERSIONS")
	for _, o := range list.Items {
		versions := ""
		for k, v := range o.Status.Versions {
			if k > 0 {
				versions += ", "
			}
			versions += v.Version
		}
		_, _ = fmt.Fprintf(w, "%s\t%s\n", o.Name, versions)
	}
	return w.Flush()
}

func operatorVersions(ctx context.Context, c client.Client, ns string, out io.Writer) error {
	list := &kudov1beta1.OperatorVersionList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "OPERATOR VERSION\tOPERATOR\tVERSION\tAPP VERSION")
	for _, ov := range list.Items {
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", ov.Name, ov.Spec.Operator.Name, ov.Spec.Version, ov.Spec.AppVersion)
	}
	return w.Flush()
}
