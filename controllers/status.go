package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cached"
	"github.com/kudo-ng/kudo/internal/engine"
)

// conditionsObject is a kudo.dev object with metav1.Condition conditions.
type conditionsObject interface {
	client.Object
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// patchStatus writes the status of obj as one merge patch against before, the
// object as it was read; it writes nothing when nothing changed, so an idle
// resync costs no API call. Then it waits until the cache holds the write:
// the next reconcile of obj, often queued already by the objects it waits
// for, would otherwise read the status it replaced and write it again.
func patchStatus(ctx context.Context, c client.Client, before, obj client.Object) error {
	if equality.Semantic.DeepEqual(before, obj) {
		return nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return err
	}
	return cached.Await(ctx, c, obj, cached.AtVersion(obj))
}

// maxConditionMessage is the most a metav1.Condition's message may hold (its
// CRD schema's maxLength).
const maxConditionMessage = 32768

// setReadiness records the kstatus trio: Ready, and Stalled or Reconciling
// only while they hold, so that a healthy object carries Ready alone.
func setReadiness(obj conditionsObject, r engine.Readiness) {
	ready, stalled, reason := r.Ready, r.Stalled, r.Reason
	// A longer message would fail the whole status patch: whatever a plan's
	// error says, the status is written.
	message := engine.TruncateMessage(r.Message, maxConditionMessage)
	conditions := obj.GetConditions()
	generation := obj.GetGeneration()
	meta.SetStatusCondition(&conditions, metav1.Condition{
		Type: kudov1beta1.ReadyCondition, Status: ready, Reason: reason, Message: message, ObservedGeneration: generation,
	})
	if stalled {
		meta.SetStatusCondition(&conditions, metav1.Condition{
			Type: kudov1beta1.StalledCondition, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: generation,
		})
	} else {
		meta.RemoveStatusCondition(&conditions, kudov1beta1.StalledCondition)
	}
	if ready == metav1.ConditionUnknown && !stalled {
		meta.SetStatusCondition(&conditions, metav1.Condition{
			Type: kudov1beta1.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: generation,
		})
	} else {
		meta.RemoveStatusCondition(&conditions, kudov1beta1.ReconcilingCondition)
	}
	obj.SetConditions(conditions)
}
