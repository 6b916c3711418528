// Package rbaccmd is `kubectl kudo rbac`: the Role, and the ClusterRole
// when one is needed, with their bindings, that an Instance's service
// account needs when the manager acts as it (multi-tenant clusters),
// derived from every plan of the package as the manager renders it.
package rbaccmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/preview"
	"github.com/kudo-ng/kudo/internal/rbac"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
	"github.com/kudo-ng/kudo/internal/task"
)

// Options are the flags of rbac.
type Options struct {
	Package        string
	Instance       string
	Namespace      string
	ServiceAccount string
	action.PackageOptions
	action.ParameterOptions
	// KubernetesVersion is the version whose API versions the objects are
	// migrated to, as the manager migrates them.
	KubernetesVersion string
	// Cluster maps the kinds neither built in nor defined by a CRD of the
	// package; nil offline.
	Cluster rbac.Kinds
	// Live reads the Instances, if they exist, for the objects they hold;
	// nil offline.
	Live client.Reader
}

// NewCmd returns the rbac command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "rbac <name|dir|tgz|url>",
		Short: "Print the Role (and ClusterRole) an Instance's service account needs to run every plan of a package",
		Long: `Print, ready for kubectl apply -f -, the Role and RoleBinding (and, for cluster-scoped objects or
objects in other namespaces, the ClusterRole or Roles) that the service account of an Instance of the
package needs when the manager acts as it: every task of every plan, rendered with the parameters
given and the defaults, as the manager renders them. The rules hold on the objects the plans name
(resourceNames), and on those the Instance holds now if it exists: run it again, and apply, before new
parameters rename objects. The cluster is asked only about kinds that are neither built in nor defined
by a CustomResourceDefinition of the package, and for the Instance.`,
		Example: `  kubectl kudo rbac ./zookeeper/operator --instance zk -n team-a -p NODE_COUNT=5 | kubectl apply -f -
  kubectl kudo rbac mysql --service-account deployer -n team-b`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Package = args[0]
			ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return err
			}
			opts.Namespace = ns
			if mapper, err := flags.ToRESTMapper(); err == nil {
				opts.Cluster = mapper
			} else {
				opts.Cluster = rbac.Unreachable{Err: err}
			}
			if c, _, err := clientutil.New(flags); err == nil {
				opts.Live = c
			}
			return Run(cmd.Context(), streams, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Instance, "instance", "", "Instance name (default <operator>-instance)")
	f.StringVar(&opts.ServiceAccount, "service-account", "default", "Service account of the Instance (its spec.serviceAccountName)")
	opts.ParameterOptions.AddFlags(f)
	opts.PackageOptions.AddFlags(f, "of the package")
	f.StringVar(&opts.KubernetesVersion, "kubernetes-version", packages.DefaultKubernetesVersion,
		"Kubernetes version whose API versions the objects are migrated to")
	return cmd
}

// Run prints the roles and bindings.
func Run(ctx context.Context, streams genericiooptions.IOStreams, opts *Options) error {
	p, deps, err := opts.Resolve(ctx, opts.Package, nil)
	if err != nil {
		return err
	}
	_, ov, err := p.Convert(opts.Namespace)
	if err != nil {
		return err
	}
	assigned, err := opts.Assign(ov.Spec.Parameters)
	if err != nil {
		return err
	}
	g, err := newGatherer(opts.Namespace, opts.KubernetesVersion, deps)
	if err != nil {
		return err
	}
	instance := opts.Instance
	if instance == "" {
		instance = p.Operator.Name + "-instance"
	}
	if err := g.instance(ov, instance, withSecrets(ov, assigned), ""); err != nil {
		return err
	}
	in := &rbac.Input{Namespace: opts.Namespace, Instance: instance, Tasks: g.tasks}
	for _, ref := range assigned.Secrets {
		in.Secrets = append(in.Secrets, ref.Name)
	}
	var notes []string
	if opts.Live != nil {
		in.Held, notes = held(ctx, opts.Live, opts.Namespace, g.instances)
	}
	grants, err := rbac.Derive(in, opts.Cluster)
	if err != nil {
		return err
	}
	grants.Notes = append(grants.Notes, notes...)
	if names := slices.Sorted(maps.Keys(assigned.Secrets)); len(names) > 0 {
		grants.Notes = append(grants.Notes, fmt.Sprintf("secret parameters %s are rendered with their defaults, "+
			"or a placeholder: their Secrets are not read", strings.Join(names, ", ")))
	}
	subject := rbac.Subject{Namespace: opts.Namespace, Instance: instance, ServiceAccount: opts.ServiceAccount}
	return write(streams.Out, header(subject, g.rendered), grants.Notes, rbac.Manifests(grants, subject))
}

// withSecrets are the values to render with: the secret parameters, whose
// Secrets are not read, have their default, or a placeholder.
func withSecrets(ov *kudov1beta1.OperatorVersion, assigned params.Assigned) map[string]string {
	values := maps.Clone(assigned.Values)
	for _, p := range ov.Spec.Parameters {
		if _, fromSecret := assigned.Secrets[p.Name]; fromSecret && p.Default == nil {
			values[p.Name] = "placeholder"
		}
	}
	return values
}

