package packagecmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/preview"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
)

// RenderOptions are the flags of `package render`.
type RenderOptions struct {
	Path              string
	Instance          string
	Namespace         string
	Plan              string
	Parameters        []string
	ParameterFiles    []string
	KubernetesVersion string
}

func newRenderCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &RenderOptions{}
	cmd := &cobra.Command{
		Use:   "render <dir|tgz>",
		Short: "Print the objects each step of a plan would apply, without a cluster",
		Example: `  kubectl kudo package render ./zookeeper/operator -p NODE_COUNT=5
  kubectl kudo package render ./mysql/operator --plan backup -P values.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return RunRender(cmd.Context(), streams, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Instance, "instance", "", "Instance name (default <operator>-instance)")
	cmd.Flags().StringVar(&opts.Namespace, "render-namespace", "default", "Namespace the Instance would run in")
	cmd.Flags().StringVar(&opts.Plan, "plan", kudov1beta1.DeployPlanName, "Plan to render")
	cmd.Flags().StringArrayVarP(&opts.Parameters, "parameter", "p", nil, "Parameter value: NAME=VALUE, NAME=[a,b] or NAME={k1:v1,k2:v2}")
	cmd.Flags().StringArrayVarP(&opts.ParameterFiles, "parameter-file", "P", nil, "YAML file of parameter values")
	cmd.Flags().StringVar(&opts.KubernetesVersion, "kubernetes-version", packages.DefaultKubernetesVersion,
		"Kubernetes version whose API versions the objects are migrated to")
	return cmd
}

// RunRender prints, as a YAML stream, what every task of the plan would do.
func RunRender(_ context.Context, streams genericiooptions.IOStreams, opts *RenderOptions) error {
	p, err := packages.Read(opts.Path)
	if err != nil {
		return err
	}
	_, ov, err := p.Convert(opts.Namespace)
	if err != nil {
		return err
	}
	values, err := params.Resolve(ov.Spec.Parameters, opts.ParameterFiles, opts.Parameters)
	if err != nil {
		return err
	}
	served, err := migrate.ServedBy(opts.KubernetesVersion)
	if err != nil {
		return err
	}
	instance := opts.Instance
	if instance == "" {
		instance = p.Operator.Name + "-instance"
	}
	tasks, err := preview.Plan(&preview.Input{
		OperatorVersion: ov, InstanceName: instance, Namespace: opts.Namespace,
		Parameters: values, PlanName: opts.Plan, Served: served, Scope: render.BuiltinScope,
	})
	if err != nil {
		return err
	}
	return printTasks(streams.Out, opts.Plan, tasks)
}

func printTasks(out io.Writer, plan string, tasks []preview.Task) error {
	for _, t := range tasks {
		_, _ = fmt.Fprintf(out, "# plan %s, phase %s, step %s, task %s (%s)", plan, t.Phase, t.Step, t.Name, t.Kind)
		if t.Action != "" {
			_, _ = fmt.Fprintf(out, ": %s", t.Action)
		}
		_, _ = fmt.Fprintln(out)
		if t.Note != "" {
			_, _ = fmt.Fprintf(out, "# %s\n", t.Note)
		}
		for _, m := range t.Migrations {
			_, _ = fmt.Fprintf(out, "# migrated %s\n", m)
		}
		for _, obj := range t.Objects {
			b, err := yaml.Marshal(obj.Object)
			if err != nil {
				return err
			}
			_, _ = fmt.Fprintf(out, "---\n%s", b)
		}
	}
	return nil
}
