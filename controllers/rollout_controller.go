package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/planmetrics"
	"github.com/kudo-ng/kudo/internal/rollout"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// RolloutReconciler moves the Instances a Rollout selects to its
// OperatorVersion, wave after wave (internal/rollout decides; this
// gathers the Instances and acts).
type RolloutReconciler struct {
	client.Client
	Recorder record.EventRecorder
	Clock    func() time.Time
}

// +kubebuilder:rbac:groups=kudo.dev,resources=rollouts,verbs=get;list;watch
// +kubebuilder:rbac:groups=kudo.dev,resources=rollouts/status,verbs=get;update;patch

// Reconcile plans the waves once, then takes the current wave one step.
func (r *RolloutReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ro := &kudov1alpha1.Rollout{}
	if err := r.Get(ctx, req.NamespacedName, ro); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := ro.DeepCopy()
	ro.Status.ObservedGeneration = ro.Generation
	result, err := r.step(ctx, ro)
	if err != nil {
		return ctrl.Result{}, err
	}
	return result, patchStatus(ctx, r.Client, before, ro)
}

// fleet are the Instances of the Rollout's namespace it selects, with the
// target OperatorVersion of each (rollout.Fleet).
func (r *RolloutReconciler) fleet(ctx context.Context, ro *kudov1alpha1.Rollout) ([]rollout.Candidate, error) {
	list := &kudov1beta1.InstanceList{}
	if err := r.List(ctx, list, client.InNamespace(ro.Namespace)); err != nil {
		return nil, err
	}
	versions := &kudov1beta1.OperatorVersionList{}
	if err := r.List(ctx, versions); err != nil {
		return nil, err
	}
	return rollout.Fleet(list.Items, versions.Items, &ro.Spec)
}

