package controllers

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/planmetrics"
	"github.com/kudo-ng/kudo/internal/task"
)

// afterCorrection is when an Instance whose object was just applied again
// is judged again: its Ready condition shows the drift until then.
const afterCorrection = time.Second

// record notes in the inventory what a task's run applied or deleted.
func (p *planRun) record(site inventory.Site, res *task.Result) error {
	status := &p.instance.Status
	if len(res.Deleted) > 0 {
		refs := make([]kudov1beta1.ObjectRef, len(res.Deleted))
		for n, obj := range res.Deleted {
			refs[n] = inventory.RefOf(obj)
		}
		status.Inventory = inventory.Forget(status.Inventory, refs...)
	}
	if len(res.Applied) == 0 && !res.Done {
		return nil
	}
	applied := make([]inventory.Applied, 0, len(res.Applied))
	for _, a := range res.Applied {
		o, err := observe(a.Object)
		if err != nil {
			return err
		}
		applied = append(applied, inventory.Applied{Object: o, Written: a.Written})
	}
	status.Inventory = inventory.Record(status.Inventory, site, applied, res.Done)
	return nil
}

// observe is what the inventory keeps of an object, judged as the cache
// holds it: trimmed.
func observe(obj *unstructured.Unstructured) (kudov1beta1.InventoryObject, error) {
	if obj.GetGeneration() == 0 {
		cached, err := asCached(obj)
		if err != nil {
			return kudov1beta1.InventoryObject{}, err
		}
		obj = cached
	}
	return inventory.Observe(obj)
}

// reconcileInventory keeps what the plans applied as they applied it: it
// prunes what completed runs no longer render, and, once the last plan
// completed, judges every object of the inventory — gone, changed by someone
// else, unhealthy — corrects drift where asked, and derives Ready from it.
func (r *InstanceReconciler) reconcileInventory(ctx context.Context, run *planRun) error {
	i := run.instance
	if err := r.prune(ctx, run); err != nil {
		return err
	}
	readyBefore := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition).DeepCopy()
	var problems []engine.Problem
	if a := i.Status.ActivePlan; a != nil && a.Status == kudov1beta1.ExecutionComplete && run.selectionErr == nil {
		// A plan that completed in this reconcile wrote objects the cache
		// may not hold yet: judged against the versions before, they would
		// look changed by someone else.
		if err := run.writes.Await(ctx, r.Client); err != nil {
			return err
		}
		if err := r.adopt(ctx, run); err != nil {
			return err
		}
		var err error
		if problems, err = r.judge(ctx, run); err != nil {
			return err
		}
	}
	setReadiness(i, engine.InstanceReadiness(i, run.selectionErr, problems))
	r.reportTransition(i, readyBefore)
	return nil
}

