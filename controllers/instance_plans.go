package controllers

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/task"
)

// maxPasses bounds how many times one reconcile advances a plan: a step that
// finishes lets the next one start at once, without waiting for an event.
const maxPasses = 16

// planRun is one reconcile's work on an Instance's plans.
type planRun struct {
	r        *InstanceReconciler
	instance *kudov1beta1.Instance
	ov       *kudov1beta1.OperatorVersion
	writes   *task.Writes
	// selectionErr says why no plan could be chosen for a changed spec.
	selectionErr error
}

// plans runs the active plan; when it ends, or none runs, it starts the
// plan the spec asks for, if any.
func (p *planRun) plans(ctx context.Context) error {
	p.ensureStatusTree()
	for range 3 {
		name, running := p.active()
		if running && p.cancelRequested(name) {
			if err := p.cancel(ctx, name); err != nil {
				return err
			}
			running = false
		}
		if !running {
			if err := p.clearFinished(ctx); err != nil {
				return err
			}
			next, uid, err := p.next()
			if err != nil || next == "" {
				p.selectionErr = err
				return nil
			}
			p.start(next, uid)
			name = next
		}
		ended, err := p.advance(ctx, name)
		if err != nil || !ended {
			return err
		}
	}
	return nil
}

// cleanup runs the cleanup plan of a deleted Instance to its end.
func (p *planRun) cleanup(ctx context.Context, name string) (bool, error) {
	p.ensureStatusTree()
	if active, _ := p.active(); active != name || p.instance.Status.ActivePlan == nil {
		p.start(name, uuid.NewUUID())
	}
	return p.advance(ctx, name)
}

// ensureStatusTree gives every plan of the OperatorVersion a status tree,
// NEVER_RUN until it runs, as KUDO does.
func (p *planRun) ensureStatusTree() {
	if p.instance.Status.PlanStatus == nil {
		p.instance.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{}
	}
	for name, plan := range p.ov.Spec.Plans {
		if _, ok := p.instance.Status.PlanStatus[name]; !ok {
			p.instance.Status.PlanStatus[name] = engine.NewPlanStatus(name, &plan)
		}
	}
}

// active returns the plan that runs, if one does.
func (p *planRun) active() (string, bool) {
	a := p.instance.Status.ActivePlan
	if a == nil {
		return "", false
	}
	ps, ok := p.instance.Status.PlanStatus[a.Name]
	_, defined := p.ov.Spec.Plans[a.Name]
	return a.Name, ok && defined && ps.Status.IsRunning()
}

// next picks the plan the spec asks for: an explicit planExecution with a
// new uid; deploy for a new Instance; the upgrade plan for a new
// OperatorVersion; the plan changed parameters trigger.
func (p *planRun) next() (string, types.UID, error) {
	i := p.instance
	plans := p.ov.Spec.Plans
	if pe := i.Spec.PlanExecution; pe.PlanName != "" && pe.UID != "" && i.Status.PlanStatus[pe.PlanName].UID != pe.UID {
		if _, ok := plans[pe.PlanName]; !ok {
			return "", "", fmt.Errorf("spec.planExecution asks for plan %q, which OperatorVersion %s does not define", pe.PlanName, p.ov.Name)
		}
		return pe.PlanName, pe.UID, nil
	}
	switch {
	case i.Status.AppliedOperatorVersion == "":
		if _, ok := plans[kudov1beta1.DeployPlanName]; !ok {
			return "", "", fmt.Errorf("OperatorVersion %s has no deploy plan", p.ov.Name)
		}
		return kudov1beta1.DeployPlanName, uuid.NewUUID(), nil
	case i.Status.AppliedOperatorVersion != p.ov.Name:
		return engine.PlanForUpgrade(plans), uuid.NewUUID(), nil
	}
	changed := engine.ChangedParameters(i.Status.AppliedParameters, i.Spec.Parameters)
	if len(changed) == 0 {
		return "", "", nil
	}
	plan, err := engine.PlanForParameters(&p.ov.Spec, changed)
	if err != nil || plan == "" {
		return "", "", err
	}
	return plan, uuid.NewUUID(), nil
}