// step takes the rollout one step: it plans the waves, then upgrades,
// waits, pauses or ends the current wave as rollout.Next decides.
func (r *RolloutReconciler) step(ctx context.Context, ro *kudov1alpha1.Rollout) (ctrl.Result, error) {
	fleet, err := r.fleet(ctx, ro)
	if err != nil {
		return ctrl.Result{}, err
	}
	instances := make(map[string]*kudov1beta1.Instance, len(fleet))
	targets := make(map[string]*kudov1beta1.OperatorVersion, len(fleet))
	for _, c := range fleet {
		instances[c.Instance.Name], targets[c.Instance.Name] = c.Instance, c.Target
	}
	if len(ro.Status.Waves) == 0 {
		if err := r.plan(ro, fleet); err != nil {
			setReadiness(ro, engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: kudov1beta1.InvalidReason, Message: err.Error()})
			return ctrl.Result{}, nil
		}
	}
	ro.Status.Updated = 0
	unavailable := 0
	for name, i := range instances {
		if target := targets[name]; target != nil && i.Spec.OperatorVersion.Name == target.Name {
			ro.Status.Updated++
		}
		if !apimeta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.ReadyCondition) {
			unavailable++
		}
	}
	if ro.Spec.Undo {
		return ctrl.Result{}, r.undo(ctx, ro, instances, targets)
	}
	if ro.Spec.Abort && ro.Status.Failure == nil && int(ro.Status.Current) < len(ro.Status.Waves) {
		return ctrl.Result{}, r.abort(ctx, ro, instances, targets)
	}
	switch {
	case ro.Status.Failure != nil:
		return ctrl.Result{}, nil
	case int(ro.Status.Current) >= len(ro.Status.Waves):
		message := fmt.Sprintf("%d Instances run %s", ro.Status.Total, ro.Spec.OperatorVersion)
		setReadiness(ro, engine.Readiness{Ready: metav1.ConditionTrue, Reason: kudov1beta1.SucceededReason, Message: message})
		apimeta.SetStatusCondition(&ro.Status.Conditions, metav1.Condition{Type: kudov1alpha1.RolloutComplete, Status: metav1.ConditionTrue,
			Reason: kudov1beta1.SucceededReason, Message: message, ObservedGeneration: ro.Generation})
		return ctrl.Result{}, nil
	}
	now := r.Clock()
	wave := &ro.Status.Waves[ro.Status.Current]
	if wave.StartedAt == nil {
		wave.StartedAt = &metav1.Time{Time: now}
		wave.Phase = kudov1alpha1.WaveProgressing
		r.Recorder.Eventf(ro, corev1.EventTypeNormal, "WaveStarted", "Wave %d started: %d Instances", ro.Status.Current+1, len(wave.Instances))
	}
	members := make([]rollout.Member, 0, len(wave.Instances))
	for _, name := range wave.Instances {
		if i, ok := instances[name]; ok {
			members = append(members, memberOf(i, targets[name]))
		}
	}
	d := rollout.Next(members, strategyOf(ro), unavailable, now)
	switch {
	case d.Stop:
		wave.Phase, wave.CompletedAt = kudov1alpha1.WaveFailed, &metav1.Time{Time: now}
		planmetrics.WaveEnded(ro.Spec.Operator, string(kudov1alpha1.WaveFailed), now.Sub(wave.StartedAt.Time))
		planmetrics.RolloutStopped(ro.Spec.Operator, "RolloutPaused")
		ro.Status.Failure = &kudov1alpha1.RolloutFailure{Instance: d.Failed, Reason: d.Reason}
		message := fmt.Sprintf("Paused at wave %d: %s", ro.Status.Current+1, d.Reason)
		if d.Failed != "" {
			message = fmt.Sprintf("Paused at wave %d: Instance %s: %s", ro.Status.Current+1, d.Failed, d.Reason)
		}
		r.Recorder.Event(ro, corev1.EventTypeWarning, "RolloutPaused", message)
		if len(d.RollBack) > 0 {
			if err := r.rollBack(ctx, ro, instances, d.RollBack); err != nil {
				return ctrl.Result{}, err
			}
			wave.Phase = kudov1alpha1.WaveRolledBack
			message += fmt.Sprintf("; rolled back %s", strings.Join(d.RollBack, ", "))
		}
		ro.Status.Message = message
		setReadiness(ro, engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: "RolloutPaused", Message: message})
		return ctrl.Result{}, nil
	case d.WaveDone:
		wave.Phase, wave.CompletedAt = kudov1alpha1.WaveComplete, &metav1.Time{Time: now}
		planmetrics.WaveEnded(ro.Spec.Operator, string(kudov1alpha1.WaveComplete), now.Sub(wave.StartedAt.Time))
		r.Recorder.Eventf(ro, corev1.EventTypeNormal, "WaveComplete", "Wave %d complete in %s", ro.Status.Current+1,
			now.Sub(wave.StartedAt.Time).Round(time.Second))
		ro.Status.Current++
		return ctrl.Result{Requeue: true}, nil
	}
	if !ro.Spec.Paused {
		for _, name := range d.Upgrade {
			if err := r.upgrade(ctx, instances[name], targets[name]); err != nil {
				return ctrl.Result{}, err
			}
			planmetrics.RolloutUpgraded(ro.Spec.Operator)
		}
	}
	ro.Status.Message = d.Waiting
	if ro.Spec.Paused {
		ro.Status.Message = "paused (spec.paused), starting no upgrade; " + d.Waiting
	}
	setReadiness(ro, engine.Readiness{Ready: metav1.ConditionFalse, Reason: kudov1beta1.PlanInProgressReason,
		Message: fmt.Sprintf("Wave %d of %d: %s", ro.Status.Current+1, len(ro.Status.Waves), ro.Status.Message)})
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// plan splits the fleet into the waves (rollout.PlanWaves) and records
// what each Instance runs before the rollout moves it.
func (r *RolloutReconciler) plan(ro *kudov1alpha1.Rollout, fleet []rollout.Candidate) error {
	waves, err := rollout.PlanWaves(fleet, ro)
	if err != nil {
		return err
	}
	ro.Status.Previous = map[string]string{}
	for _, c := range fleet {
		ro.Status.Previous[c.Instance.Name] = c.Instance.Spec.OperatorVersion.Name
	}
	for _, w := range waves {
		ro.Status.Waves = append(ro.Status.Waves,
			kudov1alpha1.WaveStatus{Instances: w.Instances, Cluster: w.Cluster, Phase: kudov1alpha1.WavePending})
	}
	ro.Status.Total = int32(len(fleet))
	return nil
}

