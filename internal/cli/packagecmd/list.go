package packagecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gosuri/uitable"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/repoconfig"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/cli/tree"
	"github.com/kudo-ng/kudo/internal/packages"
)

// ListOptions are the flags of `package list parameters|plans|tasks`.
type ListOptions struct {
	What string
	// Package is a directory, a tarball, a URL or a name in the repository.
	Package         string
	Repo            string
	AppVersion      string
	OperatorVersion string
	// Descriptions, Names and Required choose the parameters' columns and
	// rows; one at most.
	Descriptions, Names, Required bool
	// Triggers adds the plan a change of each parameter runs, which KUDO's
	// table did not show.
	Triggers bool
	// WithTasks shows each task of the plans with its kind and templates.
	WithTasks bool
}

// newListCmd is KUDO's `package list` and its parameters, plans and tasks.
func newListCmd(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list parameters|plans|tasks <dir|tgz|url|name>",
		Short: "List a package's parameters, plans or tasks",
	}
	sub := func(what, short string, flags func(*cobra.Command, *ListOptions)) *cobra.Command {
		opts := &ListOptions{What: what}
		c := &cobra.Command{
			Use:   what + " <dir|tgz|url|name>",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				opts.Package = args[0]
				return RunList(cmd.Context(), streams, opts)
			},
		}
		f := c.Flags()
		clientutil.RepoFlag(f, &opts.Repo)
		f.StringVar(&opts.AppVersion, "app-version", "", "App version of a package looked up by name (default: the most recent)")
		f.StringVar(&opts.OperatorVersion, "operator-version", "", "Operator version of a package looked up by name (default: the most recent)")
		if flags != nil {
			flags(c, opts)
		}
		return c
	}
	cmd.AddCommand(
		sub("parameters", "List a package's parameters", func(c *cobra.Command, opts *ListOptions) {
			c.Aliases = []string{"params"}
			c.Flags().BoolVarP(&opts.Descriptions, "descriptions", "d", false, "Show the parameters' descriptions")
			c.Flags().BoolVar(&opts.Names, "names", false, "Show only the parameters' names")
			c.Flags().BoolVarP(&opts.Required, "required", "r", false, "Show only the parameters that are required and have no default")
			c.Flags().BoolVar(&opts.Triggers, "triggers", false, "Show the plan a change of each parameter triggers")
		}),
		sub("plans", "List a package's plans", func(c *cobra.Command, opts *ListOptions) {
			c.Flags().BoolVarP(&opts.WithTasks, "with-tasks", "t", false, "Show each task with its kind and the templates it renders")
		}),
		sub("tasks", "List a package's tasks", nil),
	)
	return cmd
}

// RunList prints the package's parameters, plans or tasks in KUDO's shape.
func RunList(ctx context.Context, streams genericiooptions.IOStreams, opts *ListOptions) error {
	if n := countTrue(opts.Descriptions, opts.Names, opts.Required); n > 1 {
		return errors.New("only one of the flags 'required', 'names', 'descriptions' can be set")
	}
	repo, err := repoconfig.Resolve(opts.Repo)
	if err != nil {
		return err
	}
	p, err := resolve.Package(ctx, resolve.Request{
		Ref: opts.Package, Repo: repo, AppVersion: opts.AppVersion, OperatorVersion: opts.OperatorVersion,
	})
	if err != nil {
		return err
	}
	switch opts.What {
	case "parameters":
		return listParameters(streams.Out, p, opts)
	case "plans":
		return listPlans(streams.Out, p, opts.WithTasks)
	case "tasks":
		return listTasks(streams.Out, p)
	}
	return fmt.Errorf("cannot list %q: choose parameters, plans or tasks", opts.What)
}

// defaultText is a parameter's default on one line: its text, or JSON for
// an array or a map.
func defaultText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return oneLine(v)
	case []any, map[string]any:
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
	}
	return oneLine(fmt.Sprint(v))
}