// cancelRequested: spec.planExecution asks to cancel this run of the plan.
func (p *planRun) cancelRequested(name string) bool {
	pe := p.instance.Spec.PlanExecution
	return pe.Status == kudov1beta1.ExecutionCancelled && pe.PlanName == name && pe.UID == p.instance.Status.PlanStatus[name].UID
}

// cancel ends the running plan before it runs another task.
func (p *planRun) cancel(ctx context.Context, name string) error {
	i := p.instance
	ps := i.Status.PlanStatus[name]
	ps = engine.Cancel(&ps, p.r.Clock.Now())
	i.Status.PlanStatus[name] = ps
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: name, Status: ps.Status}
	p.r.Recorder.Eventf(i, corev1.EventTypeNormal, "PlanCancelled", "Plan %s cancelled", name)
	return p.clearPlanExecution(ctx, ps.UID)
}

// start resets the plan's status tree and records the spec it runs with.
func (p *planRun) start(name string, uid types.UID) {
	i := p.instance
	plan := p.ov.Spec.Plans[name]
	ps := engine.Start(name, &plan, uid, p.r.Clock.Now())
	i.Status.PlanStatus[name] = ps
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: name, Status: ps.Status}
	i.Status.AppliedOperatorVersion = p.ov.Name
	i.Status.AppliedParameters = maps.Clone(i.Spec.Parameters)
}

// advance runs the due steps of the plan until it waits or ends, and
// reports whether it ended.
func (p *planRun) advance(ctx context.Context, name string) (bool, error) {
	i := p.instance
	plan := p.ov.Spec.Plans[name]
	ps := i.Status.PlanStatus[name]
	values, err := params.Values(p.ov.Spec.Parameters, i.Spec.Parameters)
	for pass := 0; pass < maxPasses && err == nil; pass++ {
		due := engine.Due(&plan, &ps)
		if len(due) == 0 {
			break
		}
		results := make(map[engine.StepRef]engine.StepResult, len(due))
		progressed := false
		for _, ref := range due {
			results[ref] = p.runStep(ctx, name, ps.UID, values, ref)
			progressed = progressed || results[ref].Done
		}
		ps = engine.Record(&plan, &ps, results, p.r.Clock.Now())
		if !progressed {
			break
		}
	}
	if err != nil {
		// A stored parameter value that does not decode fails the plan.
		ps.Status, ps.Message = kudov1beta1.ExecutionFatalError, err.Error()
	}
	i.Status.PlanStatus[name] = ps
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: name, Status: ps.Status}
	if ps.Status == kudov1beta1.ExecutionError {
		// Nothing may change in the cluster to wake the Instance again: the
		// error puts it back in the work queue, with its backoff.
		return false, fmt.Errorf("plan %s: %s", name, ps.Message)
	}
	if !ps.Status.IsTerminal() {
		return false, nil
	}
	if ps.Status == kudov1beta1.ExecutionComplete {
		p.r.Recorder.Eventf(i, corev1.EventTypeNormal, "PlanFinished", "Plan %s finished", name)
	} else {
		p.r.Recorder.Eventf(i, corev1.EventTypeWarning, "PlanFailed", "Plan %s failed: %s", name, ps.Message)
	}
	return true, p.clearPlanExecution(ctx, ps.UID)
}

// clearFinished clears a spec.planExecution whose plan run has ended but
// was not cleared then (the patch failed, or the manager stopped).
func (p *planRun) clearFinished(ctx context.Context) error {
	pe := p.instance.Spec.PlanExecution
	if pe.PlanName == "" {
		return nil
	}
	if ps, ok := p.instance.Status.PlanStatus[pe.PlanName]; ok && ps.UID == pe.UID && ps.Status.IsTerminal() {
		return p.clearPlanExecution(ctx, pe.UID)
	}
	return nil
}

