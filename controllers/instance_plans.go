package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/planmetrics"
	"github.com/kudo-ng/kudo/internal/remote"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
	"github.com/kudo-ng/kudo/internal/task"
)

// maxPasses bounds how many times one reconcile advances a plan: a step that
// finishes lets the next one start at once, without waiting for an event.
const maxPasses = 16

// planRun is the scope of one reconcile of an Instance: what it read, what
// its plans found, and the patcher through which it writes the Instance. It
// holds what of the reconciler's configuration it follows, and nothing that
// leads back to the reconciler.
type planRun struct {
	instance *kudov1beta1.Instance
	// ov is the Instance's OperatorVersion; nil when it was not found.
	ov *kudov1beta1.OperatorVersion
	// replaced: ov is not the content the Instance ran with, and runs
	// nothing (engine.OperatorVersionReplaced).
	replaced bool
	// patcher makes every write of the Instance.
	patcher *instancePatcher
	writes  *objects.Writes
	// cached reads the cache of the cluster the Instance's objects live in,
	// where writes are awaited.
	cached client.Reader
	// writer reads the cache and writes as the Instance's identity
	// (identityFor); objects applies, deletes and judges its objects so.
	writer client.Client
	// reader reads, as the identity, what the cache holds trimmed: the
	// data of the Secrets pods mount.
	reader  client.Reader
	objects *objects.Manager
	// home and homeObjects write and judge, in this cluster, the child
	// Instances of KudoOperator tasks and their Secrets (objectsFor): the
	// same as writer and objects unless cluster is set.
	home        client.Client
	homeObjects *objects.Manager
	files       task.FileCopier
	// cluster is the cluster the Instance's kubeconfig names, where its
	// objects live; nil: this one.
	cluster *remote.Cluster
	// unreachable, when set, says that cluster did not answer: the
	// conditions say it instead (waitForCluster).
	unreachable *engine.Readiness
	// clusterBackoff is how long to wait for that cluster to answer: ever
	// longer for the same Instance.
	clusterBackoff func() time.Duration
	// params are the Instance's parameter values.
	params *instanceParameters

	events record.EventRecorder
	clock  clock.PassiveClock
	// warned are the API migrations already reported, by plan run.
	warned *utilcache.LRUExpireCache
	served migrate.Served
	scope  render.Scope
	// capabilities are what Helm charts' .Capabilities say of the cluster.
	capabilities func() (*chartrender.Capabilities, error)
	// requireServiceAccount runs no plan without spec.serviceAccountName.
	requireServiceAccount bool
	// defaultTimeout bounds the runs of plans that declare no timeout.
	defaultTimeout *metav1.Duration
	renderLimits   render.Limits

	// selectionErr says why no plan could be chosen for a changed spec.
	selectionErr error
	// requeue, when not zero, is when the Instance must be judged again.
	requeue time.Duration
	// intents are the tasks rendered for drift correction, by task name.
	intents map[string]*task.Intent

	// judged: the reconcile got as far as judging the Instance, whose
	// conditions are then derived once, as it ends (conclude).
	judged bool
	// verdict, when set, is what the conditions say instead.
	verdict *engine.Readiness
	// problems keep the objects of a completed plan from being Ready.
	problems []engine.Problem
	// objectsJudged: the inventory's objects were judged, and a change of
	// Ready is an event.
	objectsJudged bool
	// readyBefore is the Ready condition as the reconcile found it.
	readyBefore *metav1.Condition
}

// judge notes that the reconcile judged the Instance: its conditions come
// from its plans and the problems found, or say verdict when it is set.
func (p *planRun) judge(verdict *engine.Readiness) {
	p.judged, p.verdict = true, verdict
}

// judgeObjects notes the problems of the inventory's objects.
func (p *planRun) judgeObjects(problems []engine.Problem) {
	p.judge(nil)
	p.problems, p.objectsJudged = problems, true
}

// conclude derives the Instance's conditions, if the reconcile judged it,
// and reports a change of Ready its objects made.
func (p *planRun) conclude() {
	if p.unreachable != nil {
		p.judge(p.unreachable)
	}
	if !p.judged {
		return
	}
	readiness := p.verdict
	if readiness == nil {
		readiness = ptr.To(engine.InstanceReadiness(p.instance, p.selectionErr, p.problems))
	}
	setReadiness(p.instance, *readiness)
	if p.objectsJudged {
		reportTransition(p.events, p.instance, p.readyBefore)
	}
}

