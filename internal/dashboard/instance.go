package dashboard

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/params"
)

// MaxObjects is how many of an Instance's objects its page reads and
// shows: the page reads each from the API server.
const MaxObjects = 200

// InstancePage is the page of one Instance.
type InstancePage struct {
	Namespace, Name string
	// Found is false while the Instance does not exist (yet): the page
	// waits for it.
	Found           bool
	Operator        Link
	OperatorVersion Link
	Typed           string
	// Cluster is the cluster the Instance acts on, "" for the manager's own.
	Cluster    string
	State      State
	Conditions []metav1.Condition
	Plans      []PlanTree
	Parameters []ParameterRow
	Objects    []ObjectRow
	// MoreObjects are the objects not read (MaxObjects).
	MoreObjects int
	Revisions   []RevisionRow
	Events      []EventRow
	Actions     Actions
}

// PlanTree is a plan as it runs: phases, steps, tasks.
type PlanTree struct {
	Name     string
	Status   kudov1beta1.ExecutionStatus
	Message  string
	Active   bool
	Started  string
	Duration string
	Phases   []PhaseNode
}

// PhaseNode is a phase of a PlanTree.
type PhaseNode struct {
	Name     string
	Strategy kudov1beta1.Ordering
	Status   kudov1beta1.ExecutionStatus
	Message  string
	Steps    []StepNode
}

// StepNode is a step of a PhaseNode: its tasks, and what it waits on.
type StepNode struct {
	Name     string
	Status   kudov1beta1.ExecutionStatus
	Message  string
	Duration string
	Attempts int32
	Tasks    []string
	Waiting  []Waiting
	// MoreWaiting are the objects waited on the status does not list.
	MoreWaiting int32
}

// Waiting is an object a step waits on, and why: the health rule and what
// it observed — the why-trace.
type Waiting struct {
	Object   string
	Status   string
	Rule     string
	Message  string
	Observed []string
	Since    string
}

// ParameterRow is a parameter's value, masked when sensitive.
type ParameterRow struct {
	Name        string
	Value       string
	Default     bool
	Masked      bool
	Description string
	Trigger     string
}

// The health of an object that is gone, and of one the user may not read.
const (
	Missing = "Missing"
	Unknown = "Unknown"
)

// ObjectRow is an object the Instance's plans applied, as it is now.
type ObjectRow struct {
	Kind, Namespace, Name string
	Task                  string
	// Health is kstatus's (Current, InProgress, Failed, ...) or the
	// package's rule's verdict; Missing when gone.
	Health  string
	Message string
	// Drift says how the object differs from what the plan applied.
	Drift string
}

// RevisionRow is a plan run of the Instance's history.
type RevisionRow struct {
	Number          int64
	Plan            string
	Status          kudov1beta1.ExecutionStatus
	Started         string
	OperatorVersion string
	Parameters      string
	Current         bool
}

// Actions are what the page offers to do, and whether the user may.
type Actions struct {
	Plans   []string
	Running bool
	Failed  bool
	// Refusal says why the user may not, "" when they may.
	Refusal string
}

// Live is an object an Instance's inventory names, as read from the API
// server; nil Object for one that is gone.
type Live struct {
	Ref    kudov1beta1.ObjectRef
	Object *unstructured.Unstructured
	// Err is why it could not be read (forbidden to the user, ...).
	Err string
}

// InstanceOf is the page of the Instance ns/name; i is nil while it does
// not exist. live are its objects as read, events its events.
func InstanceOf(ns, name string, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion, live []Live,
	events []corev1.Event, now time.Time, refusal string) *InstancePage {
	p := &InstancePage{Namespace: ns, Name: name}
	for k := range events {
		p.Events = append(p.Events, eventRow(&events[k], now))
	}
	slices.SortStableFunc(p.Events, func(a, b EventRow) int { return b.Time.Compare(a.Time) })
	if i == nil {
		return p
	}
	row := instanceRow(i)
	p.Found, p.Typed, p.Cluster, p.State, p.OperatorVersion = true, row.Typed, row.Cluster, row.State, row.OperatorVersion
	p.Operator = Link{Text: row.Operator, Href: OperatorHref(i.Namespace, row.Operator)}
	p.Conditions = i.Status.Conditions
	p.Plans = planTrees(i, ov, now)
	p.Parameters = parameterRows(i, ov)
	p.Objects, p.MoreObjects = objectRows(i, live)
	p.Revisions = revisionRows(i)
	p.Actions = Actions{Refusal: refusal}
	if ov != nil {
		p.Actions.Plans = slices.Sorted(maps.Keys(ov.Spec.Plans))
	}
	if _, ps := LastPlan(i); ps != nil {
		p.Actions.Running = ps.Status.IsRunning()
		p.Actions.Failed = ps.Status == kudov1beta1.ExecutionFatalError
	}
	return p
}