// held are the objects the Instances that exist hold, by their inventories,
// and notes on those that could not be read.
func held(ctx context.Context, c client.Reader, ns string, names []string) ([]kudov1beta1.ObjectRef, []string) {
	var refs []kudov1beta1.ObjectRef
	var notes []string
	for _, name := range names {
		i := &kudov1beta1.Instance{}
		switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, i); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			notes = append(notes, fmt.Sprintf("Instance %s could not be read (%v): what it holds now is not granted, "+
				"and new parameters that rename it cannot prune it", name, err))
			continue
		}
		if err := clientutil.ReadRecord(ctx, c, i); err != nil {
			notes = append(notes, fmt.Sprintf("the status of Instance %s could not be read (%v): what it holds now is not granted, "+
				"and new parameters that rename it cannot prune it", name, err))
			continue
		}
		for _, t := range i.Status.Inventory {
			for _, obj := range t.Objects {
				refs = append(refs, obj.ObjectRef)
			}
		}
	}
	return refs, notes
}

// gatherer renders every plan of an Instance and of its children.
type gatherer struct {
	namespace    string
	served       migrate.Served
	dependencies []*kudov1beta1.OperatorVersion
	tasks        []rbac.Task
	// rendered say which Instances of which packages were rendered.
	rendered []string
	// instances are the names of those Instances.
	instances []string
	// seen are the children rendered, by name and values.
	seen map[string]bool
}

// newGatherer renders in the namespace, migrating to the API versions the
// Kubernetes version serves, with the dependencies' OperatorVersions for the
// children of KudoOperator tasks.
func newGatherer(ns, kubernetesVersion string, deps []*packages.Package) (*gatherer, error) {
	served, err := migrate.ServedBy(kubernetesVersion)
	if err != nil {
		return nil, err
	}
	g := &gatherer{namespace: ns, served: served, seen: map[string]bool{}}
	for _, dep := range deps {
		_, dov, err := dep.Convert(ns)
		if err != nil {
			return nil, err
		}
		g.dependencies = append(g.dependencies, dov)
	}
	return g, nil
}

func (g *gatherer) instance(ov *kudov1beta1.OperatorVersion, name string, values map[string]string, prefix string) error {
	plans := engine.PlanNames(ov.Spec.Plans)
	g.instances = append(g.instances, name)
	g.rendered = append(g.rendered, fmt.Sprintf("Instance %s of package %s %s (plans %s)",
		name, ov.Spec.Operator.Name, ov.Spec.Version, strings.Join(plans, ", ")))
	specs := ov.Spec.TasksByName()
	pipes := render.PipeNames(ov, name)
	for _, plan := range plans {
		tasks, err := preview.Plan(&preview.Input{
			OperatorVersion: ov, InstanceName: name, Namespace: g.namespace, Parameters: values, PlanName: plan,
			Served: g.served, Scope: render.BuiltinScope, ByTemplate: true,
		})
		if err != nil {
			return fmt.Errorf("%s%w", prefix, err)
		}
		for _, t := range tasks {
			out := rbac.Task{
				Where: fmt.Sprintf("%splan %s, phase %s, step %s, task %s", prefix, plan, t.Phase, t.Step, t.Name),
				Kind:  t.Kind, Template: t.Template, Rendered: task.Rendered{Objects: t.Objects},
			}
			switch t.Kind {
			case kudov1beta1.PipeTaskKind:
				for _, p := range specs[t.Name].Spec.Pipe {
					out.Pipes = append(out.Pipes, task.PipeFile{Kind: p.Kind, Name: pipes[p.Key]})
				}
			case kudov1beta1.KudoOperatorTaskKind:
				out.Child = t.Child.Name
				if out.ChildSecret, err = g.child(&specs[t.Name].Spec.KudoOperatorTaskSpec, t.Child, out.Where); err != nil {
					return err
				}
			}
			g.tasks = append(g.tasks, out)
		}
	}
	return nil
}

// child renders the plans of a KudoOperator task's Instance, with the values
// its parameter file gives it, and reports whether some of them go to the
// child's Secret.
func (g *gatherer) child(spec *kudov1beta1.KudoOperatorTaskSpec, c *task.Child, where string) (bool, error) {
	var ov *kudov1beta1.OperatorVersion
	for _, dep := range g.dependencies {
		if dep.Spec.Operator.Name == spec.Package && dep.Spec.Version == spec.OperatorVersion && dep.Spec.AppVersion == spec.AppVersion {
			ov = dep
		}
	}
	if ov == nil {
		return false, fmt.Errorf("%s: package %s %s was not found among the dependencies", where, spec.Package, spec.OperatorVersion)
	}
	values, err := c.Values(ov)
	if err != nil {
		return false, fmt.Errorf("%s: %w", where, err)
	}
	secret := len(c.Sensitive(values, ov)) > 0
	key := c.Name
	for _, name := range slices.Sorted(maps.Keys(values)) {
		key += "\x00" + name + "=" + values[name]
	}
	if g.seen[key] {
		return secret, nil
	}
	g.seen[key] = true
	return secret, g.instance(ov, c.Name, values, fmt.Sprintf("Instance %s (package %s): ", c.Name, spec.Package))
}

func header(s rbac.Subject, rendered []string) []string {
	lines := []string{
		fmt.Sprintf("The rights service account %s/%s needs when kudo-ng's manager acts as it for", s.Namespace, s.ServiceAccount),
	}
	for _, r := range rendered {
		lines = append(lines, "  "+r)
	}
	return append(lines, "from every task of those plans, rendered with the parameters given, on the objects they name. "+
		"Apply with kubectl apply -f -.")
}

func write(out io.Writer, header, notes []string, objs []runtime.Object) error {
	for _, line := range header {
		_, _ = fmt.Fprintf(out, "# %s\n", line)
	}
	for _, note := range notes {
		_, _ = fmt.Fprintf(out, "# Note: %s\n", note)
	}
	for _, obj := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		b, err := yaml.Marshal(u)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(out, "---\n%s", b)
	}
	return nil
}
