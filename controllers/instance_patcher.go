package controllers

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// instancePatcher is the one writer of an Instance in a reconcile (as Cluster
// API's patch.Helper, Flux's SerialPatcher): the reconcile changes the
// Instance in memory, and the patcher writes what changed against what the
// API server last returned, in a fixed order: the finalizers and the answer
// to spec.planExecution in one patch of the object, then the status. The
// answer goes before the status that records the run it answers, which
// engine.Settled relies on. The status of an Instance that runs a typed
// object is written to the object's (typedapi.StatusOf).
type instancePatcher struct {
	client client.Client
	// stored is the Instance as the API server last returned it, with the
	// record its typed object held.
	stored *kudov1beta1.Instance
	// holder is the typed object that holds the Instance's record, as the
	// API server last returned it; nil when the Instance holds its own.
	holder *unstructured.Unstructured
	// gone: the API server no longer has the Instance, or lets it go now that
	// its cleanup finalizer is removed; nothing more is written.
	gone bool
}

func newInstancePatcher(c client.Client, i *kudov1beta1.Instance, holder *unstructured.Unstructured) *instancePatcher {
	return &instancePatcher{client: c, stored: i.DeepCopy(), holder: holder}
}

// hasFinalizer reports whether the Instance, and the typed object that holds
// its record, have the cleanup finalizer.
func (p *instancePatcher) hasFinalizer(i *kudov1beta1.Instance) bool {
	return controllerutil.ContainsFinalizer(i, kudov1beta1.InstanceCleanupFinalizer) &&
		(p.holder == nil || controllerutil.ContainsFinalizer(p.holder, kudov1beta1.InstanceCleanupFinalizer))
}

// addFinalizer puts the cleanup finalizer on the Instance now, before what
// the reconcile applies next needs it; and on the typed object that holds
// its record, which must outlive the cleanup it records (the typed
// controller lets it go once the Instance has gone).
func (p *instancePatcher) addFinalizer(ctx context.Context, i *kudov1beta1.Instance) error {
	if p.holder != nil && !controllerutil.ContainsFinalizer(p.holder, kudov1beta1.InstanceCleanupFinalizer) {
		holder := p.holder.DeepCopy()
		controllerutil.AddFinalizer(holder, kudov1beta1.InstanceCleanupFinalizer)
		if err := p.client.Patch(ctx, holder, client.MergeFromWithOptions(p.holder, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		p.holder = holder
	}
	controllerutil.AddFinalizer(i, kudov1beta1.InstanceCleanupFinalizer)
	return p.patchObject(ctx, i)
}

// patch writes what the reconcile changed of i, and returns how long the
// status is held back: a running plan's progress alone is written at most
// every progressInterval (progressWait), unless the reconcile failed. The
// status observes i's generation only when the reconcile succeeded.
func (p *instancePatcher) patch(ctx context.Context, i *kudov1beta1.Instance, succeeded bool, now time.Time) (time.Duration, error) {
	objectErr := p.patchObject(ctx, i)
	if p.gone {
		return 0, objectErr
	}
	if succeeded {
		i.Status.ObservedGeneration = i.Generation
	}
	if wait := progressWait(p.stored, i, now); wait > 0 && succeeded {
		return wait, objectErr
	}
	if err := p.patchStatus(ctx, i); err != nil {
		return 0, err
	}
	return 0, objectErr
}

// patchObject writes the finalizers and spec of i when they changed, with a
// patch that fails on a newer Instance, so that neither a request made since
// nor a finalizer someone else added is overwritten. It patches a copy: the
// response would overwrite the status being built.
func (p *instancePatcher) patchObject(ctx context.Context, i *kudov1beta1.Instance) error {
	if p.gone || slices.Equal(p.stored.Finalizers, i.Finalizers) && equality.Semantic.DeepEqual(p.stored.Spec, i.Spec) {
		return nil
	}
	obj := p.stored.DeepCopy()
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	obj.Finalizers, obj.Spec = i.Finalizers, *i.Spec.DeepCopy()
	if err := p.client.Patch(ctx, obj, patch); err != nil {
		// What the reconcile goes on deciding from is what the cluster holds.
		i.Finalizers, i.Spec = slices.Clone(p.stored.Finalizers), *p.stored.Spec.DeepCopy()
		p.gone = apierrors.IsNotFound(err)
		return client.IgnoreNotFound(err)
	}
	p.stored = obj
	p.gone = !i.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(i, kudov1beta1.InstanceCleanupFinalizer)
	// The status written next observes the new generation, so the change
	// of the spec does not cost another status write.
	i.ResourceVersion, i.Generation = obj.ResourceVersion, obj.Generation
	return nil
}

// patchStatus writes the status of i when it changed (an idle resync costs
// no API call) as one merge patch, and waits until the cache holds it.
func (p *instancePatcher) patchStatus(ctx context.Context, i *kudov1beta1.Instance) error {
	if p.holder != nil {
		return p.patchRecord(ctx, i)
	}
	if equality.Semantic.DeepEqual(p.stored.Status, i.Status) {
		return nil
	}
	if err := patchStatus(ctx, p.client, p.stored, i); err != nil {
		// An Instance deleted since the cache showed it has no status to write.
		p.gone = apierrors.IsNotFound(err)
		return client.IgnoreNotFound(err)
	}
	p.stored = i.DeepCopy()
	return nil
}

// patchRecord writes the status of i to the typed object that holds it,
// when what the object's status would hold changed, as patchStatus does.
func (p *instancePatcher) patchRecord(ctx context.Context, i *kudov1beta1.Instance) error {
	status, err := typedapi.StatusOf(i, p.holder)
	if err != nil {
		return err
	}
	// As the API server would return it: integers as int64, times as strings.
	raw, err := json.Marshal(status)
	if err != nil {
		return err
	}
	var decoded map[string]any
	if err := utiljson.Unmarshal(raw, &decoded); err != nil {
		return err
	}
	written := p.holder.DeepCopy()
	written.Object["status"] = decoded
	if equality.Semantic.DeepEqual(p.holder.Object["status"], written.Object["status"]) {
		p.stored.Status = *i.Status.DeepCopy()
		return nil
	}
	if err := patchStatus(ctx, p.client, p.holder, written); err != nil {
		// The object went: the garbage collector deletes the Instance.
		p.gone = apierrors.IsNotFound(err)
		return client.IgnoreNotFound(err)
	}
	p.holder, p.stored = written, i.DeepCopy()
	return nil
}
