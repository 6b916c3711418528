package task

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Delete deletes the objects its templates render, in the foreground, and
// is done when they are gone. Kinds the server does not know are skipped.
type Delete struct {
	Resources []string
}

// Run deletes what still exists and reports what is not gone yet.
func (d *Delete) Run(ctx context.Context, env *Env) (Result, error) {
	rendered, err := env.render(ctx, d.Resources)
	if err != nil {
		return Result{}, err
	}
	var waiting []string
	for _, obj := range rendered.Objects {
		gone, err := deleteOne(ctx, env, obj)
		if err != nil {
			return Result{}, err
		}
		if !gone {
			waiting = append(waiting, fmt.Sprintf("waiting for %s %s to be deleted", obj.GetKind(), obj.GetName()))
		}
	}
	if len(waiting) > 0 {
		return Result{Message: strings.Join(waiting, "; "), Migrations: rendered.Migrations}, nil
	}
	return Result{Done: true, Migrations: rendered.Migrations}, nil
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
