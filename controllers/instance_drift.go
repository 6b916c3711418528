package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/drift"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/planmetrics"
	"github.com/kudo-ng/kudo/internal/task"
)

// reconcileInventory keeps what the plans applied as they applied it: it
// prunes what completed runs no longer render, and, once the last plan
// completed, judges every object of the inventory — gathers what each is
// now, lets drift.Judge say what is wrong and what to correct, and does
// that — and notes what keeps Ready from holding.
func (r *InstanceReconciler) reconcileInventory(ctx context.Context, run *planRun) error {
	i := run.instance
	if err := r.prune(ctx, run); err != nil {
		return err
	}
	var problems []engine.Problem
	if a := i.Status.ActivePlan; a != nil && a.Status == kudov1beta1.ExecutionComplete && run.selectionErr == nil {
		// A plan that completed in this reconcile wrote objects the cache
		// may not hold yet: judged against the versions before, they would
		// look changed by someone else.
		if err := run.writes.Await(ctx, run.cached); err != nil {
			return err
		}
		if err := r.adopt(ctx, run); err != nil {
			return err
		}
		entries := inventory.Entries(i.Status.Inventory)
		observations, err := r.gather(ctx, run, entries)
		if err != nil {
			return err
		}
		verdict := drift.Judge(entries, observations, drift.Policy{Correct: r.correcting(i), OperatorVersion: run.ov.Name})
		if err := r.act(ctx, run, verdict); err != nil {
			return err
		}
		problems = verdict.Problems
	}
	run.judgeObjects(problems)
	return nil
}

// gather observes each object of the inventory: from the cache, and, when
// it moved since the inventory saw it, with what its task renders and a
// server-side dry run of that.
func (r *InstanceReconciler) gather(ctx context.Context, run *planRun, entries []inventory.Entry) ([]drift.Observation, error) {
	observations := make([]drift.Observation, len(entries))
	for n, e := range entries {
		o := &observations[n]
		m := run.objectsFor(e.Task.Task, e.ObjectRef)
		live, err := m.Get(ctx, e.ObjectRef)
		if err != nil {
			return nil, err
		}
		if o.Live = live; live != nil {
			if o.Seen, err = m.Observe(live); err != nil {
				return nil, err
			}
			o.Health = m.Health(ctx, run.instance.Name, e.Task.Task, live)
		}
		if !drift.Moved(e, live, o.Seen) {
			continue
		}
		if o.Rendered, err = run.rendered(ctx, e); err != nil {
			return nil, err
		}
		if live != nil && o.Rendered != nil {
			if o.Differs, err = m.Diff(ctx, o.Rendered, live); err != nil {
				return nil, err
			}
		}
		o.Pace = r.corrections.Check(correctionKey(run.instance, e.ObjectRef), r.Clock.Now())
	}
	return observations, nil
}

// act carries out a verdict: it notes in the inventory what changed in
// fields of others, applies again what drifted, and says so.
func (r *InstanceReconciler) act(ctx context.Context, run *planRun, v drift.Verdict) error {
	i := run.instance
	for _, seen := range v.Seen {
		inventory.Update(i.Status.Inventory, seen)
	}
	for _, c := range v.Corrections {
		if c.Fight {
			r.Recorder.Event(i, corev1.EventTypeWarning, kudov1beta1.DriftFightReason, c.Problem)
		}
		m := run.objectsFor(c.Entry.Task.Task, c.Entry.ObjectRef)
		corrected, err := m.Correct(ctx, c.Object)
		if err != nil {
			return err
		}
		r.corrections.Corrected(correctionKey(i, c.Entry.ObjectRef), r.Clock.Now())
		seen, err := m.Observe(corrected.Object)
		if err != nil {
			return err
		}
		inventory.Update(i.Status.Inventory, seen)
		r.Recorder.Eventf(i, corev1.EventTypeNormal, kudov1beta1.DriftCorrectedEvent, "%s applied again as plan %s rendered it: %s",
			inventory.Describe(c.Entry.ObjectRef), c.Entry.Task.Plan, c.Problem)
		planmetrics.DriftCorrected(run.ov.Spec.Operator.Name)
	}
	if v.Requeue > 0 {
		run.requeueAfter(v.Requeue)
	}
	return nil
}

// correctionKey names an object of an Instance for the pace of its corrections.
func correctionKey(i *kudov1beta1.Instance, ref kudov1beta1.ObjectRef) string {
	return i.Namespace + "/" + i.Name + "/" + inventory.Describe(ref)
}

// correcting reports whether drift of the Instance's objects is corrected:
// its annotation says, else the manager's default.
func (r *InstanceReconciler) correcting(i *kudov1beta1.Instance) bool {
	switch i.Annotations[kudov1beta1.DriftCorrectionAnnotation] {
	case "true":
		return true
	case "false":
		return false
	}
	return r.DriftCorrection
}

// reportTransition makes each change of a completed plan's Ready an event.
func reportTransition(events record.EventRecorder, i *kudov1beta1.Instance, before *metav1.Condition) {
	after := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
	if before == nil || after == nil || before.Status == metav1.ConditionUnknown ||
		(before.Status == after.Status && before.Reason == after.Reason) {
		return
	}
	switch after.Status {
	case metav1.ConditionTrue:
		events.Event(i, corev1.EventTypeNormal, after.Reason, "Ready: "+after.Message)
	case metav1.ConditionFalse:
		events.Event(i, corev1.EventTypeWarning, after.Reason, "Not ready: "+after.Message)
	}
}

// rendered renders the task that holds the object where it last ran, with
// the parameters its plan started from, and returns the object: what drift
// correction applies again. Only Apply objects are: Pipe files, child
// Instances and Jobs come from a plan's run, not from a rendering (nil).
func (p *planRun) rendered(ctx context.Context, e inventory.Entry) (*unstructured.Unstructured, error) {
	def, ok := p.ov.Spec.TasksByName()[e.Task.Task]
	if !ok || inventory.RunsOnce(e.ObjectRef) {
		return nil, nil
	}
	intent, err := p.intent(ctx, def, e.Task)
	if err != nil || intent.Action != task.ActionApply {
		return nil, err
	}
	for _, obj := range intent.Objects {
		if inventory.RefOf(obj) == e.ObjectRef {
			return obj.DeepCopy(), nil
		}
	}
	return nil, nil
}

// intent renders a task once per reconcile.
func (p *planRun) intent(ctx context.Context, def *kudov1beta1.Task, t *kudov1beta1.TaskInventory) (*task.Intent, error) {
	if intent, ok := p.intents[t.Task]; ok {
		return intent, nil
	}
	if !task.Rerenders(def) {
		return &task.Intent{Action: task.ActionNone}, nil
	}
	intent, err := task.Render(ctx, def, p.taskEnv(t))
	if err != nil {
		return nil, fmt.Errorf("rendering task %s to correct drift: %w", t.Task, err)
	}
	if p.intents == nil {
		p.intents = map[string]*task.Intent{}
	}
	p.intents[t.Task] = intent
	return intent, nil
}

// taskEnv is where a task of the inventory ran last.
func (p *planRun) taskEnv(t *kudov1beta1.TaskInventory) *task.Env {
	applied, err := p.appliedValues()
	var values map[string]any
	if err == nil {
		values, err = params.Values(p.ov.Spec.Parameters, applied)
	}
	if err != nil {
		values = nil
	}
	return p.env(t.Plan, t.Phase, t.Step, t.PlanUID, values)
}