func countTrue(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

// listParameters is KUDO's table, sorted by name: Name, Default, Required,
// Immutable (and Descriptions, and with Triggers the plan each runs); or
// the names of all parameters or of those that need a value.
func listParameters(out io.Writer, p *packages.Package, opts *ListOptions) error {
	ps := append([]packages.Parameter(nil), p.Params.Parameters...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	table := uitable.New()
	switch {
	case opts.Names:
		table.AddRow("Name")
		for _, param := range ps {
			table.AddRow(param.Name)
		}
		_, err := fmt.Fprintln(out, table)
		return err
	case opts.Required:
		table.AddRow("Name")
		for _, param := range ps {
			if param.Default == nil && param.IsRequired() {
				table.AddRow(param.Name)
			}
		}
		if len(table.Rows) == 1 {
			_, err := fmt.Fprintln(out, "no required parameters without default values found")
			return err
		}
		_, err := fmt.Fprintln(out, table)
		return err
	}
	// KUDO's widths: a longer cell wraps at its spaces, or is cut.
	table.MaxColWidth, table.Wrap = 35, true
	header := []any{"Name", "Default", "Required", "Immutable"}
	if opts.Descriptions {
		header = append(header, "Descriptions")
	}
	if opts.Triggers {
		header = append(header, "Trigger")
	}
	table.AddRow(header...)
	for _, param := range ps {
		row := []any{param.Name, defaultText(param.Default), param.IsRequired(), param.IsImmutable()}
		if opts.Descriptions {
			row = append(row, oneLine(param.Description))
		}
		if opts.Triggers {
			row = append(row, param.Trigger)
		}
		table.AddRow(row...)
	}
	_, err := fmt.Fprintln(out, table)
	return err
}

// listPlans is KUDO's tree of plans, phases, steps and tasks; withTasks
// shows each task's kind and templates.
func listPlans(out io.Writer, p *packages.Package, withTasks bool) error {
	if len(p.Operator.Plans) == 0 {
		_, err := fmt.Fprintln(out, "no plans found")
		return err
	}
	tasks := map[string]kudov1beta1.Task{}
	for _, t := range p.Operator.Tasks {
		tasks[t.Name] = t
	}
	root := tree.New("plans")
	for _, name := range slices.Sorted(maps.Keys(p.Operator.Plans)) {
		plan := p.Operator.Plans[name]
		planNode := root.Add(fmt.Sprintf("%s (%s)", name, strategy(plan.Strategy)))
		for _, phase := range plan.Phases {
			phaseNode := planNode.AddMeta("phase", fmt.Sprintf("%s (%s)", phase.Name, strategy(phase.Strategy)))
			for _, step := range phase.Steps {
				stepNode := phaseNode.AddMeta("step", step.Name)
				for _, name := range step.Tasks {
					if withTasks {
						addTask(stepNode, name, tasks[name])
					} else {
						stepNode.Add(name)
					}
				}
			}
		}
	}
	// KUDO's tree ends with an empty line.
	_, err := fmt.Fprintln(out, root.String())
	return err
}

// addTask is a task under its step, as KUDO's --with-tasks: its kind as the
// meta, and the templates, toggle parameter, pipe pod or package below it.
func addTask(step *tree.Node, name string, t kudov1beta1.Task) {
	switch t.Kind {
	case kudov1beta1.ApplyTaskKind, kudov1beta1.DeleteTaskKind, kudov1beta1.ToggleTaskKind:
		node := step.AddMeta(strings.ToLower(string(t.Kind)), name)
		if t.Kind == kudov1beta1.ToggleTaskKind {
			node.AddMeta("parameter", t.Spec.Parameter)
		}
		for _, r := range t.Spec.Resources {
			node.Add(r)
		}
	case kudov1beta1.PipeTaskKind:
		step.AddMeta("pipe", name).Add(t.Spec.Pod)
	case kudov1beta1.KudoOperatorTaskKind:
		step.AddMeta("kudooperator", name).AddMeta("package", t.Spec.Package)
	case kudov1beta1.DummyTaskKind:
		step.AddMeta("dummy", name)
	default:
		step.AddMeta("unknown", name)
	}
}

// listTasks is KUDO's table: Name, Kind, and the templates as KUDO printed
// the list ([a.yaml b.yaml]), or the Pipe task's pod, or (where KUDO
// printed []) the KudoOperator task's package.
func listTasks(out io.Writer, p *packages.Package) error {
	if len(p.Operator.Tasks) == 0 {
		_, err := fmt.Fprintln(out, "no tasks found")
		return err
	}
	table := uitable.New()
	table.AddRow("Name", "Kind", "Resources")
	for _, t := range p.Operator.Tasks {
		var resources any = t.Spec.Resources
		switch t.Kind {
		case kudov1beta1.PipeTaskKind:
			resources = t.Spec.Pod
		case kudov1beta1.KudoOperatorTaskKind:
			resources = "package " + t.Spec.Package
		}
		table.AddRow(t.Name, t.Kind, resources)
	}
	_, err := fmt.Fprintln(out, table)
	return err
}

func strategy(s kudov1beta1.Ordering) string {
	if s == "" {
		return string(kudov1beta1.Serial)
	}
	return string(s)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
