package task

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// toggle applies its templates when its boolean parameter is true and
// deletes them when it is false.
type toggle struct{}

func (toggle) Validate(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path) field.ErrorList {
	// Without templates a Toggle switches nothing, but runs: KUDO admitted it.
	errs := validateResources(spec, defs, at,
		field.Invalid(at.Child("resources"), spec.Resources, "a Toggle task needs the templates it switches"))
	name := spec.Parameter
	if name == "" {
		return append(errs, field.Required(at.Child("parameter"), "a Toggle task needs the boolean parameter that switches it"))
	}
	switch t, ok := defs.Parameters[name]; {
	case !ok:
		errs = append(errs, field.Invalid(at.Child("parameter"), name, fmt.Sprintf("parameter %q is not defined", name)))
	case t != "" && t != kudov1beta1.BooleanValueType && t != kudov1beta1.StringValueType:
		errs = append(errs, field.Invalid(at.Child("parameter"), name,
			fmt.Sprintf("parameter %q is of type %s; a Toggle needs a boolean", name, t)))
	}
	return errs
}

func (toggle) Uses(spec *kudov1beta1.TaskSpec) Uses {
	return Uses{Objects: spec.Resources, Parameters: []string{spec.Parameter}}
}

func (toggle) Build(t *kudov1beta1.Task, in *Input) (*Intent, error) {
	on, err := switchedOn(t, in.Site.Params)
	if err != nil {
		return nil, err
	}
	if on {
		return apply{}.Build(t, in)
	}
	return deletion{}.Build(t, in)
}

// Run applies or deletes by the parameter's value.
func (toggle) Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error) {
	on, err := switchedOn(t, env.Site.Params)
	if err != nil {
		return Result{}, &FatalError{Err: err}
	}
	if on {
		return apply{}.Run(ctx, t, env)
	}
	return deletion{}.Run(ctx, t, env)
}

// switchedOn reads the toggle's parameter as strconv.ParseBool does; empty
// is off.
func switchedOn(t *kudov1beta1.Task, values map[string]any) (bool, error) {
	value, ok := values[t.Spec.Parameter]
	if !ok {
		return false, fmt.Errorf("toggle parameter %s is not defined by the OperatorVersion", t.Spec.Parameter)
	}
	s, _ := value.(string)
	s = strings.TrimSpace(s)
	if s == "" {
		return false, nil
	}
	on, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("toggle parameter %s is %q, not a boolean", t.Spec.Parameter, s)
	}
	return on, nil
}
