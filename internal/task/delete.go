package task

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
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

// Run deletes what still exists and reports what is not gone yet.
func (d deletion) Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error) {
	intent, err := env.build(ctx, d, t)
	if err != nil {
		return Result{}, err
	}
	var waiting []string
	for _, obj := range intent.Objects {
		gone, err := deleteOne(ctx, env, obj)
		if err != nil {
			return Result{}, err
		}
		if !gone {
			waiting = append(waiting, fmt.Sprintf("waiting for %s %s to be deleted", obj.GetKind(), obj.GetName()))
		}
	}
	if len(waiting) > 0 {
		return Result{Message: strings.Join(waiting, "; "), Migrations: intent.Migrations}, nil
	}
	return Result{Done: true, Migrations: intent.Migrations, Deleted: intent.Objects}, nil
}

func deleteOne(ctx context.Context, env *Env, obj *unstructured.Unstructured) (bool, error) {
	gvk := obj.GroupVersionKind()
	if !env.Served(gvk) {
		return true, nil
	}
	if env.Watch != nil {
		if err := env.Watch(ctx, gvk); err != nil {
			return false, fmt.Errorf("watching %s: %w", gvk.Kind, err)
		}
	}
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(gvk)
	switch err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), current); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	if current.GetDeletionTimestamp() != nil {
		return false, nil
	}
	err := env.Client.Delete(ctx, current, client.PropagationPolicy(metav1.DeletePropagationForeground))
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return false, nil
}
