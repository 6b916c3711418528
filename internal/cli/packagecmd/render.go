package packagecmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	assigned, err := params.Resolve(ov.Spec.Parameters, opts.ParameterFiles, opts.Parameters)
	if err != nil {
		return err
	}
	if names := slices.Sorted(maps.Keys(assigned.Secrets)); len(names) > 0 {
		return fmt.Errorf("parameter %s: package render reads no cluster, so no Secret: give the value itself", names[0])
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
		Parameters: assigned.Values, PlanName: opts.Plan, Served: served, Scope: render.BuiltinScope,
	})
	if err != nil {
		return err
	}
	return printTasks(streams.Out, opts.Plan, tasks, newSensitiveOutput(ov, assigned.Values))
}

// sensitiveOutput hides what render prints of sensitive parameters: their
// values, and, when there are any, the data of every Secret, which may hold
// them in forms no search finds (encoded together with other text).
type sensitiveOutput struct {
	redactor    *params.Redactor
	maskSecrets bool
}

func newSensitiveOutput(ov *kudov1beta1.OperatorVersion, values map[string]string) sensitiveOutput {
	sensitive := params.Sensitive(ov.Spec.Parameters, nil)
	redactor := params.NewRedactor(params.WithDefaults(ov.Spec.Parameters, values), sensitive)
	return sensitiveOutput{redactor: redactor, maskSecrets: len(sensitive) > 0}
}

func (s sensitiveOutput) object(obj *unstructured.Unstructured) ([]byte, error) {
	if s.maskSecrets && obj.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Secret"}) {
		obj = obj.DeepCopy()
		for _, field := range []string{"data", "stringData"} {
			data, _, _ := unstructured.NestedMap(obj.Object, field)
			for k := range data {
				data[k] = "<sensitive>"
			}
			if data != nil {
				_ = unstructured.SetNestedMap(obj.Object, data, field)
			}
		}
	}
	b, err := yaml.Marshal(obj.Object)
	return []byte(s.redactor.String(string(b))), err
}

func printTasks(out io.Writer, plan string, tasks []preview.Task, sensitive sensitiveOutput) error {
	for _, t := range tasks {
		_, _ = fmt.Fprintf(out, "# plan %s, phase %s, step %s, task %s (%s)", plan, t.Phase, t.Step, t.Name, t.Kind)
		if t.Action != "" {
			_, _ = fmt.Fprintf(out, ": %s", t.Action)
		}
		_, _ = fmt.Fprintln(out)
		if t.Note != "" {
			_, _ = fmt.Fprintf(out, "# %s\n", sensitive.redactor.String(t.Note))
		}
		for _, m := range t.Migrations {
			_, _ = fmt.Fprintf(out, "# migrated %s\n", m)
		}
		for _, obj := range t.Objects {
			b, err := sensitive.object(obj)
			if err != nil {
				return err
			}
			_, _ = fmt.Fprintf(out, "---\n%s", b)
		}
	}
	return nil
}
