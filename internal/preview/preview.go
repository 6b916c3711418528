// Package preview renders what each task of a plan would do, without a
// cluster: the objects Apply applies, what Delete deletes, the pod a Pipe
// runs, the child a KudoOperator installs. `kubectl kudo package render`
// prints it. Each task is built by its kind's unit in internal/task, as the
// controller builds it before it acts.
package preview

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
	"github.com/kudo-ng/kudo/internal/task"
)

// Input is a plan of an OperatorVersion run by a would-be Instance.
type Input struct {
	OperatorVersion *kudov1beta1.OperatorVersion
	InstanceName    string
	Namespace       string
	// Parameters are the Instance's values; defaults fill the rest.
	Parameters map[string]string
	PlanName   string
	Served     migrate.Served
	Scope      render.Scope
	// ByTemplate builds the tasks that render templates into objects (Apply,
	// Delete, Toggle) one template at a time, so that each Task names the
	// Template of its objects. The objects are the same but for the
	// dependency hash of pod templates, which then misses the ConfigMaps
	// and Secrets the task's other templates render.
	ByTemplate bool
	// Owner and PlanUID are the Instance and the run the objects are
	// rendered for, as the controller renders them; none offline.
	Owner   *metav1.OwnerReference
	PlanUID types.UID
	// Shard is the Instance's shard, which labels its objects.
	Shard string
	// Dependencies reads the ConfigMaps and Secrets pods mount from the
	// cluster; nil offline.
	Dependencies render.Dependencies
	// Capabilities are what Helm charts' .Capabilities say of the cluster;
	// nil offline, where Helm's defaults hold.
	Capabilities func() (*chartrender.Capabilities, error)
}

// Task is what one task of the plan does.
type Task struct {
	Phase, Step, Name string
	Kind              kudov1beta1.TaskKind
	// Spec is the task's definition.
	Spec *kudov1beta1.TaskSpec
	// Action says what happens to Objects.
	Action     task.Action
	Objects    []*unstructured.Unstructured
	Migrations []render.Migration
	// Note says what the objects do not show (KudoOperator, Dummy, Pipe).
	Note string
	// Template is the one template of Objects, with Input.ByTemplate.
	Template string
	// Child is the Instance a KudoOperator task makes.
	Child *task.Child
}

// Plan builds every task of the plan, in order.
func Plan(in *Input) ([]Task, error) {
	ov := in.OperatorVersion
	plan, ok := ov.Spec.Plans[in.PlanName]
	if !ok {
		return nil, fmt.Errorf("plan %q is not defined; the plans are %s", in.PlanName, strings.Join(engine.PlanNames(ov.Spec.Plans), ", "))
	}
	values, err := params.Values(ov.Spec.Parameters, in.Parameters)
	if err != nil {
		return nil, err
	}
	redactor := params.NewRedactor(params.WithDefaults(ov.Spec.Parameters, in.Parameters), params.Sensitive(ov.Spec.Parameters, nil))
	tasks := ov.Spec.TasksByName()
	var out []Task
	for at, step := range plan.Steps() {
		for _, name := range step.Tasks {
			where := fmt.Sprintf("plan %s, phase %s, step %s", in.PlanName, at.Phase.Name, step.Name)
			t, ok := tasks[name]
			if !ok {
				return nil, fmt.Errorf("%s: task %q is not defined", where, name)
			}
			kind, err := task.For(t.Kind)
			if err != nil {
				return nil, fmt.Errorf("%s, task %s: %w", where, name, err)
			}
			for _, one := range split(kind, t, in.ByTemplate) {
				intent, err := kind.Build(one, &task.Input{
					Site: render.Site{
						OperatorVersion: ov, Instance: in.InstanceName, Namespace: in.Namespace,
						Plan: in.PlanName, Phase: at.Phase.Name, Step: step.Name, Params: values,
						Owner: in.Owner, PlanUID: in.PlanUID, Shard: in.Shard,
					},
					Served: in.Served, Scope: in.Scope, Redactor: redactor, Dependencies: in.Dependencies,
					Capabilities: in.Capabilities,
				})
				if err != nil {
					return nil, fmt.Errorf("%s, task %s: %w", where, name, err)
				}
				built := Task{
					Phase: at.Phase.Name, Step: step.Name, Name: t.Name, Kind: t.Kind, Spec: &t.Spec,
					Action: intent.Action, Objects: intent.Objects, Migrations: intent.Migrations, Note: intent.Note, Child: intent.Child,
				}
				if one != t {
					built.Template = one.Spec.Resources[0]
				}
				out = append(out, built)
			}
		}
	}
	return out, nil
}

// split is the task, or, by template, a copy of it for each template of the
// objects it renders: the kinds that render Objects name them in
// spec.resources.
func split(kind task.Kind, t *kudov1beta1.Task, byTemplate bool) []*kudov1beta1.Task {
	templates := kind.Uses(&t.Spec).Objects
	if !byTemplate || len(templates) == 0 {
		return []*kudov1beta1.Task{t}
	}
	out := make([]*kudov1beta1.Task, 0, len(templates))
	for _, name := range templates {
		one := t.DeepCopy()
		one.Spec.Resources = []string{name}
		out = append(out, one)
	}
	return out
}
