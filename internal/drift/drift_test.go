package drift

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/inventory"
)

func TestJudge(t *testing.T) {
	deploy := &kudov1beta1.TaskInventory{Task: "app", Plan: "deploy"}
	web := kudov1beta1.InventoryObject{ObjectRef: kudov1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}, Generation: 2}
	job := kudov1beta1.InventoryObject{ObjectRef: kudov1beta1.ObjectRef{APIVersion: "batch/v1", Kind: "Job", Namespace: "ns", Name: "init"}, Generation: 1}
	entry := func(o kudov1beta1.InventoryObject) inventory.Entry {
		return inventory.Entry{InventoryObject: o, Task: deploy}
	}
	live := func(annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
		u.SetAnnotations(annotations)
		return u
	}
	rendered := live(nil)
	seen := func(generation int64) kudov1beta1.InventoryObject { o := web; o.Generation = generation; return o }
	healthy := health.Result{Healthy: true}
	on := Policy{Correct: true, OperatorVersion: "app-1.0.0"}
	off := Policy{OperatorVersion: "app-1.0.0"}
	tests := []struct {
		name         string
		entry        inventory.Entry
		observed     Observation
		policy       Policy
		want         []engine.Problem
		corrected    []string
		seen         []kudov1beta1.InventoryObject
		requeueAfter time.Duration
	}{
		{name: "an object as the inventory saw it, healthy: nothing",
			entry: entry(web), observed: Observation{Live: live(nil), Seen: web, Health: healthy}, policy: on},
		{name: "an unhealthy object is ResourceNotReady, as KUDO reported, and is not applied again",
			entry: entry(web), observed: Observation{Live: live(nil), Seen: web, Health: health.Result{Message: "rollout stuck"}}, policy: on,
			want: []engine.Problem{{Reason: kudov1beta1.ResourceNotReadyReason, Message: "rollout stuck"}}},
		{name: "a missing object is Missing, without correction",
			entry: entry(web), observed: Observation{Rendered: rendered}, policy: off,
			want: []engine.Problem{{Reason: kudov1beta1.MissingReason, Message: "Deployment ns/web is missing"}}},
		{name: "a missing object is applied again with correction on",
			entry: entry(web), observed: Observation{Rendered: rendered}, policy: on,
			want:      []engine.Problem{{Reason: kudov1beta1.MissingReason, Message: "Deployment ns/web is missing; applied again"}},
			corrected: []string{"Deployment ns/web is missing"}, requeueAfter: AfterCorrection},
		{name: "a missing Job ran once: no problem",
			entry: entry(job), observed: Observation{}, policy: on},
		{name: "a missing object no task renders alone is reported, not corrected",
			entry: entry(web), observed: Observation{}, policy: on,
			want: []engine.Problem{{Reason: kudov1beta1.MissingReason,
				Message: "Deployment ns/web is missing (not corrected: task app is not an Apply task of OperatorVersion app-1.0.0)"}}},
		{name: "a change of what kudo-ng applied is Drifted, and applied again",
			entry: entry(web), observed: Observation{Live: live(nil), Seen: seen(3), Rendered: rendered, Differs: true, Health: healthy}, policy: on,
			want:      []engine.Problem{{Reason: kudov1beta1.DriftedReason, Message: "Deployment ns/web was changed by another field manager; applied again"}},
			corrected: []string{"Deployment ns/web was changed by another field manager"}, requeueAfter: AfterCorrection},
		{name: "a drifted object that is also unhealthy is ResourceNotReady, saying it was changed",
			entry: entry(web), observed: Observation{Live: live(nil), Seen: seen(3), Rendered: rendered, Differs: true,
				Health: health.Result{Message: "rollout stuck"}}, policy: off,
			want: []engine.Problem{{Reason: kudov1beta1.ResourceNotReadyReason, Message: "rollout stuck; it was changed by another field manager"}}},
		{name: "a change of another manager's field only (an autoscaler's replicas) is noted in the inventory, no drift",
			entry: entry(web), observed: Observation{Live: live(nil), Seen: seen(3), Rendered: rendered, Health: healthy}, policy: on,
			seen: []kudov1beta1.InventoryObject{seen(3)}},
		{name: "a change of an object no task renders alone is noted in the inventory",
			entry: entry(web), observed: Observation{Live: live(nil), Seen: seen(3), Health: healthy}, policy: on,
			seen: []kudov1beta1.InventoryObject{seen(3)}},
		{name: "an object annotated kudo.dev/reconcile: disabled is not judged for drift",
			entry: entry(web), observed: Observation{Live: live(map[string]string{kudov1beta1.ReconcileAnnotation: kudov1beta1.Disabled}),
				Seen: seen(3), Rendered: rendered, Differs: true, Health: healthy}, policy: on},
		{name: "a drifted object corrected a moment ago waits for its next correction",
			entry: entry(web), observed: Observation{Live: live(nil), Seen: seen(3), Rendered: rendered, Differs: true, Health: healthy,
				Pace: inventory.Verdict{Wait: 1500 * time.Millisecond, Corrections: 1}}, policy: on,
			want:         []engine.Problem{{Reason: kudov1beta1.DriftedReason, Message: "Deployment ns/web was changed by another field manager; corrected again in 2s"}},
			requeueAfter: 1500 * time.Millisecond},
		{name: "a fight is reported, and still corrected at its pace",
			entry: entry(web), observed: Observation{Live: live(nil), Seen: seen(3), Rendered: rendered, Differs: true, Health: healthy,
				Pace: inventory.Verdict{Corrections: 3, Fight: true}}, policy: on,
			want: []engine.Problem{{Reason: kudov1beta1.DriftFightReason, Message: "Deployment ns/web is changed again after each correction (3 in a row): " +
				"another controller or user fights over it; stop it, or annotate the object kudo.dev/reconcile: disabled; applied again"}},
			corrected: []string{"Deployment ns/web is changed again after each correction (3 in a row): " +
				"another controller or user fights over it; stop it, or annotate the object kudo.dev/reconcile: disabled"},
			requeueAfter: AfterCorrection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge([]inventory.Entry{tt.entry}, []Observation{tt.observed}, tt.policy)
			if d := cmp.Diff(tt.want, v.Problems); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
			var corrected []string
			for _, c := range v.Corrections {
				if c.Object != tt.observed.Rendered || c.Fight != tt.observed.Pace.Fight {
					t.Errorf("correction %+v does not apply the rendered object at the observed pace", c)
				}
				corrected = append(corrected, c.Problem)
			}
			if d := cmp.Diff(tt.corrected, corrected); d != "" {
				t.Errorf("corrections (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.seen, v.Seen); d != "" {
				t.Errorf("seen (-want +got):\n%s", d)
			}
			if v.Requeue != tt.requeueAfter {
				t.Errorf("requeue after %s, want %s", v.Requeue, tt.requeueAfter)
			}
		})
	}
}