// planTrees are the plans of ov as i's status says they ran: the active
// (or last) plan first, then the others that ran, then those that never
// did.
func planTrees(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion, now time.Time) []PlanTree {
	if ov == nil {
		return nil
	}
	last, _ := LastPlan(i)
	names := slices.Sorted(maps.Keys(ov.Spec.Plans))
	rank := func(name string) int {
		switch ps, ran := i.Status.PlanStatus[name]; {
		case name == last:
			return 0
		case ran && ps.Status != kudov1beta1.ExecutionNeverRun:
			return 1
		default:
			return 2
		}
	}
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
	trees := make([]PlanTree, 0, len(names))
	for _, name := range names {
		trees = append(trees, planTree(name, ov.Spec.Plans[name], i.Status.PlanStatus[name], name == last, now))
	}
	return trees
}

func planTree(name string, plan kudov1beta1.Plan, ps kudov1beta1.PlanStatus, active bool, now time.Time) PlanTree {
	t := PlanTree{Name: name, Status: cmp.Or(ps.Status, kudov1beta1.ExecutionNeverRun), Message: ps.Message, Active: active}
	if ps.StartedAt != nil {
		t.Started = Ago(now, ps.StartedAt.Time) + " ago"
		t.Duration = duration(ps.StartedAt, ps.Status, ps.LastUpdatedTimestamp, now)
	}
	for _, phase := range plan.Phases {
		node := PhaseNode{Name: phase.Name, Strategy: cmp.Or(phase.Strategy, kudov1beta1.Serial), Status: kudov1beta1.ExecutionNeverRun}
		var phaseStatus *kudov1beta1.PhaseStatus
		for k := range ps.Phases {
			if ps.Phases[k].Name == phase.Name {
				phaseStatus = &ps.Phases[k]
			}
		}
		if phaseStatus != nil {
			node.Status, node.Message = cmp.Or(phaseStatus.Status, kudov1beta1.ExecutionNeverRun), phaseStatus.Message
		}
		for s, step := range phase.Steps {
			sn := StepNode{Name: step.Name, Status: kudov1beta1.ExecutionNeverRun, Tasks: step.Tasks}
			if phaseStatus != nil {
				for k := range phaseStatus.Steps {
					st := &phaseStatus.Steps[k]
					if st.Name != step.Name {
						continue
					}
					sn.Status, sn.Message = cmp.Or(st.Status, kudov1beta1.ExecutionNeverRun), st.Message
					sn.Attempts, sn.MoreWaiting = st.Attempts, st.MoreWaitingOn
					end := ps.LastUpdatedTimestamp
					if node.Strategy == kudov1beta1.Serial && s+1 < len(phaseStatus.Steps) && phaseStatus.Steps[s+1].StartedAt != nil {
						end = phaseStatus.Steps[s+1].StartedAt
					}
					sn.Duration = duration(st.StartedAt, st.Status, end, now)
					for _, w := range st.WaitingOn {
						sn.Waiting = append(sn.Waiting, waiting(&w, now))
					}
				}
			}
			node.Steps = append(node.Steps, sn)
		}
		t.Phases = append(t.Phases, node)
	}
	return t
}

// duration is how long something that started at started ran: until now
// while it runs, else until end.
func duration(started *metav1.Time, status kudov1beta1.ExecutionStatus, end *metav1.Time, now time.Time) string {
	if started == nil {
		return ""
	}
	until := now
	if !status.IsRunning() && end != nil {
		until = end.Time
	}
	return until.Sub(started.Time).Round(time.Second).String()
}

func waiting(w *kudov1beta1.ObjectHealth, now time.Time) Waiting {
	out := Waiting{Object: action.ObjectName(w), Status: w.Status, Rule: w.Rule, Message: w.Message}
	for _, o := range w.Observed {
		out.Observed = append(out.Observed, o.Field+" = "+o.Value)
	}
	if w.Since != nil {
		out.Since = Ago(now, w.Since.Time)
	}
	return out
}

// Masked is what the page shows of a sensitive value.
const Masked = "••••••"

func parameterRows(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) []ParameterRow {
	if ov == nil {
		return nil
	}
	sensitive := params.Sensitive(ov.Spec.Parameters, i.Spec.SecretParameters)
	rows := make([]ParameterRow, 0, len(ov.Spec.Parameters))
	for _, def := range ov.Spec.Parameters {
		row := ParameterRow{Name: def.Name, Description: def.Description, Trigger: def.Trigger}
		value, set := i.Spec.Parameters[def.Name]
		ref, fromSecret := i.Spec.SecretParameters[def.Name]
		switch {
		case fromSecret:
			row.Value = "@secret:" + ref.String()
		case !set && def.Default != nil:
			row.Value, row.Default = *def.Default, true
		default:
			row.Value = value
		}
		if sensitive[def.Name] && !fromSecret && row.Value != "" {
			row.Value, row.Masked = Masked, true
		}
		rows = append(rows, row)
	}
	return rows
}

