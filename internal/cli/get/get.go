// Package get is `kubectl kudo get`: what is installed in a namespace, as
// KUDO's trees, or with -o yaml|json the objects themselves.
package get

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/output"
	"github.com/kudo-ng/kudo/internal/cli/tree"
)

// NewCmd returns the get command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	var format output.Format
	cmd := &cobra.Command{
		Use:       "get instances|operators|operatorversions|all",
		Short:     "List the Instances, Operators or OperatorVersions of a namespace",
		Example:   "  kubectl kudo get instances\n  kubectl kudo get all -o yaml",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"instances", "operators", "operatorversions", "all"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			c, ns, err := clientutil.New(flags)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), c, ns, streams.Out, args[0], format)
		},
	}
	output.Flag(cmd.Flags(), &format, "Output format. One of: json|yaml")
	return cmd
}

// installed is what a namespace holds.
type installed struct {
	operators []kudov1beta1.Operator
	versions  []kudov1beta1.OperatorVersion
	instances []kudov1beta1.Instance
}

// kinds are what get takes, and what each lists.
var kinds = map[string][]string{
	"operators": {"operators"}, "operatorversions": {"operatorversions"}, "instances": {"instances"},
	"all": {"operators", "operatorversions", "instances"},
}

// Run prints what is asked for: KUDO's tree of names, each with what it is
// now, or the objects, Operators then OperatorVersions then Instances for
// all.
func Run(ctx context.Context, c client.Client, ns string, out io.Writer, what string, format output.Format) error {
	listed, ok := kinds[what]
	if !ok {
		return fmt.Errorf("cannot get %q: choose instances, operators, operatorversions or all", what)
	}
	var all installed
	for _, kind := range listed {
		if err := all.list(ctx, c, ns, kind); err != nil {
			return fmt.Errorf("failed to retrieve %s: %w", kind, err)
		}
	}
	if format != "" {
		objs, err := all.objects()
		if err != nil {
			return err
		}
		return output.Objects(out, format, objs)
	}
	if what == "all" {
		_, err := fmt.Fprintf(out, "List of current installed operators including versions and instances in namespace %q:\n%s\n",
			ns, all.tree())
		return err
	}
	root := tree.New(".")
	for _, o := range all.operators {
		root.Add(operatorLine(&o))
	}
	for _, ov := range all.versions {
		root.Add(versionLine(&ov))
	}
	for _, i := range all.instances {
		root.Add(instanceLine(&i))
	}
	// KUDO's tree ends with an empty line.
	_, err := fmt.Fprintf(out, "List of current installed %s in namespace %q:\n%s\n", what, ns, root)
	return err
}

// list reads the namespace's objects of one kind.
func (all *installed) list(ctx context.Context, c client.Client, ns, kind string) error {
	switch kind {
	case "operators":
		list := &kudov1beta1.OperatorList{}
		err := c.List(ctx, list, client.InNamespace(ns))
		all.operators = list.Items
		return err
	case "operatorversions":
		list := &kudov1beta1.OperatorVersionList{}
		err := c.List(ctx, list, client.InNamespace(ns))
		all.versions = list.Items
		return err
	}
	list := &kudov1beta1.InstanceList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	for k := range list.Items {
		if err := clientutil.ReadRecord(ctx, c, &list.Items[k]); err != nil {
			return err
		}
	}
	all.instances = list.Items
	return nil
}

// objects are the objects listed with their kinds, which a typed list's
// items lack.
func (all *installed) objects() ([]client.Object, error) {
	objs := make([]client.Object, 0, len(all.operators)+len(all.versions)+len(all.instances))
	for k := range all.operators {
		objs = append(objs, &all.operators[k])
	}
	for k := range all.versions {
		objs = append(objs, &all.versions[k])
	}
	for k := range all.instances {
		objs = append(objs, &all.instances[k])
	}
	for _, obj := range objs {
		gvk, err := apiutil.GVKForObject(obj, clientutil.Scheme)
		if err != nil {
			return nil, err
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return objs, nil
}

// tree is KUDO's get all: each Operator, its OperatorVersions, their
// Instances.
func (all *installed) tree() *tree.Node {
	root := tree.New(".")
	for _, o := range all.operators {
		operator := root.Add(operatorLine(&o))
		for _, ov := range all.versions {
			if ov.Spec.Operator.Name != o.Name {
				continue
			}
			version := operator.Add(versionLine(&ov))
			for _, i := range all.instances {
				if i.Spec.OperatorVersion.Name == ov.Name {
					version.Add(instanceLine(&i))
				}
			}
		}
	}
	return root
}

func operatorLine(o *kudov1beta1.Operator) string {
	versions := make([]string, 0, len(o.Status.Versions))
	for _, v := range o.Status.Versions {
		versions = append(versions, v.Version)
	}
	if len(versions) == 0 {
		return o.Name
	}
	return fmt.Sprintf("%s (versions %s)", o.Name, strings.Join(versions, ", "))
}

func versionLine(ov *kudov1beta1.OperatorVersion) string {
	line := fmt.Sprintf("%s (%s %s", ov.Name, ov.Spec.Operator.Name, ov.Spec.Version)
	if ov.Spec.AppVersion != "" {
		line += ", app " + ov.Spec.AppVersion
	}
	return line + ")"
}

// instanceLine is the Instance as plan status heads its tree, and whether
// it is Ready.
func instanceLine(i *kudov1beta1.Instance) string {
	plan, status := "", ""
	if a := i.Status.ActivePlan; a != nil {
		plan, status = a.Name, " ["+string(a.Status)+"]"
	}
	ready := "Unknown"
	if cond := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition); cond != nil {
		ready = string(cond.Status)
	}
	cluster := ""
	if kc := i.Spec.KubeConfig; kc != nil {
		cluster = fmt.Sprintf(" Cluster: %q", kc)
	}
	return fmt.Sprintf("%s (Operator-Version: %q Active-Plan: %q%s Ready: %s%s)", i.Name, i.Spec.OperatorVersion.Name, plan, status, ready,
		cluster)
}