// clearPlanExecution empties spec.planExecution once the plan it asked for
// ended, as KUDO does; a newer request in the meantime is kept.
func (p *planRun) clearPlanExecution(ctx context.Context, uid types.UID) error {
	i := p.instance
	if i.Spec.PlanExecution.UID != uid {
		return nil
	}
	// Patch a copy: the response would overwrite the status being built.
	obj := i.DeepCopy()
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	obj.Spec.PlanExecution = kudov1beta1.PlanExecution{}
	if err := p.r.Patch(ctx, obj, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	// The status written next observes the new generation, so the change
	// the patch makes does not cost another status write.
	i.Spec.PlanExecution, i.ResourceVersion, i.Generation = obj.Spec.PlanExecution, obj.ResourceVersion, obj.Generation
	return nil
}

// runStep runs every task of a step and sums up their outcomes.
func (p *planRun) runStep(ctx context.Context, plan string, uid types.UID, values map[string]any, ref engine.StepRef) engine.StepResult {
	env := &task.Env{
		Client: p.r.Client, Instance: p.instance, OperatorVersion: p.ov,
		PlanName: plan, PhaseName: ref.Phase, StepName: ref.Step, PlanUID: uid, Params: values,
		Served: p.r.served, Scope: p.r.scope, Watch: p.r.watch, Files: p.r.Files, Writes: p.writes,
	}
	tasks := map[string]*kudov1beta1.Task{}
	for i := range p.ov.Spec.Tasks {
		tasks[p.ov.Spec.Tasks[i].Name] = &p.ov.Spec.Tasks[i]
	}
	var waiting, notes []string
	for _, name := range stepTasks(&p.ov.Spec, plan, ref) {
		def, ok := tasks[name]
		if !ok {
			return engine.StepResult{Err: fmt.Errorf("task %s is not defined", name), Fatal: true}
		}
		t, err := task.New(def)
		var res task.Result
		if err == nil {
			res, err = t.Run(ctx, env)
		}
		p.warnMigrations(uid, res)
		if err != nil {
			return engine.StepResult{Err: fmt.Errorf("task %s: %w", name, err), Fatal: task.IsFatal(err)}
		}
		if !res.Done {
			waiting = append(waiting, res.Message)
		} else if res.Message != "" {
			notes = append(notes, res.Message)
		}
	}
	if len(waiting) > 0 {
		return engine.StepResult{Message: strings.Join(waiting, "; ")}
	}
	return engine.StepResult{Done: true, Message: strings.Join(notes, "; ")}
}

func stepTasks(ov *kudov1beta1.OperatorVersionSpec, plan string, ref engine.StepRef) []string {
	for _, phase := range ov.Plans[plan].Phases {
		if phase.Name != ref.Phase {
			continue
		}
		for _, step := range phase.Steps {
			if step.Name == ref.Step {
				return step.Tasks
			}
		}
	}
	return nil
}

// warnMigrations makes each API version migration of a plan run a Warning
// event on the Instance, once.
func (p *planRun) warnMigrations(uid types.UID, res task.Result) {
	for _, m := range res.Migrations {
		key := string(uid) + "/" + m.String()
		if _, seen := p.r.warned.LoadOrStore(key, true); seen {
			continue
		}
		p.r.Recorder.Eventf(p.instance, corev1.EventTypeWarning, "APIVersionMigrated",
			"%s: the server no longer serves %s, applied as %s", m.Template, m.From, m.To)
	}
}

// notServedFor is how long a kind found not served is believed so: the
// REST mapper asks the API server again on every miss, and old packages use
// removed API versions on every pass of their plans.
const notServedFor = 5 * time.Minute

// served reports whether the API server serves a kind at a version, from
// the manager's cached discovery.
func (r *InstanceReconciler) served(gvk schema.GroupVersionKind) bool {
	if until, ok := r.notServed.Load(gvk); ok && r.Clock.Now().Before(until.(time.Time)) {
		return false
	}
	if _, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		r.notServed.Store(gvk, r.Clock.Now().Add(notServedFor))
		return false
	}
	return true
}

// scope tells whether a kind is namespaced. A kind the server does not know
// yet, such as the custom resource of a CRD applied in the same step, counts
// as namespaced, as most are.
func (r *InstanceReconciler) scope(gvk schema.GroupVersionKind) (bool, error) {
	m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}
