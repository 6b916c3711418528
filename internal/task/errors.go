package task

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/crd"
)

// What ends a plan in FATAL_ERROR and what is retried (ERROR), as KUDO
// decided it; the task kinds return FatalError for the first column, and
// classify below sorts what the API server answers.
//
//	FATAL_ERROR, no retry can help               ERROR, retried with backoff
//	-------------------------------------------  ----------------------------------------------
//	a template that does not render, or not      a kind a CustomResourceDefinition of the plan
//	  into objects, or past the render limits      serves, not served yet
//	  (every kind's Build)
//	a Pipe pod or file KUDO refuses; a Kudo-     reading the cluster; conflicts, timeouts,
//	  Operator parameter file that is not a map    other server errors, an admission webhook down
//	  of the child's parameters                  RBAC not granted yet (an aggregated role)
//	a kind the server does not serve and no      a child's OperatorVersion not installed yet
//	  CustomResourceDefinition of the plan does  health not reached yet (IN_PROGRESS, not an
//	the API server refuses an object: invalid      error)
//	  (422), malformed (400), or not typed by
//	  the kind's schema (a field it does not
//	  declare, a value of another type:
//	  replicas: abc), or too large to store
//	  (413, or etcd's limit)
//	a terminal health state: a failed Job, a
//	  child Instance whose plan failed
//	a circular KudoOperator dependency

// classify sorts an error of reading or writing obj: fatal when retrying
// cannot help, else returned as it is, to be retried.
func (env *Env) classify(obj *unstructured.Unstructured, err error) error {
	gvk := obj.GroupVersionKind()
	switch {
	case meta.IsNoMatchError(err):
		if env.planServes(gvk.GroupKind()) {
			return fmt.Errorf("%w (a CustomResourceDefinition this plan applies serves it: waiting for it)", err)
		}
		return &FatalError{Err: fmt.Errorf(
			"%w: the server does not serve %s %s, and no task of plan %s applies a CustomResourceDefinition serving it",
			err, gvk.Kind, gvk.GroupVersion(), env.Site.Plan)}
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), outOfSchema(err), tooLarge(err):
		// The API server refuses the object as rendered: a retry renders the same.
		return &FatalError{Err: err}
	}
	return err
}

// outOfSchema: server-side apply refuses an object its kind's schema cannot
// type — a field the schema does not declare, a value of another type — with
// an internal error (500) that a retry would meet again. The wording is
// k8s.io/apimachinery's managedfields (structuredmerge.go) and
// structured-merge-diff's (typed/validate.go).
func outOfSchema(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	msg := status.Status().Message
	return strings.Contains(msg, "failed to create typed patch object") || strings.Contains(msg, "field not declared in schema")
}

// tooLarge: the API server refuses a request body over 3 MiB (413), and
// etcd one that makes an object over 1.5 MiB (a 500 naming its limit).
func tooLarge(err error) bool {
	return apierrors.IsRequestEntityTooLargeError(err) || strings.Contains(err.Error(), "etcdserver: request is too large")
}

// planServes reports whether a task of the running plan applies a
// CustomResourceDefinition that serves the kind: one applied by a later step,
// or by this one and not Established yet, will serve it.
func (env *Env) planServes(gk schema.GroupKind) bool {
	ov := env.Site.OperatorVersion
	tasks := ov.Spec.TasksByName()
	in := env.input()
	for _, step := range ov.Spec.Plans[env.Site.Plan].Steps() {
		for _, name := range step.Tasks {
			if t := tasks[name]; t != nil && appliesCRDFor(t, in, gk) {
				return true
			}
		}
	}
	return false
}

func appliesCRDFor(t *kudov1beta1.Task, in *Input, gk schema.GroupKind) bool {
	kind, err := For(t.Kind)
	if err != nil {
		return false
	}
	intent, err := kind.Build(t, in)
	if err != nil || intent.Action != ActionApply {
		return false
	}
	for _, obj := range intent.Objects {
		if crd.Is(obj) && crd.DefinedBy(obj).GroupKind == gk {
			return true
		}
	}
	return false
}