// adopt fills the inventory of an Instance whose plans completed before
// kudo-ng kept one (an earlier kudo-ng): the objects its completed plans'
// Apply tasks render that exist, in the order the plans ran, taken as they
// are now. Nothing becomes stale: adopting prunes nothing.
func (r *InstanceReconciler) adopt(ctx context.Context, run *planRun) error {
	i := run.instance
	if i.Status.Inventory != nil {
		return nil
	}
	var runs []kudov1beta1.PlanStatus
	for _, ps := range i.Status.PlanStatus {
		if ps.Status == kudov1beta1.ExecutionComplete && ps.LastUpdatedTimestamp != nil {
			runs = append(runs, ps)
		}
	}
	slices.SortFunc(runs, func(a, b kudov1beta1.PlanStatus) int {
		return a.LastUpdatedTimestamp.Compare(b.LastUpdatedTimestamp.Time)
	})
	applied, err := run.appliedValues()
	if err != nil {
		// A secret value changed since: the plan that change runs records
		// the inventory.
		return nil
	}
	values, err := params.Values(run.ov.Spec.Parameters, applied)
	if err != nil {
		// The next plan fails on such values; there is nothing to adopt.
		return nil
	}
	tasks := run.ov.Spec.TasksByName()
	for _, ps := range runs {
		for _, phase := range run.ov.Spec.Plans[ps.Name].Phases {
			for _, step := range phase.Steps {
				for _, name := range step.Tasks {
					site := inventory.Site{Task: name, Plan: ps.Name, Phase: phase.Name, Step: step.Name, PlanUID: ps.UID}
					if def, ok := tasks[name]; ok && appliesObjects(def) {
						if err := r.adoptTask(ctx, run, def, site, values); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// adoptTask records the objects the task renders at site that exist.
func (r *InstanceReconciler) adoptTask(
	ctx context.Context, run *planRun, def *kudov1beta1.Task, site inventory.Site, values map[string]any,
) error {
	intent, err := task.Render(ctx, def, run.env(site.Plan, site.Phase, site.Step, site.PlanUID, values))
	if err != nil || intent.Action != task.ActionApply {
		return nil
	}
	res := task.Result{}
	for _, obj := range intent.Objects {
		live, err := r.live(ctx, obj.GroupVersionKind(), inventory.RefOf(obj))
		if err != nil {
			return err
		}
		if live != nil {
			res.Applied = append(res.Applied, task.Applied{Object: live})
		}
	}
	return run.record(site, &res)
}

// appliesObjects: the kinds of task whose objects a rendering says, which
// drift correction and adoption render again. A Pipe's files, a child
// Instance, come from a plan's run.
func appliesObjects(def *kudov1beta1.Task) bool {
	return def.Kind == kudov1beta1.ApplyTaskKind || def.Kind == kudov1beta1.ToggleTaskKind
}

// judge checks each object of the inventory from the cache; objects that
// look changed are checked with a server-side dry run of what their task
// renders, which tells a change of what kudo-ng applied from one of fields
// other managers own (an autoscaler's replicas).
func (r *InstanceReconciler) judge(ctx context.Context, run *planRun) ([]engine.Problem, error) {
	i := run.instance
	var problems []engine.Problem
	for _, e := range inventory.Entries(i.Status.Inventory) {
		gvk := schema.FromAPIVersionAndKind(e.APIVersion, e.Kind)
		ref := describe(e.ObjectRef)
		live, err := r.live(ctx, gvk, e.ObjectRef)
		if err != nil {
			return nil, err
		}
		if live == nil {
			if inventory.RunsOnce(e.ObjectRef) {
				continue
			}
			p, err := r.drifted(ctx, run, e, engine.Problem{Reason: kudov1beta1.MissingReason, Message: ref + " is missing"})
			if err != nil {
				return nil, err
			}
			problems = append(problems, p)
			continue
		}
		drifted := false
		if live.GetAnnotations()[kudov1beta1.ReconcileAnnotation] != kudov1beta1.Disabled {
			if drifted, err = r.changed(ctx, run, e, live); err != nil {
				return nil, err
			}
		}
		var p *engine.Problem
		if drifted {
			p = &engine.Problem{Reason: kudov1beta1.DriftedReason, Message: ref + " was changed by another field manager"}
		}
		// An unhealthy object is reported as KUDO did, changed or not: an
		// edit that breaks a workload is ResourceNotReady.
		if verdict := task.Judge(ctx, r.Client, live); !verdict.Healthy {
			msg := task.Explain(ctx, r.Client, r.watch, i.Name, live, verdict.Message)
			if drifted {
				msg += "; it was changed by another field manager"
			}
			p = &engine.Problem{Reason: kudov1beta1.ResourceNotReadyReason, Message: msg}
		}
		if drifted {
			corrected, err := r.drifted(ctx, run, e, *p)
			if err != nil {
				return nil, err
			}
			p = &corrected
		}
		if p != nil {
			problems = append(problems, *p)
		}
	}
	return problems, nil
}

// live reads an object of the inventory from the cache, nil when it is
// gone. Its kind is watched first: after a restart, no plan may have
// applied it yet, and its changes must wake the Instance.
func (r *InstanceReconciler) live(
	ctx context.Context, gvk schema.GroupVersionKind, ref kudov1beta1.ObjectRef,
) (*unstructured.Unstructured, error) {
	if err := r.watch(ctx, gvk); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	switch err := r.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, live); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return live, nil
}

// changed reports whether someone else changed what kudo-ng applied of the
// object. What looks the same as the inventory saw it is not checked; what
// does not is dry-run applied, and a change of no field kudo-ng owns is
// noted in the inventory, not reported.
func (r *InstanceReconciler) changed(ctx context.Context, run *planRun, e inventory.Entry, live *unstructured.Unstructured) (bool, error) {
	now, err := observe(live)
	if err != nil || !inventory.Changed(e.InventoryObject, now) {
		return false, err
	}
	obj, err := run.rendered(ctx, e)
	if err != nil {
		return false, err
	}
	if obj == nil {
		// Not rendered alone (a Pipe's file, a child Instance whose plans
		// change its spec): nothing to compare with.
		inventory.Update(run.instance.Status.Inventory, now)
		return false, nil
	}
	env := run.taskEnv(e.Task)
	would, err := task.DryRun(ctx, env, obj)
	if err != nil {
		return false, err
	}
	if live.GetGeneration() > 0 {
		if would.GetGeneration() != live.GetGeneration() {
			return true, nil
		}
	} else if after, err := observe(would); err != nil || inventory.Changed(now, after) {
		return err == nil, err
	}
	inventory.Update(run.instance.Status.Inventory, now)
	return false, nil
}

// drifted reports an object gone or changed, and applies it again when the
// Instance asks for drift correction and the pace of corrections allows.
func (r *InstanceReconciler) drifted(ctx context.Context, run *planRun, e inventory.Entry, p engine.Problem) (engine.Problem, error) {
	i := run.instance
	if !r.correcting(i) {
		return p, nil
	}
	obj, err := run.rendered(ctx, e)
	if err != nil {
		return p, err
	}
	if obj == nil {
		p.Message += fmt.Sprintf(" (not corrected: task %s is not an Apply task of OperatorVersion %s)", e.Task.Task, run.ov.Name)
		return p, nil
	}
	key := i.Namespace + "/" + i.Name + "/" + describe(e.ObjectRef)
	now := r.Clock.Now()
	verdict := r.corrections.Check(key, now)
	if verdict.Fight {
		p = engine.Problem{Reason: kudov1beta1.DriftFightReason, Message: fmt.Sprintf(
			"%s is changed again after each correction (%d in a row): another controller or user fights over it; "+
				"stop it, or annotate the object %s: %s",
			describe(e.ObjectRef), verdict.Corrections, kudov1beta1.ReconcileAnnotation, kudov1beta1.Disabled)}
	}
	if verdict.Wait > 0 {
		run.requeueAfter(verdict.Wait)
		p.Message += fmt.Sprintf("; corrected again in %s", verdict.Wait.Round(time.Second))
		return p, nil
	}
	if verdict.Fight {
		r.Recorder.Event(i, corev1.EventTypeWarning, kudov1beta1.DriftFightReason, p.Message)
	}
	if err := task.Reapply(ctx, run.taskEnv(e.Task), obj); err != nil {
		return p, err
	}
	r.corrections.Corrected(key, now)
	o, err := observe(obj)
	if err != nil {
		return p, err
	}
	inventory.Update(i.Status.Inventory, o)
	r.Recorder.Eventf(i, corev1.EventTypeNormal, "DriftCorrected", "%s applied again as plan %s rendered it: %s",
		describe(e.ObjectRef), e.Task.Plan, p.Message)
	planmetrics.DriftCorrected(run.ov.Spec.Operator.Name)
	p.Message += "; applied again"
	run.requeueAfter(afterCorrection)
	return p, nil
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
func (r *InstanceReconciler) reportTransition(i *kudov1beta1.Instance, before *metav1.Condition) {
	after := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
	if before == nil || after == nil || before.Status == metav1.ConditionUnknown ||
		(before.Status == after.Status && before.Reason == after.Reason) {
		return
	}
	switch after.Status {
	case metav1.ConditionTrue:
		r.Recorder.Event(i, corev1.EventTypeNormal, after.Reason, "Ready: "+after.Message)
	case metav1.ConditionFalse:
		r.Recorder.Event(i, corev1.EventTypeWarning, after.Reason, "Not ready: "+after.Message)
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
	if !appliesObjects(def) {
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

// prune deletes the stale objects of tasks whose last run completed its
// plan, and notes them in that plan's status.
func (r *InstanceReconciler) prune(ctx context.Context, run *planRun) error {
	i := run.instance
	for _, t := range inventory.Prunable(i.Status.Inventory, i.Status.PlanStatus) {
		plan, name := t.Plan, t.Task
		var done []kudov1beta1.ObjectRef
		for _, ref := range t.Stale {
			deleted, err := r.remove(ctx, run.writer, i, ref, "no run of task "+name+" renders it any more")
			if err != nil {
				return err
			}
			if deleted {
				ps := i.Status.PlanStatus[plan]
				ps.Pruned = append(ps.Pruned, ref)
				i.Status.PlanStatus[plan] = ps
				r.Recorder.Eventf(i, corev1.EventTypeNormal, "Pruned", "Pruned %s: task %s of plan %s no longer renders it", describe(ref), name, plan)
			}
			done = append(done, ref)
		}
		i.Status.Inventory = inventory.Forget(i.Status.Inventory, done...)
	}
	return nil
}

// remove deletes an object of the inventory, with its dependents, unless it
// is annotated to be kept, or is a CustomResourceDefinition whose custom
// resources remain: deleting it would delete them, other users' data
// perhaps. It reports whether it deleted the object.
func (r *InstanceReconciler) remove(ctx context.Context, writer client.Writer, i *kudov1beta1.Instance, ref kudov1beta1.ObjectRef,
	why string) (bool, error) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	live, err := r.live(ctx, gvk, ref)
	if err != nil || live == nil {
		return false, err
	}
	if live.GetAnnotations()[kudov1beta1.PruneAnnotation] == kudov1beta1.Disabled {
		r.Recorder.Eventf(i, corev1.EventTypeNormal, "Kept", "Kept %s (%s): annotated %s: %s",
			describe(ref), why, kudov1beta1.PruneAnnotation, kudov1beta1.Disabled)
		return false, nil
	}
	if inventory.IsCustomResourceDefinition(ref) {
		if remaining, err := r.customResources(ctx, live); err != nil || remaining != "" {
			if remaining != "" {
				r.Recorder.Eventf(i, corev1.EventTypeWarning, "CustomResourceDefinitionKept",
					"Kept %s (%s): %s; delete them, then the CustomResourceDefinition", describe(ref), why, remaining)
			}
			return false, err
		}
	}
	if live.GetDeletionTimestamp() != nil {
		return true, nil
	}
	if err := writer.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("deleting %s: %w", describe(ref), err)
	}
	return true, nil
}

// customResources says which custom resources of the CRD remain, in any
// namespace, if any; read from the API server, not to start an informer.
func (r *InstanceReconciler) customResources(ctx context.Context, crd *unstructured.Unstructured) (string, error) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		version, _, _ := unstructured.NestedString(v.(map[string]any), "name")
		served, _, _ := unstructured.NestedBool(v.(map[string]any), "served")
		if !served {
			continue
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind + "List"})
		switch err := r.APIReader.List(ctx, list, client.Limit(1)); {
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			return "", nil
		case apierrors.IsForbidden(err):
			// What cannot be counted may be someone's data: keep it.
			return "the manager may not list its custom resources, which may remain", nil
		case err != nil:
			return "", fmt.Errorf("listing the custom resources of %s: %w", crd.GetName(), err)
		}
		if len(list.Items) > 0 {
			return "custom resources of it remain, " + describeNamed(kind, list.Items[0].Namespace, list.Items[0].Name) + " among them", nil
		}
		return "", nil
	}
	return "", nil
}

// removeInventory deletes what the plans applied and reports whether all of
// it is gone. It goes in tiers, each gone before the next: the objects,
// then CustomResourceDefinitions (whose custom resources must be gone
// first), then RBAC, which may be what lets the manager list and delete the
// rest (a package's ClusterRole aggregated to the manager).
func (r *InstanceReconciler) removeInventory(ctx context.Context, i *kudov1beta1.Instance) (bool, error) {
	id, err := r.identityFor(i)
	if err != nil {
		return false, err
	}
	why := fmt.Sprintf("Instance %s is uninstalled", i.Name)
	for _, tier := range inventory.RemovalTiers(inventory.All(i.Status.Inventory)) {
		var gone []kudov1beta1.ObjectRef
		pending := false
		for _, ref := range tier {
			deleted, err := r.remove(ctx, id.writer, i, ref, why)
			if err != nil {
				return false, err
			}
			if deleted {
				pending = true
			} else {
				gone = append(gone, ref)
			}
		}
		i.Status.Inventory = inventory.Forget(i.Status.Inventory, gone...)
		if pending {
			return false, nil
		}
	}
	return true, nil
}

// describe names an object in messages: its kind, namespace and name.
func describe(ref kudov1beta1.ObjectRef) string {
	return describeNamed(ref.Kind, ref.Namespace, ref.Name)
}

func describeNamed(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}