// memberOf is what the rollout reads of an Instance.
func memberOf(i *kudov1beta1.Instance, target *kudov1beta1.OperatorVersion) rollout.Member {
	m := rollout.Member{Name: i.Name, AtTarget: target != nil && i.Spec.OperatorVersion.Name == target.Name}
	if _, run, ok := engine.AwaitedRun(i); ok && m.AtTarget {
		m.Plan, m.Reason = run.Status, run.Message
	}
	if ready := apimeta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition); ready != nil &&
		ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == i.Generation {
		m.Ready, m.ReadySince = true, ready.LastTransitionTime.Time
	}
	if stalled := apimeta.FindStatusCondition(i.Status.Conditions, kudov1beta1.StalledCondition); stalled != nil &&
		stalled.Status == metav1.ConditionTrue {
		m.Stalled, m.Reason = true, stalled.Message
	}
	return m
}

func strategyOf(ro *kudov1alpha1.Rollout) rollout.Strategy {
	s := ro.Spec.Strategy
	return rollout.Strategy{
		MaxParallel: int(max(s.MaxParallel, 1)), MaxUnavailable: int(max(s.MaxUnavailable, 1)), Bake: s.BakeTime.Duration,
		RollbackOnFailure: s.OnFailure == kudov1alpha1.Rollback,
	}
}

// upgrade points the Instance at target: through the typed object that
// makes it, if there is one, else in its own spec.
func (r *RolloutReconciler) upgrade(ctx context.Context, i *kudov1beta1.Instance, target *kudov1beta1.OperatorVersion) error {
	var obj client.Object = i
	patch := map[string]any{"spec": map[string]any{"operatorVersion": map[string]any{"name": target.Name}}}
	if typed := typedapi.HolderAt(i, target); typed != nil {
		obj = typed
		patch = map[string]any{"spec": map[string]any{typedapi.OperatorVersionField: target.Name}}
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, obj, client.RawPatch(types.MergePatchType, raw)); err != nil {
		return fmt.Errorf("upgrading Instance %s to %s: %w", i.Name, target.Name, err)
	}
	return nil
}

// atTarget are the Instances of names that run the rollout's target.
func atTarget(names []string, instances map[string]*kudov1beta1.Instance, targets map[string]*kudov1beta1.OperatorVersion) []string {
	var out []string
	for _, name := range names {
		if i, ok := instances[name]; ok && targets[name] != nil && i.Spec.OperatorVersion.Name == targets[name].Name {
			out = append(out, name)
		}
	}
	return out
}

// abort stops the rollout for good, rolling the current wave's upgraded
// Instances back.
func (r *RolloutReconciler) abort(ctx context.Context, ro *kudov1alpha1.Rollout, instances map[string]*kudov1beta1.Instance,
	targets map[string]*kudov1beta1.OperatorVersion) error {
	wave := &ro.Status.Waves[ro.Status.Current]
	if err := r.rollBack(ctx, ro, instances, atTarget(wave.Instances, instances, targets)); err != nil {
		return err
	}
	wave.Phase = kudov1alpha1.WaveRolledBack
	ro.Status.Failure = &kudov1alpha1.RolloutFailure{Reason: "aborted"}
	message := fmt.Sprintf("Aborted at wave %d; its upgraded Instances rolled back", ro.Status.Current+1)
	r.Recorder.Event(ro, corev1.EventTypeNormal, "RolloutAborted", message)
	planmetrics.RolloutStopped(ro.Spec.Operator, "RolloutAborted")
	setReadiness(ro, engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: "RolloutAborted", Message: message})
	return nil
}

