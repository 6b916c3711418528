package task

import (
	"context"
	"errors"
	"strconv"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Toggle applies its templates when its boolean parameter is true and
// deletes them when it is false.
type Toggle struct {
	Resources []string
	Parameter string
}

// Run applies or deletes by the parameter's value.
func (t *Toggle) Run(ctx context.Context, env *Env) (Result, error) {
	value, ok := env.Params[t.Parameter]
	if !ok {
		return Result{}, Fatalf("toggle parameter %s is not defined by the OperatorVersion", t.Parameter)
	}
	s, _ := value.(string)
	on, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil && strings.TrimSpace(s) != "" {
		return Result{}, Fatalf("toggle parameter %s is %q, not a boolean", t.Parameter, s)
	}
	if on {
		return (&Apply{Resources: t.Resources}).Run(ctx, env)
	}
	return (&Delete{Resources: t.Resources}).Run(ctx, env)
}

// Dummy does nothing but what its spec says: fail, fail fatally, finish,
// or wait for ever — useful to test plans and to pause one.
type Dummy struct {
	Spec kudov1beta1.DummyTaskSpec
}

// Run returns what the spec asks for.
func (d *Dummy) Run(context.Context, *Env) (Result, error) {
	switch {
	case d.Spec.WantErr && d.Spec.Fatal:
		return Result{}, &FatalError{Err: errors.New("dummy task failed fatally, as its spec asks (wantErr, fatal)")}
	case d.Spec.WantErr:
		return Result{}, errors.New("dummy task failed, as its spec asks (wantErr)")
	case d.Spec.Done:
		return Result{Done: true}, nil
	default:
		return Result{Message: "dummy task waits: its spec has done: false"}, nil
	}
}
