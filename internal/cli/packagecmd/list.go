package packagecmd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/packages"
)

// ListOptions are the flags of `package list`.
type ListOptions struct {
	What         string
	Path         string
	Descriptions bool
}

func newListCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &ListOptions{}
	cmd := &cobra.Command{
		Use:       "list parameters|plans|tasks <dir|tgz>",
		Short:     "List a package's parameters, plans or tasks",
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"parameters", "plans", "tasks"},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.What, opts.Path = args[0], args[1]
			return RunList(cmd.Context(), streams, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Descriptions, "descriptions", "d", false, "Show parameter descriptions")
	return cmd
}

// RunList prints the package's parameters, plans or tasks.
func RunList(_ context.Context, streams genericiooptions.IOStreams, opts *ListOptions) error {
	p, err := packages.Read(opts.Path)
	if err != nil {
		return err
	}
	switch opts.What {
	case "parameters":
		return listParameters(streams.Out, p, opts.Descriptions)
	case "plans":
		return listPlans(streams.Out, p)
	case "tasks":
		return listTasks(streams.Out, p)
	default:
		return fmt.Errorf("cannot list %q: choose parameters, plans or tasks", opts.What)
	}
}

func listParameters(out io.Writer, p *packages.Package, descriptions bool) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := "NAME\tDEFAULT\tREQUIRED\tIMMUTABLE\tTRIGGER"
	if descriptions {
		header += "\tDESCRIPTION"
	}
	_, _ = fmt.Fprintln(w, header)
	ps := append([]packages.Parameter(nil), p.Params.Parameters...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	for _, param := range ps {
		def := "<none>"
		if param.Default != nil {
			def = oneLine(fmt.Sprint(param.Default))
		}
		row := fmt.Sprintf("%s\t%s\t%t\t%t\t%s", param.Name, def, param.IsRequired(), param.IsImmutable(), param.Trigger)
		if descriptions {
			row += "\t" + oneLine(param.Description)
		}
		_, _ = fmt.Fprintln(w, row)
	}
	return w.Flush()
}

func listPlans(out io.Writer, p *packages.Package) error {
	names := make([]string, 0, len(p.Operator.Plans))
	for n := range p.Operator.Plans {
		names = append(names, n)
	}
	sort.Strings(names)
	_, _ = fmt.Fprintln(out, "plans")
	for i, name := range names {
		plan := p.Operator.Plans[name]
		last := i == len(names)-1
		_, _ = fmt.Fprintf(out, "%s%s (%s)\n", branch(last), name, strategy(string(plan.Strategy)))
		indent := continuation(last)
		for j, phase := range plan.Phases {
			lastPhase := j == len(plan.Phases)-1
			_, _ = fmt.Fprintf(out, "%s%sphase %s (%s)\n", indent, branch(lastPhase), phase.Name, strategy(string(phase.Strategy)))
			stepIndent := indent + continuation(lastPhase)
			for k, step := range phase.Steps {
				lastStep := k == len(phase.Steps)-1
				_, _ = fmt.Fprintf(out, "%s%sstep %s: %s\n", stepIndent, branch(lastStep), step.Name, strings.Join(step.Tasks, ", "))
			}
		}
	}
	return nil
}

func listTasks(out io.Writer, p *packages.Package) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "NAME\tKIND\tRESOURCES")
	for _, t := range p.Operator.Tasks {
		resources := t.Spec.Resources
		switch {
		case t.Spec.Pod != "":
			resources = []string{t.Spec.Pod}
		case t.Spec.Package != "":
			resources = []string{"package " + t.Spec.Package}
		}
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\n", t.Name, t.Kind, strings.Join(resources, ", "))
	}
	return w.Flush()
}

func strategy(s string) string {
	if s == "" {
		return "serial"
	}
	return s
}

func branch(last bool) string {
	if last {
		return "└── "
	}
	return "├── "
}

func continuation(last bool) string {
	if last {
		return "    "
	}
	return "│   "
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
