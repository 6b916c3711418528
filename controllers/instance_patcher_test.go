package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// TestInstancePatcherWritesInOrder: the finalizers and the answer to
// spec.planExecution in one patch, then the status; nothing after the
// finalizer that lets a deleted Instance go; the status observes the
// generation only after a reconcile that succeeded.
func TestInstancePatcherWritesInOrder(t *testing.T) {
	const appVersion = "app-1.0.0"
	written := metav1.NewTime(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	running := func(i *kudov1beta1.Instance, message string) {
		i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionInProgress}
		i.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{"deploy": {
			Name: "deploy", UID: "run", Status: kudov1beta1.ExecutionInProgress, Message: message, LastUpdatedTimestamp: &written,
		}}
	}
	for _, tc := range []struct {
		name      string
		stored    func(*kudov1beta1.Instance)
		change    func(*kudov1beta1.Instance)
		succeeded bool
		// deleted: the Instance is gone from the API server once read.
		deleted  bool
		want     []string
		wantHeld bool
		observed bool
	}{
		{
			name: "nothing changed: no write", succeeded: true,
			stored: func(i *kudov1beta1.Instance) { i.Status.ObservedGeneration = i.Generation },
			change: func(*kudov1beta1.Instance) {},
		},
		{
			name: "finalizer, answer and status", succeeded: true,
			stored: func(i *kudov1beta1.Instance) {
				i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "deploy", UID: "run"}
			},
			change: func(i *kudov1beta1.Instance) {
				i.Finalizers = append(i.Finalizers, kudov1beta1.InstanceCleanupFinalizer)
				i.Spec.PlanExecution = kudov1beta1.PlanExecution{}
				i.Status.AppliedOperatorVersion = appVersion
			},
			want: []string{"instances", "instances/status"}, observed: true,
		},
		{
			name: "a failed reconcile's status observes no generation", succeeded: false,
			stored: func(*kudov1beta1.Instance) {},
			change: func(i *kudov1beta1.Instance) { i.Status.AppliedOperatorVersion = appVersion },
			want:   []string{"instances/status"},
		},
		{
			name: "the finalizer removed from a deleted Instance: nothing after it", succeeded: true,
			stored: func(i *kudov1beta1.Instance) {
				i.Finalizers = []string{kudov1beta1.InstanceCleanupFinalizer}
				i.DeletionTimestamp = &written
			},
			change: func(i *kudov1beta1.Instance) {
				i.Finalizers = nil
				i.Status.Inventory = nil
				i.Status.AppliedOperatorVersion = appVersion
			},
			want: []string{"instances"},
		},
		{
			name: "deleted since it was read: no error", succeeded: true, deleted: true,
			stored: func(*kudov1beta1.Instance) {},
			change: func(i *kudov1beta1.Instance) { i.Status.AppliedOperatorVersion = appVersion },
			want:   []string{"instances/status"},
		},
		{
			name: "a running plan's progress alone is held back", succeeded: true,
			stored: func(i *kudov1beta1.Instance) {
				i.Status.ObservedGeneration = i.Generation
				running(i, "waiting for deployment app")
			},
			change:   func(i *kudov1beta1.Instance) { running(i, "waiting for deployment app: 1 of 3 ready") },
			wantHeld: true,
		},
		{
			name: "and written when the reconcile failed", succeeded: false,
			stored: func(i *kudov1beta1.Instance) {
				i.Status.ObservedGeneration = i.Generation
				running(i, "waiting for deployment app")
			},
			change:   func(i *kudov1beta1.Instance) { running(i, "waiting for deployment app: 1 of 3 ready") },
			want:     []string{"instances/status"},
			observed: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Generation: 2}}
			tc.stored(stored)
			var writes []string
			c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(stored).WithStatusSubresource(stored).
				WithInterceptorFuncs(interceptor.Funcs{
					Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
						writes = append(writes, "instances")
						return c.Patch(ctx, obj, patch, opts...)
					},
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch,
						opts ...client.SubResourcePatchOption) error {
						writes = append(writes, "instances/"+sub)
						return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
					},
				}).Build()
			i := &kudov1beta1.Instance{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), i); err != nil {
				t.Fatal(err)
			}
			p := newInstancePatcher(c, i, nil)
			if tc.deleted {
				if err := c.Delete(t.Context(), i.DeepCopy()); err != nil {
					t.Fatal(err)
				}
			}
			tc.change(i)
			held, err := p.patch(t.Context(), i, tc.succeeded, written.Add(time.Second))
			if err != nil {
				t.Fatalf("patch: %v", err)
			}
			if !slices.Equal(writes, tc.want) {
				t.Errorf("writes %v, want %v", writes, tc.want)
			}
			if (held > 0) != tc.wantHeld {
				t.Errorf("held back %s, want held: %t", held, tc.wantHeld)
			}
			if tc.deleted || !slices.Contains(tc.want, "instances/status") {
				return
			}
			got := &kudov1beta1.Instance{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), got); err != nil {
				t.Fatal(err)
			}
			if observed := got.Status.ObservedGeneration == got.Generation; observed != tc.observed {
				t.Errorf("observedGeneration %d of generation %d, want observed: %t", got.Status.ObservedGeneration, got.Generation, tc.observed)
			}
		})
	}
}

// testScheme knows the kudo.dev kinds.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kudov1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}
