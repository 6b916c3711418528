// Package preview renders what each task of a plan would do, without a
// cluster: the objects Apply applies, what Delete deletes, the pod a Pipe
// runs, the child a KudoOperator installs. `kubectl kudo package render`
// prints it; the controller renders the same way when it runs the plan.
package preview

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
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
}

// Task is what one task of the plan does.
type Task struct {
	Phase, Step, Name string
	Kind              kudov1beta1.TaskKind
	// Action says what happens to Objects: apply, delete, run (a Pipe pod)
	// or nothing (a Dummy).
	Action     string
	Objects    []*unstructured.Unstructured
	Migrations []render.Migration
	// Note describes a task without objects (KudoOperator, Dummy).
	Note string
}

// Plan renders every task of the plan, in order.
func Plan(in *Input) ([]Task, error) {
	ov := in.OperatorVersion
	plan, ok := ov.Spec.Plans[in.PlanName]
	if !ok {
		return nil, fmt.Errorf("plan %q is not defined; the plans are %s", in.PlanName, strings.Join(planNames(ov), ", "))
	}
	values, err := params.Values(ov.Spec.Parameters, in.Parameters)
	if err != nil {
		return nil, err
	}
	tasks := map[string]*kudov1beta1.Task{}
	for i := range ov.Spec.Tasks {
		tasks[ov.Spec.Tasks[i].Name] = &ov.Spec.Tasks[i]
	}
	var out []Task
	for _, phase := range plan.Phases {
		for _, step := range phase.Steps {
			for _, name := range step.Tasks {
				t, ok := tasks[name]
				if !ok {
					return nil, fmt.Errorf("plan %s, phase %s, step %s: task %q is not defined", in.PlanName, phase.Name, step.Name, name)
				}
				vars := render.Variables{
					Params: values, Pipes: engine.PipeNames(ov, in.InstanceName), Name: in.InstanceName, Namespace: in.Namespace,
					OperatorName: ov.Spec.Operator.Name, OperatorVersion: ov.Name, AppVersion: ov.Spec.AppVersion,
					PlanName: in.PlanName, PhaseName: phase.Name, StepName: step.Name,
				}
				task, err := renderTask(in, t, vars)
				if err != nil {
					return nil, fmt.Errorf("plan %s, phase %s, step %s, task %s: %w", in.PlanName, phase.Name, step.Name, name, err)
				}
				task.Phase, task.Step = phase.Name, step.Name
				out = append(out, task)
			}
		}
	}
	return out, nil
}

func renderTask(in *Input, t *kudov1beta1.Task, vars render.Variables) (Task, error) {
	task := Task{Name: t.Name, Kind: t.Kind}
	resources := func(names []string) error {
		result, err := render.Resources(&render.Request{
			Templates: in.OperatorVersion.Spec.Templates, Resources: names, Variables: vars,
			Metadata: render.Metadata{
				InstanceName: in.InstanceName, Namespace: in.Namespace, OperatorName: vars.OperatorName,
				OperatorVersion: vars.OperatorVersion, PlanName: vars.PlanName, PhaseName: vars.PhaseName, StepName: vars.StepName,
			},
			Served: in.Served, Scope: in.Scope,
		})
		if err != nil {
			return err
		}
		task.Objects, task.Migrations = result.Objects, result.Migrations
		return nil
	}
	switch t.Kind {
	case kudov1beta1.ApplyTaskKind:
		task.Action = "apply"
		return task, resources(t.Spec.Resources)
	case kudov1beta1.DeleteTaskKind:
		task.Action = "delete"
		return task, resources(t.Spec.Resources)
	case kudov1beta1.ToggleTaskKind:
		on, err := toggle(vars.Params, t.Spec.Parameter)
		if err != nil {
			return task, err
		}
		task.Action = map[bool]string{true: "apply", false: "delete"}[on]
		return task, resources(t.Spec.Resources)
	case kudov1beta1.PipeTaskKind:
		task.Action = "run"
		text, err := render.Template(t.Spec.Pod, in.OperatorVersion.Spec.Templates[t.Spec.Pod], &vars)
		if err != nil {
			return task, err
		}
		task.Objects, err = render.Objects(t.Spec.Pod, text)
		keys := make([]string, 0, len(t.Spec.Pipe))
		for _, p := range t.Spec.Pipe {
			keys = append(keys, fmt.Sprintf("%s %s", p.Kind, vars.Pipes[p.Key]))
		}
		task.Note = "stores its files as " + strings.Join(keys, ", ")
		return task, err
	case kudov1beta1.KudoOperatorTaskKind:
		task.Note = kudoOperatorNote(in, t, &vars)
		return task, nil
	default:
		task.Note = fmt.Sprintf("does nothing (wantErr %t, fatal %t, done %t)", t.Spec.WantErr, t.Spec.Fatal, t.Spec.Done)
		return task, nil
	}
}

func toggle(values map[string]any, name string) (bool, error) {
	v, ok := values[name]
	if !ok {
		return false, fmt.Errorf("toggle parameter %q is not defined", name)
	}
	s, _ := v.(string)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false", "":
		return false, nil
	}
	return false, fmt.Errorf("toggle parameter %q is %q, not a boolean", name, s)
}

func kudoOperatorNote(in *Input, t *kudov1beta1.Task, vars *render.Variables) string {
	instance := t.Spec.InstanceName
	if instance == "" {
		instance = in.InstanceName + "-" + t.Spec.Package
	}
	note := fmt.Sprintf("installs package %s", t.Spec.Package)
	if t.Spec.OperatorVersion != "" {
		note += " version " + t.Spec.OperatorVersion
	}
	note += fmt.Sprintf(" as Instance %s", instance)
	if t.Spec.ParameterFile != "" {
		text, err := render.Template(t.Spec.ParameterFile, in.OperatorVersion.Spec.Templates[t.Spec.ParameterFile], vars)
		if err != nil {
			return note + fmt.Sprintf(" (parameter file: %v)", err)
		}
		note += " with parameters:\n" + text
	}
	return note
}

func planNames(ov *kudov1beta1.OperatorVersion) []string {
	names := make([]string, 0, len(ov.Spec.Plans))
	for n := range ov.Spec.Plans {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
