package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/task"
)

// objectsFor is the manager of an object a task applied: in this cluster
// the child Instances of KudoOperator tasks and their Secrets, which live
// beside the Instance; the others where its objects live.
func (p *planRun) objectsFor(taskName string, ref kudov1beta1.ObjectRef) *objects.Manager {
	if p.homeObjects == p.objects {
		return p.objects
	}
	if ref.Kind == "Instance" && strings.HasPrefix(ref.APIVersion, kudov1beta1.GroupVersion.Group+"/") {
		return p.homeObjects
	}
	if p.ov != nil && slices.ContainsFunc(p.ov.Spec.Tasks, func(t kudov1beta1.Task) bool {
		return t.Name == taskName && t.Kind == kudov1beta1.KudoOperatorTaskKind
	}) {
		return p.homeObjects
	}
	return p.objects
}

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
		o, err := p.objectsFor(site.Task, inventory.RefOf(a.Object)).Observe(a.Object)
		if err != nil {
			return err
		}
		applied = append(applied, inventory.Applied{Object: o, Written: a.Written()})
	}
	status.Inventory = inventory.Record(status.Inventory, site, applied, res.Done)
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
		for at, step := range run.ov.Spec.Plans[ps.Name].Steps() {
			for _, name := range step.Tasks {
				site := inventory.Site{Task: name, Plan: ps.Name, Phase: at.Phase.Name, Step: step.Name, PlanUID: ps.UID}
				if def, ok := tasks[name]; ok && task.Rerenders(def) {
					if err := run.adoptTask(ctx, def, site, values); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// adoptTask records the objects the task renders at site that exist and are
// the Instance's, or carry KUDO's labels of it.
func (p *planRun) adoptTask(ctx context.Context, def *kudov1beta1.Task, site inventory.Site, values map[string]any) error {
	intent, err := task.Render(ctx, def, p.env(site.Plan, site.Phase, site.Step, site.PlanUID, values))
	if err != nil || intent.Action != task.ActionApply {
		return nil
	}
	res := task.Result{}
	for _, obj := range intent.Objects {
		live, err := p.objects.Get(ctx, inventory.RefOf(obj))
		if err != nil {
			return err
		}
		if live == nil {
			continue
		}
		if claim := objects.ClaimOf(live, p.instance); !claim.Ours && !objects.MadeByKUDOFor(live, p.instance) {
			holder := "no Instance"
			if claim.Holder != "" {
				holder = claim.Holder
			}
			p.events.Eventf(p.instance, corev1.EventTypeWarning, kudov1beta1.NotAdoptedEvent, "Did not adopt %s: it is %s's",
				inventory.Describe(inventory.RefOf(obj)), holder)
			continue
		}
		res.Applied = append(res.Applied, objects.Change{Object: live, Action: objects.Unchanged})
	}
	return p.record(site, &res)
}

// prune deletes the stale objects of tasks whose last run completed its
// plan, and notes them in that plan's status.
func (r *InstanceReconciler) prune(ctx context.Context, run *planRun) error {
	i := run.instance
	for _, t := range inventory.Prunable(i.Status.Inventory, i.Status.PlanStatus) {
		plan, name := t.Plan, t.Task
		for _, ref := range t.Stale {
			deleted, err := run.objectsFor(name, ref).Delete(ctx, ref, objects.Removal)
			if err != nil {
				return err
			}
			r.reportKept(i, ref, "no run of task "+name+" renders it any more", deleted)
			if deleted.Action == objects.Deleting {
				if ps := i.Status.PlanStatus[plan]; len(ps.Pruned) < kudov1beta1.MaxPrunedListed {
					ps.Pruned = append(ps.Pruned, ref)
					i.Status.PlanStatus[plan] = ps
				}
				r.Recorder.Eventf(i, corev1.EventTypeNormal, kudov1beta1.PrunedEvent, "Pruned %s: task %s of plan %s no longer renders it",
					inventory.Describe(ref), name, plan)
			}
		}
		i.Status.Inventory = inventory.Forget(i.Status.Inventory, t.Stale...)
	}
	return nil
}

// removeInventory deletes what the plans applied and reports whether all of
// it is gone. It goes in tiers, each gone before the next: the objects,
// then CustomResourceDefinitions (whose custom resources must be gone
// first), then RBAC, which may be what lets the manager list and delete the
// rest (a package's ClusterRole aggregated to the manager). What is kept
// leaves the inventory.
func (r *InstanceReconciler) removeInventory(ctx context.Context, run *planRun) (bool, error) {
	i := run.instance
	why := fmt.Sprintf("Instance %s is uninstalled", i.Name)
	taskOf := make(map[kudov1beta1.ObjectRef]string)
	for _, ti := range i.Status.Inventory {
		for _, o := range ti.Objects {
			taskOf[o.ObjectRef] = ti.Task
		}
	}
	for _, tier := range inventory.RemovalTiers(inventory.All(i.Status.Inventory)) {
		var gone []kudov1beta1.ObjectRef
		for _, ref := range tier {
			deleted, err := run.objectsFor(taskOf[ref], ref).Delete(ctx, ref, objects.Removal)
			if err != nil {
				return false, err
			}
			r.reportKept(i, ref, why, deleted)
			if deleted.Action != objects.Deleting {
				gone = append(gone, ref)
			}
		}
		i.Status.Inventory = inventory.Forget(i.Status.Inventory, gone...)
		if len(gone) < len(tier) {
			return false, nil
		}
	}
	return true, nil
}

// reportKept says why an object the inventory would delete is kept.
func (r *InstanceReconciler) reportKept(i *kudov1beta1.Instance, ref kudov1beta1.ObjectRef, why string, c objects.Change) {
	switch c.Action {
	case objects.KeptByAnnotation:
		r.Recorder.Eventf(i, corev1.EventTypeNormal, kudov1beta1.KeptEvent, "Kept %s (%s): %s", inventory.Describe(ref), why, c.Note)
	case objects.KeptNotOurs:
		r.Recorder.Eventf(i, corev1.EventTypeWarning, kudov1beta1.KeptEvent, "Kept %s (%s): %s", inventory.Describe(ref), why, c.Note)
	case objects.KeptForCustomResources:
		r.Recorder.Eventf(i, corev1.EventTypeWarning, kudov1beta1.CustomResourceDefinitionKeptEvent,
			"Kept %s (%s): %s; delete them, then the CustomResourceDefinition", inventory.Describe(ref), why, c.Note)
	}
}