// undo rolls back every Instance the rollout upgraded that still runs its
// target; once none does, the rollout is undone.
func (r *RolloutReconciler) undo(ctx context.Context, ro *kudov1alpha1.Rollout, instances map[string]*kudov1beta1.Instance,
	targets map[string]*kudov1beta1.OperatorVersion) error {
	for k := range ro.Status.Waves {
		wave := &ro.Status.Waves[k]
		moved := atTarget(wave.Instances, instances, targets)
		if len(moved) == 0 {
			continue
		}
		if err := r.rollBack(ctx, ro, instances, moved); err != nil {
			return err
		}
		wave.Phase = kudov1alpha1.WaveRolledBack
	}
	message := "Undone: every Instance it upgraded rolled back to what it ran before"
	setReadiness(ro, engine.Readiness{Ready: metav1.ConditionFalse, Stalled: true, Reason: "RolloutUndone", Message: message})
	apimeta.RemoveStatusCondition(&ro.Status.Conditions, kudov1alpha1.RolloutComplete)
	return nil
}

// rollBack returns each Instance to the revision it ran before the rollout
// moved it (kubectl kudo rollback's rules: engine.RollbackTarget,
// RestoredValues, CheckImmutableKept), its history kept.
func (r *RolloutReconciler) rollBack(ctx context.Context, ro *kudov1alpha1.Rollout, instances map[string]*kudov1beta1.Instance,
	names []string) error {
	for _, name := range names {
		i := instances[name]
		current := &kudov1beta1.OperatorVersion{}
		if err := r.Get(ctx, i.OperatorVersionKey(), current); err != nil {
			return err
		}
		sensitive := params.Sensitive(current.Spec.Parameters, i.Spec.SecretParameters)
		target, err := engine.RollbackTarget(i, 0, sensitive)
		if err == nil && target.OperatorVersion != ro.Status.Previous[name] {
			err = fmt.Errorf("its last completed revision ran %s, not %s", target.OperatorVersion, ro.Status.Previous[name])
		}
		var values map[string]string
		if err == nil {
			values, err = engine.RestoredValues(i, target, sensitive)
		}
		if err == nil {
			err = engine.CheckImmutableKept(current, i, values, target)
		}
		if err == nil && typedapi.HolderOf(i) != nil {
			err = errors.New("a typed object makes it: roll it back with kubectl kudo rollback")
		}
		if err != nil {
			r.Recorder.Eventf(ro, corev1.EventTypeWarning, "RollbackRefused", "Instance %s is not rolled back: %v", name, err)
			continue
		}
		patch := client.MergeFromWithOptions(i.DeepCopy(), client.MergeFromWithOptimisticLock{})
		i.Spec.OperatorVersion.Name = target.OperatorVersion
		i.Spec.Parameters, i.Spec.SecretParameters = values, maps.Clone(target.SecretParameters)
		if err := r.Patch(ctx, i, patch); err != nil {
			return fmt.Errorf("rolling Instance %s back to revision %d: %w", name, target.Number, err)
		}
		r.Recorder.Eventf(ro, corev1.EventTypeNormal, "RolledBack", "Instance %s rolled back to revision %d (%s)", name, target.Number,
			target.OperatorVersion)
		planmetrics.RolloutRolledBack(ro.Spec.Operator)
	}
	return nil
}

// SetupWithManager registers the controller: a change of an Instance wakes
// the Rollouts of its namespace.
func (r *RolloutReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&kudov1alpha1.Rollout{}).
		Watches(&kudov1beta1.Instance{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsOf)).
		Named("rollout").
		Complete(r)
}

// rolloutsOf are the Rollouts of the object's namespace.
func (r *RolloutReconciler) rolloutsOf(ctx context.Context, o client.Object) []reconcile.Request {
	list := &kudov1alpha1.RolloutList{}
	if err := r.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for k := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[k])})
	}
	return requests
}