// redactor hides the Instance's sensitive values; nil before they are read.
func (p *planRun) redactor() *params.Redactor {
	if p.params == nil {
		return nil
	}
	return p.params.redactor
}

// requeueAfter asks for the Instance to be reconciled again after d, at the
// latest.
func (p *planRun) requeueAfter(d time.Duration) {
	if p.requeue == 0 || d < p.requeue {
		p.requeue = d
	}
}

// plans runs the active plan; when it ends, or none runs, it starts the
// plan the spec asks for, if any.
func (p *planRun) plans(ctx context.Context) error {
	engine.EnsurePlanStatuses(&p.instance.Status, p.ov.Spec.Plans)
	if engine.RanByKUDO(p.instance) && p.params.err == nil {
		p.adoptFromKUDO()
	}
	if p.requireServiceAccount && p.instance.Spec.ServiceAccountName == "" {
		p.selectionErr = fmt.Errorf("no plan runs: spec.serviceAccountName is required (--require-service-account)")
		return nil
	}
	for range 3 {
		name, running := engine.ActivePlan(p.instance, p.ov.Spec.Plans)
		if running && engine.CancelRequested(p.instance, name) {
			if err := p.cancel(ctx, name); err != nil {
				return err
			}
			running = false
		}
		if uid, rerun := engine.RerunRequested(p.instance, name); running && rerun {
			p.start(name, uid)
		}
		if !running && engine.RetryRequested(p.instance, name) {
			if err := p.retry(ctx, name); err != nil {
				return err
			}
			running = true
		}
		if p.params.err != nil {
			// Not terminal: the Secret's watch wakes the Instance.
			p.selectionErr = p.params.err
			return nil
		}
		if !running {
			if err := p.clearFinished(ctx); err != nil {
				return err
			}
			next, uid, err := engine.NextPlan(p.instance, p.ov, p.params.recorded, uuid.NewUUID)
			if err != nil || next == "" {
				if err == nil {
					// The spec asks for no plan: its values are the last plan's.
					p.instance.Status.AppliedGeneration = p.instance.Generation
				}
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

// cleanup runs the cleanup plan of a deleted Instance to its end, or until
// it is cancelled (kubectl kudo uninstall --force).
func (p *planRun) cleanup(ctx context.Context, name string) (bool, error) {
	engine.EnsurePlanStatuses(&p.instance.Status, p.ov.Spec.Plans)
	if active, _ := engine.ActivePlan(p.instance, p.ov.Spec.Plans); active != name || p.instance.Status.ActivePlan == nil {
		p.start(name, uuid.NewUUID())
	}
	if engine.CancelRequested(p.instance, name) && !p.instance.Status.PlanStatus[name].Status.IsTerminal() {
		return true, p.cancel(ctx, name)
	}
	return p.advance(ctx, name)
}

// adoptFromKUDO takes over an Instance KUDO ran as it is, and says what it
// found: switching from KUDO runs no plan.
func (p *planRun) adoptFromKUDO() {
	name := engine.AdoptFromKUDO(p.instance, p.ov, p.params.recorded)
	status := p.instance.Status.PlanStatus[name].Status
	next := "it runs again when a parameter that triggers it changes"
	switch {
	case status.IsRunning():
		next = "it goes on from its steps"
	case status == kudov1beta1.ExecutionFatalError:
		next = "it stays so until it is retried or the Instance is updated"
	}
	p.events.Eventf(p.instance, corev1.EventTypeNormal, kudov1beta1.AdoptedEvent,
		"Adopted from KUDO as it was, with OperatorVersion %s and its current parameters: plan %s is %s, and %s", p.ov.Name, name, status, next)
}

// start starts a run of the plan, and says so as KUDO did.
func (p *planRun) start(name string, uid types.UID) {
	engine.StartPlan(p.instance, p.ov, name, uid, p.clock.Now(), p.params.recorded)
	p.events.Eventf(p.instance, corev1.EventTypeNormal, kudov1beta1.PlanStartedEvent, "Execution of plan %s started", name)
	planmetrics.PlanStarted(p.ov.Spec.Operator.Name, name)
}

// retry resumes the failed run of the plan from its failed steps. The
// request becomes a plain one for the run at once, so that a run that fails
// again is not retried again.
func (p *planRun) retry(ctx context.Context, name string) error {
	i := p.instance
	ps := engine.Retry(ptr.To(i.Status.PlanStatus[name]), p.clock.Now())
	i.Status.PlanStatus[name] = ps
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: name, Status: ps.Status}
	engine.UpdateRevision(i, &ps)
	p.events.Eventf(i, corev1.EventTypeNormal, kudov1beta1.PlanRetriedEvent, "Plan %s resumed from its failed steps", name)
	return p.answer(ctx, engine.AcknowledgeRetry(i.Spec.PlanExecution, ps.UID))
}

// cancel ends the running plan before it runs another task.
func (p *planRun) cancel(ctx context.Context, name string) error {
	i := p.instance
	ps := i.Status.PlanStatus[name]
	ps = engine.Cancel(&ps, p.clock.Now())
	planmetrics.PlanFinished(p.ov.Spec.Operator.Name, &ps, p.clock.Now())
	engine.UpdateRevision(i, &ps)
	i.Status.PlanStatus[name] = ps
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: name, Status: ps.Status}
	p.events.Eventf(i, corev1.EventTypeNormal, kudov1beta1.PlanCancelledEvent, "Plan %s cancelled", name)
	return p.clearPlanExecution(ctx, ps.UID)
}

// defaultTimeout bounds a run of a plan that declares no timeout: a deleted
// Instance's cleanup by --cleanup-timeout, which lets the Instance go even
// when its cleanup cannot finish (a namespace being deleted refuses it);
// every other by --plan-timeout. Nil: no bound.
func (r *InstanceReconciler) defaultTimeout(i *kudov1beta1.Instance) *metav1.Duration {
	limit := r.PlanTimeout
	if !i.DeletionTimestamp.IsZero() && r.CleanupTimeout > 0 {
		limit = r.CleanupTimeout
	}
	if limit <= 0 {
		return nil
	}
	return &metav1.Duration{Duration: limit}
}

// advance runs the due steps of the plan until it waits or ends, and
// reports whether it ended.
func (p *planRun) advance(ctx context.Context, name string) (bool, error) {
	i := p.instance
	plan := p.ov.Spec.Plans[name]
	if plan.Timeout == nil {
		plan.Timeout = p.defaultTimeout
	}
	ps := i.Status.PlanStatus[name]
	values, err := params.Values(p.ov.Spec.Parameters, p.params.values)
	for pass := 0; pass < maxPasses && err == nil; pass++ {
		due := engine.Due(&plan, &ps)
		if len(due) == 0 {
			break
		}
		results := make(map[engine.StepRef]engine.StepResult, len(due))
		progressed := false
		for _, ref := range due {
			// Redacted before it is recorded, so that the message recorded
			// is the one the next pass computes.
			res := p.runStep(ctx, name, ps.UID, values, ref)
			res.Message, res.Err = p.params.redactor.String(res.Message), p.params.redactor.Error(res.Err)
			p.redactWaitingOn(res.WaitingOn)
			results[ref] = res
			progressed = progressed || res.Done
		}
		before := ps
		ps = engine.Record(&plan, &ps, results, p.clock.Now())
		planmetrics.StepsRecorded(p.ov.Spec.Operator.Name, &before, &ps, p.clock.Now())
		if !progressed {
			break
		}
	}
	if err != nil {
		// A stored parameter value that does not decode fails the plan.
		ps.Status, ps.Message = kudov1beta1.ExecutionFatalError, p.params.redactor.String(err.Error())
	}
	i.Status.PlanStatus[name] = ps
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: name, Status: ps.Status}
	if !ps.Status.IsTerminal() {
		// Nothing may change in the cluster to wake the Instance again: a
		// step in ERROR is tried again after its backoff, and one that waits
		// is judged again at its deadline.
		if backoff, ok := engine.NextRetry(&ps, p.clock.Now()); ok {
			p.requeueAfter(backoff)
		}
		if at, ok := engine.NextDeadline(&plan, &ps); ok {
			p.requeueAfter(max(at.Sub(p.clock.Now()), time.Millisecond))
		}
		return false, nil
	}
	// KUDO's event, which users' scripts and tests match, for either end.
	p.events.Eventf(i, corev1.EventTypeNormal, kudov1beta1.PlanFinishedEvent,
		"Execution of plan %s finished with status %s", name, ps.Status)
	planmetrics.PlanFinished(p.ov.Spec.Operator.Name, &ps, p.clock.Now())
	engine.UpdateRevision(i, &ps)
	if ps.Status == kudov1beta1.ExecutionFatalError {
		p.events.Eventf(i, corev1.EventTypeWarning, kudov1beta1.PlanFailedEvent, "Plan %s failed: %s", name, ps.Message)
	}
	return true, p.clearPlanExecution(ctx, ps.UID)
}

// clearFinished clears a spec.planExecution whose plan run has ended but
// was not cleared then (the patch failed, or the manager stopped).
func (p *planRun) clearFinished(ctx context.Context) error {
	if pe := p.instance.Spec.PlanExecution; pe.PlanName != "" && engine.Settled(p.instance) {
		return p.clearPlanExecution(ctx, pe.UID)
	}
	return nil
}

// clearPlanExecution empties spec.planExecution once the plan it asked for
// ended, as KUDO does; a newer request in the meantime is kept.
func (p *planRun) clearPlanExecution(ctx context.Context, uid types.UID) error {
	return p.answer(ctx, engine.ClearRequest(p.instance.Spec.PlanExecution, uid))
}

// answer writes the manager's answer to spec.planExecution, as the protocol
// gives it (engine.ClearRequest, engine.AcknowledgeRetry), at once: the
// plan chosen next, in this reconcile, records the generation the answer
// makes, and the status this reconcile writes comes after it, which
// engine.Settled relies on. An answer that leaves the request as it is
// writes nothing.
func (p *planRun) answer(ctx context.Context, pe kudov1beta1.PlanExecution) error {
	p.instance.Spec.PlanExecution = pe
	return p.patcher.patchObject(ctx, p.instance)
}

// env is what the tasks of a step of a plan run need.
func (p *planRun) env(plan, phase, step string, uid types.UID, values map[string]any) *task.Env {
	owner := task.OwnerReference(p.instance)
	return &task.Env{
		Client: p.writer, SecretReader: p.reader, Objects: p.objects, Home: p.home, HomeObjects: p.homeObjects, Instance: p.instance,
		Site: render.Site{
			OperatorVersion: p.ov, Instance: p.instance.Name, Namespace: p.instance.Namespace,
			Plan: plan, Phase: phase, Step: step, PlanUID: uid, Revision: p.revision(uid), Params: values, Owner: &owner, Limits: p.renderLimits,
			Shard: p.instance.Labels[kudov1beta1.ShardLabel], Remote: p.cluster != nil,
		},
		Served: p.served, Scope: p.scope, Files: p.files, Admit: p.admit(plan, phase, step, uid),
		Redactor: p.params.redactor, Capabilities: p.capabilities,
	}
}

// revision is the number of the plan run uid among the Instance's, 0 when
// its status does not hold it.
func (p *planRun) revision(uid types.UID) int64 {
	for _, r := range p.instance.Status.Revisions {
		if r.UID == uid {
			return r.Number
		}
	}
	return 0
}

// admit checks, writing nothing, what a task of the step is about to
// apply: that the inventory can hold it, and that the cleanup finalizer is
// on the Instance when it must be (errCleanupFinalizerFirst).
func (p *planRun) admit(plan, phase, step string, uid types.UID) func(string, []*unstructured.Unstructured) error {
	return func(name string, objs []*unstructured.Unstructured) error {
		site := inventory.Site{Task: name, Plan: plan, Phase: phase, Step: step, PlanUID: uid}
		if err := p.inventoryHolds(site, objs); err != nil {
			return err
		}
		if !controllerutil.ContainsFinalizer(p.instance, kudov1beta1.InstanceCleanupFinalizer) && outsideNamespace(objs, p.instance.Namespace) {
			return errCleanupFinalizerFirst
		}
		return nil
	}
}

// errCleanupFinalizerFirst refuses a task that would apply what owner
// references cannot delete (a cluster-scoped object, one in another
// namespace) before the Instance holds its cleanup finalizer: an Instance
// deleted between the apply and the finalizer would leave it behind. The
// run puts the finalizer on and runs the task again; the API server adds
// no finalizer to an Instance being deleted, so such a step then fails and
// applies nothing.
var errCleanupFinalizerFirst = errors.New("the Instance must hold its cleanup finalizer first")

// outsideNamespace reports whether any of the objects is not in the namespace.
func outsideNamespace(objs []*unstructured.Unstructured, namespace string) bool {
	return slices.ContainsFunc(objs, func(obj *unstructured.Unstructured) bool { return obj.GetNamespace() != namespace })
}

// inventoryHolds fails the plan when the inventory cannot hold what a task
// is about to apply, before it applies any of it.
func (p *planRun) inventoryHolds(site inventory.Site, objs []*unstructured.Unstructured) error {
	count, size, ok := inventory.Fits(p.instance.Status.Inventory, site, objs)
	if ok {
		return nil
	}
	return task.Fatalf("task %s: the Instance's inventory would hold %d objects in %d KiB, more than the %d KiB it may: "+
		"split the package's objects across Instances", site.Task, count, size>>10, inventory.MaxBytes>>10)
}

// redactWaitingOn hides the sensitive values in the messages and observed
// values of what a step waits on: an object may show a parameter's value.
func (p *planRun) redactWaitingOn(waitingOn []kudov1beta1.ObjectHealth) {
	for n := range waitingOn {
		w := &waitingOn[n]
		w.Message = p.params.redactor.String(w.Message)
		for m := range w.Observed {
			w.Observed[m].Value = p.params.redactor.String(w.Observed[m].Value)
		}
	}
}

// runStep runs every task of a step, records what they applied in the
// inventory and sums up their outcomes.
func (p *planRun) runStep(ctx context.Context, plan string, uid types.UID, values map[string]any, ref engine.StepRef) engine.StepResult {
	env := p.env(plan, ref.Phase, ref.Step, uid, values)
	tasks := p.ov.Spec.TasksByName()
	var waiting, notes []string
	var waitingOn []kudov1beta1.ObjectHealth
	for _, name := range engine.StepTasks(p.ov.Spec.Plans[plan], ref) {
		def, ok := tasks[name]
		if !ok {
			return engine.StepResult{Err: fmt.Errorf("task %s is not defined", name), Fatal: true}
		}
		res, err := task.Run(ctx, def, env)
		if errors.Is(err, errCleanupFinalizerFirst) {
			if err = p.patcher.addFinalizer(ctx, p.instance); err == nil {
				res, err = task.Run(ctx, def, env)
			}
		}
		p.warnMigrations(uid, res)
		site := inventory.Site{Task: name, Plan: plan, Phase: ref.Phase, Step: ref.Step, PlanUID: uid}
		if recordErr := p.record(site, &res); err == nil {
			err = recordErr
		}
		if err != nil && p.cluster != nil && remote.Unreachable(err) {
			// Not a failed step: it waits for the cluster, and goes on from here.
			p.waitForCluster(err)
			return engine.StepResult{Message: p.unreachable.Message}
		}
		if err != nil {
			return engine.StepResult{Err: fmt.Errorf("task %s: %w", name, err), Fatal: task.IsFatal(err)}
		}
		if !res.Done {
			waiting, waitingOn = append(waiting, res.Message), append(waitingOn, res.Waiting...)
		} else if res.Message != "" {
			notes = append(notes, res.Message)
		}
	}
	if len(waiting) > 0 {
		return engine.StepResult{Message: strings.Join(waiting, "; "), WaitingOn: waitingOn}
	}
	return engine.StepResult{Done: true, Message: strings.Join(notes, "; ")}
}

// warnMigrations makes each API version migration of a plan run a Warning
// event on the Instance, once.
func (p *planRun) warnMigrations(uid types.UID, res task.Result) {
	for _, m := range res.Migrations {
		key := string(uid) + "/" + m.String()
		if _, seen := p.warned.Get(key); seen {
			continue
		}
		p.warned.Add(key, true, warnedFor)
		reason, message := "APIVersionMigrated", fmt.Sprintf("%s: the server no longer serves %s, applied as %s", m.Template, m.From, m.To)
		switch {
		case m.Dropped != "":
			reason, message = "FieldDropped", m.String()
		case len(m.Changes) > 0:
			message += "; " + strings.Join(m.Changes, "; ")
		}
		p.events.Event(p.instance, corev1.EventTypeWarning, reason, message)
	}
}

// served reports whether the API server serves a kind at a version, from
// the manager's cached discovery.
func (r *InstanceReconciler) served(gvk schema.GroupVersionKind) bool {
	if _, ok := r.notServed.Get(gvk); ok {
		return false
	}
	if _, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		r.notServed.Add(gvk, true, notServedFor)
		return false
	}
	return true
}

// scope tells whether a kind is namespaced (render.MapperScope).
func (r *InstanceReconciler) scope(gvk schema.GroupVersionKind) (bool, error) {
	return render.MapperScope(r.Mapper)(gvk)
}