func objectRows(i *kudov1beta1.Instance, live []Live) ([]ObjectRow, int) {
	byRef := make(map[kudov1beta1.ObjectRef]*Live, len(live))
	for k := range live {
		byRef[live[k].Ref] = &live[k]
	}
	var rows []ObjectRow
	more := 0
	for _, ti := range i.Status.Inventory {
		for _, o := range ti.Objects {
			l, read := byRef[o.ObjectRef]
			if !read {
				more++
				continue
			}
			rows = append(rows, objectRow(ti.Task, o, l))
		}
	}
	return rows, more
}

func objectRow(task string, recorded kudov1beta1.InventoryObject, l *Live) ObjectRow {
	row := ObjectRow{Kind: recorded.Kind, Namespace: recorded.Namespace, Name: recorded.Name, Task: task}
	switch {
	case l.Err != "":
		row.Health, row.Message = Unknown, l.Err
	case l.Object == nil:
		row.Health, row.Drift = Missing, "deleted since it was applied"
	default:
		r := health.Check(l.Object)
		row.Health, row.Message = r.Status, r.Message
		if recorded.Generation > 0 && l.Object.GetGeneration() != recorded.Generation {
			row.Drift = fmt.Sprintf("changed since applied (generation %d, applied %d)", l.Object.GetGeneration(), recorded.Generation)
		}
	}
	return row
}

// Refs are the objects of i's inventory the page reads, at most max, and
// how many more there are.
func Refs(i *kudov1beta1.Instance, max int) []kudov1beta1.ObjectRef {
	var refs []kudov1beta1.ObjectRef
	for _, ti := range i.Status.Inventory {
		for _, o := range ti.Objects {
			if len(refs) == max {
				return refs
			}
			refs = append(refs, o.ObjectRef)
		}
	}
	return refs
}

func revisionRows(i *kudov1beta1.Instance) []RevisionRow {
	rows := make([]RevisionRow, 0, len(i.Status.Revisions))
	for k := len(i.Status.Revisions) - 1; k >= 0; k-- {
		r := &i.Status.Revisions[k]
		row := RevisionRow{Number: r.Number, Plan: r.Plan, Status: r.Status, OperatorVersion: r.OperatorVersion,
			Parameters: action.DescribeParameters(r), Current: k == len(i.Status.Revisions)-1}
		if r.StartedAt != nil {
			row.Started = r.StartedAt.UTC().Format(time.DateTime)
		}
		rows = append(rows, row)
	}
	return rows
}

// The styles of the pages' statuses.
const (
	good    = "good"
	bad     = "bad"
	running = "running"
	neutral = "neutral"
)

// ConditionClass is the style of a condition, as kstatus reads Ready,
// Reconciling and Stalled: Reconciling is progress, Stalled is trouble.
func ConditionClass(c metav1.Condition) string {
	switch {
	case c.Status == metav1.ConditionUnknown:
		return neutral
	case c.Type == kudov1beta1.ReconcilingCondition:
		if c.Status == metav1.ConditionTrue {
			return running
		}
		return neutral
	case c.Type == kudov1beta1.StalledCondition:
		if c.Status == metav1.ConditionTrue {
			return bad
		}
		return neutral
	case c.Status == metav1.ConditionTrue:
		return good
	default:
		return bad
	}
}

// StatusClass is the style of a plan, phase or step status.
func StatusClass(s kudov1beta1.ExecutionStatus) string {
	switch s {
	case kudov1beta1.ExecutionComplete:
		return good
	case kudov1beta1.ExecutionFatalError, kudov1beta1.ExecutionError:
		return bad
	case kudov1beta1.ExecutionInProgress, kudov1beta1.ExecutionPending, kudov1beta1.ExecutionRetry:
		return running
	default:
		return neutral
	}
}

// HealthClass is the style of an object's health.
func HealthClass(h string) string {
	switch h {
	case health.Current:
		return good
	case health.Failed, Missing:
		return bad
	case Unknown:
		return neutral
	default:
		return running
	}
}

// StateClass is the style of a State.
func StateClass(s State) string {
	switch s {
	case StateReady:
		return good
	case StateFailed, StateNotReady, StateDrifted:
		return bad
	case StateRunning:
		return running
	default:
		return neutral
	}
}

// ReadyOf is the Ready condition of a page's conditions, if any.
func ReadyOf(conditions []metav1.Condition) *metav1.Condition {
	return meta.FindStatusCondition(conditions, kudov1beta1.ReadyCondition)
}

// joinTasks lists a step's tasks.
func joinTasks(tasks []string) string { return strings.Join(tasks, ", ") }
