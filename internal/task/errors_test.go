package task

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
)

// serverError is an error the API server answers with a plain error of its
// own, as its responsewriters.ErrorToAPIStatus writes it: 500, no reason.
func serverError(message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: message,
	}}
}

// TestClassifyEndsThePlanOnWhatTheAPIServerRefusesForGood: an object the API
// server refuses as rendered fails the plan (FATAL_ERROR), since a retry
// renders it the same; what may heal is retried (ERROR).
func TestClassifyEndsThePlanOnWhatTheAPIServerRefusesForGood(t *testing.T) {
	sts := &unstructured.Unstructured{}
	sts.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"})
	sts.SetNamespace("default")
	sts.SetName("zk")
	gk := schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	tests := []struct {
		name  string
		err   error
		fatal bool
	}{
		{"a value the schema cannot take (replicas: abc)", serverError("failed to create typed patch object (default/zk; apps/v1, Kind=StatefulSet): " +
			".spec.replicas: expected numeric (int or float), got string"), true},
		{"a field the schema does not declare", serverError("failed to create typed patch object (default/zk; apps/v1, Kind=StatefulSet): " +
			".spec.replica: field not declared in schema"), true},
		{"either, wrapped", fmt.Errorf("applying StatefulSet zk: %w", serverError("failed to create typed patch object "+
			"(default/zk; apps/v1, Kind=StatefulSet): .spec.template.spec.containers: expected list, got map")), true},
		{"an invalid value", apierrors.NewInvalid(gk, "zk", nil), true},
		{"a malformed object", apierrors.NewBadRequest("the object is malformed"), true},
		{"a request too large for the API server (413)", &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusRequestEntityTooLarge, Reason: metav1.StatusReasonRequestEntityTooLarge}}, true},
		{"an object too large for etcd", serverError("etcdserver: request is too large"), true},
		{"another server error", serverError("etcdserver: request timed out"), false},
		{"an internal error", apierrors.NewInternalError(errors.New("admission webhook is down")), false},
		{"a conflict", apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "zk", errors.New("changed")), false},
		{"a timeout", apierrors.NewTimeoutError("slow", 1), false},
		{"no answer", context.DeadlineExceeded, false},
	}
	env := &Env{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := env.classify(sts, tt.err)
			if IsFatal(got) != tt.fatal {
				t.Errorf("classify(%v) = %v, fatal %t; want fatal %t", tt.err, got, IsFatal(got), tt.fatal)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("classify(%v) = %v, which does not wrap it", tt.err, got)
			}
		})
	}
}

// TestARenderPastItsLimitsFailsThePlan: a template stopped by the render
// limits fails its step for good (FATAL_ERROR), whichever kind renders it: it
// renders the same the next time.
func TestARenderPastItsLimitsFailsThePlan(t *testing.T) {
	const bomb = `{{ repeat 100000000 "x" }}`
	for _, task := range []kudov1beta1.Task{
		{Kind: kudov1beta1.ApplyTaskKind, Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"bomb.yaml"}}}},
		pipeTask("bomb.yaml"),
		kudoOperatorTask("bomb.yaml"),
	} {
		t.Run(string(task.Kind), func(t *testing.T) {
			in := buildInput(nil)
			in.Site.OperatorVersion.Spec.Templates["bomb.yaml"] = bomb
			env := &Env{Client: fake.NewClientBuilder().Build(), Site: in.Site, Served: in.Served, Scope: in.Scope}
			task.Name = "gen"
			_, err := Render(context.Background(), &task, env)
			if limit := (*render.LimitError)(nil); !IsFatal(err) || !errors.As(err, &limit) {
				t.Errorf("error = %v, fatal %t; want a fatal LimitError", err, IsFatal(err))
			}
		})
	}
}
