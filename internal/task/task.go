// Package task runs the tasks of a plan step: Apply, Delete, Toggle, Pipe,
// KudoOperator and Dummy behind one small interface. Each run is idempotent:
// the controller runs the tasks of a due step on every pass until they are
// done, so a task applies what is missing and reports what it waits for.
package task

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cached"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
)

// FieldOwner is kudo-ng's field manager for server-side apply.
const FieldOwner = "kudo-ng"

// Env is what a task needs: the cluster, the Instance and where in its plan
// the task runs.
type Env struct {
	// Client reads from the manager's cache and writes to the API server.
	Client          client.Client
	Instance        *kudov1beta1.Instance
	OperatorVersion *kudov1beta1.OperatorVersion
	PlanName        string
	PhaseName       string
	StepName        string
	PlanUID         types.UID
	// Params are the parameter values as templates see them.
	Params map[string]any
	Served migrate.Served
	Scope  render.Scope
	// Watch makes sure changes to objects of a kind wake the Instance.
	Watch func(ctx context.Context, gvk schema.GroupVersionKind) error
	// Files copies files out of a running pod, for Pipe tasks.
	Files FileCopier
	// Writes collects the objects the tasks write, if not nil.
	Writes *Writes
}

// Writes are the objects the tasks of a reconcile wrote. The controller
// waits for them in its cache before the Instance reconciles again: the
// watch event of one it changed (a new spec) can wake the next reconcile
// before the cache holds the others, which it would then write again.
type Writes struct {
	mu   sync.Mutex
	objs []*unstructured.Unstructured
}

func (w *Writes) add(obj *unstructured.Unstructured) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.objs = append(w.objs, obj)
}

// Await waits until r, the manager's cached reader, holds each written
// object with the hash kudo-ng applied: what the next pass compares to
// decide whether to apply it again.
func (w *Writes) Await(ctx context.Context, r client.Reader) error {
	for _, obj := range w.objs {
		hash := obj.GetAnnotations()[AppliedHashAnnotation]
		err := cached.Await(ctx, r, obj, func(c client.Object, found bool) bool {
			return found && c.GetAnnotations()[AppliedHashAnnotation] == hash
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Result is the outcome of one run of a task.
type Result struct {
	Done bool
	// Message says what the task waits for, or notes how it finished.
	Message    string
	Migrations []render.Migration
}

// Task is one kind of work.
type Task interface {
	Run(ctx context.Context, env *Env) (Result, error)
}

// FatalError is an error no retry can fix: it fails the plan.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Fatalf makes a FatalError.
func Fatalf(format string, args ...any) error {
	return &FatalError{Err: fmt.Errorf(format, args...)}
}

// IsFatal reports whether err fails the plan.
func IsFatal(err error) bool {
	var f *FatalError
	return errors.As(err, &f)
}

// New returns the task to run for a task definition.
func New(t *kudov1beta1.Task) (Task, error) {
	switch t.Kind {
	case kudov1beta1.ApplyTaskKind:
		return &Apply{Resources: t.Spec.Resources}, nil
	case kudov1beta1.DeleteTaskKind:
		return &Delete{Resources: t.Spec.Resources}, nil
	case kudov1beta1.ToggleTaskKind:
		return &Toggle{Resources: t.Spec.Resources, Parameter: t.Spec.Parameter}, nil
	case kudov1beta1.DummyTaskKind:
		return &Dummy{Spec: t.Spec.DummyTaskSpec}, nil
	case kudov1beta1.KudoOperatorTaskKind:
		return &KudoOperator{Name: t.Name, Spec: t.Spec.KudoOperatorTaskSpec}, nil
	case kudov1beta1.PipeTaskKind:
		return &Pipe{Name: t.Name, Spec: t.Spec.PipeTaskSpec}, nil
	default:
		return nil, Fatalf("task %s: unknown kind %q", t.Name, t.Kind)
	}
}

// variables are what the templates of a task see.
func (env *Env) variables() render.Variables {
	ov := env.OperatorVersion
	return render.Variables{
		Params: env.Params, Pipes: engine.PipeNames(ov, env.Instance.Name),
		Name: env.Instance.Name, Namespace: env.Instance.Namespace,
		OperatorName: ov.Spec.Operator.Name, OperatorVersion: ov.Name, AppVersion: ov.Spec.AppVersion,
		PlanName: env.PlanName, PhaseName: env.PhaseName, StepName: env.StepName,
	}
}

// metadata is what KUDO records on the objects of this task, with the
// Instance as their controller.
func (env *Env) metadata() render.Metadata {
	i := env.Instance
	ov := env.OperatorVersion
	owner := ownerRef(i)
	return render.Metadata{
		InstanceName: i.Name, Namespace: i.Namespace, OperatorName: ov.Spec.Operator.Name, OperatorVersion: ov.Name,
		PlanName: env.PlanName, PhaseName: env.PhaseName, StepName: env.StepName, PlanUID: env.PlanUID, Owner: &owner,
	}
}

// render renders templates for this task.
func (env *Env) render(ctx context.Context, resources []string) (*render.Result, error) {
	var lookupErr error
	result, err := render.Resources(&render.Request{
		Templates: env.OperatorVersion.Spec.Templates, Resources: resources, Variables: env.variables(),
		Metadata: env.metadata(),
		Served:   env.Served, Scope: env.Scope,
		Dependencies: func(kind, namespace, name string) (*unstructured.Unstructured, bool, error) {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: kind})
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
			if client.IgnoreNotFound(err) != nil {
				lookupErr = err
				return nil, false, err
			}
			return obj, err == nil, nil
		},
	})
	switch {
	case lookupErr != nil:
		return nil, err
	case err != nil:
		// A template that does not render will not render on a retry either.
		return nil, &FatalError{Err: err}
	}
	return result, nil
}
