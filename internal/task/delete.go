package task

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/objects"
)

// deletion deletes the objects its templates render, in the foreground, and
// is done when they are gone. Kinds the server does not know are skipped.
type deletion struct{}

func (deletion) Validate(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path) field.ErrorList {
	return validateResources(spec, defs, at, field.Required(at.Child("resources"), "a Delete task needs the templates it renders"))
}

func (deletion) Uses(spec *kudov1beta1.TaskSpec) Uses {
	return Uses{Objects: spec.Resources}
}

func (deletion) Build(t *kudov1beta1.Task, in *Input) (*Intent, error) {
	return renderObjects(ActionDelete, t.Spec.Resources, in)
}

// Run deletes what still exists and reports what is not gone yet. An object
// that is not the Instance's is kept (KUDO deleted by name): the step notes
// it and goes on.
func (d deletion) Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error) {
	intent, err := env.build(ctx, d, t)
	if err != nil {
		return Result{}, err
	}
	var waiting, kept []string
	var deleted []*unstructured.Unstructured
	for _, obj := range intent.Objects {
		change, err := deleteOne(ctx, env, obj)
		if err != nil {
			return Result{}, err
		}
		switch change.Action {
		case objects.Gone:
			deleted = append(deleted, obj)
		case objects.KeptNotOurs:
			kept = append(kept, fmt.Sprintf("kept %s: %s", inventory.Describe(inventory.RefOf(obj)), change.Note))
		default:
			waiting = append(waiting, fmt.Sprintf("waiting for %s %s to be deleted", obj.GetKind(), obj.GetName()))
		}
	}
	if len(waiting) > 0 {
		return Result{Message: strings.Join(waiting, "; "), Migrations: intent.Migrations}, nil
	}
	return Result{Done: true, Message: strings.Join(kept, "; "), Migrations: intent.Migrations, Deleted: deleted}, nil
}

// Deletion is how a Delete task, or a Toggle switched off, deletes: in the
// foreground, so that the task ends once dependents are gone too.
var Deletion = objects.DeleteOptions{Propagation: metav1.DeletePropagationForeground}

// deleteOne asks for obj's deletion (Deletion).
func deleteOne(ctx context.Context, env *Env, obj *unstructured.Unstructured) (objects.Change, error) {
	if !env.Served(obj.GroupVersionKind()) {
		return objects.Change{Action: objects.Gone}, nil
	}
	return env.Objects.Delete(ctx, inventory.RefOf(obj), Deletion)
}
