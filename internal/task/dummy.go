package task

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// dummy does nothing but what its spec says: fail, fail fatally, finish,
// or wait for ever — useful to test plans and to pause one.
type dummy struct{}

func (dummy) Validate(*kudov1beta1.TaskSpec, *Definitions, *field.Path) field.ErrorList { return nil }

func (dummy) Uses(*kudov1beta1.TaskSpec) Uses { return Uses{} }

func (dummy) Build(t *kudov1beta1.Task, _ *Input) (*Intent, error) {
	note := fmt.Sprintf("does nothing (wantErr %t, fatal %t, done %t)", t.Spec.WantErr, t.Spec.Fatal, t.Spec.Done)
	return &Intent{Action: ActionNone, Note: note}, nil
}

// Run returns what the spec asks for.
func (dummy) Run(_ context.Context, t *kudov1beta1.Task, _ *Env) (Result, error) {
	switch spec := t.Spec.DummyTaskSpec; {
	case spec.WantErr && spec.Fatal:
		return Result{}, &FatalError{Err: errors.New("dummy task failed fatally, as its spec asks (wantErr, fatal)")}
	case spec.WantErr:
		return Result{}, errors.New("dummy task failed, as its spec asks (wantErr)")
	case spec.Done:
		return Result{Done: true}, nil
	default:
		return Result{Message: "dummy task waits: its spec has done: false"}, nil
	}
}
