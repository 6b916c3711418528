// Package dashboard is `kubectl kudo dashboard`: a local web server that
// shows what kudo-ng knows — the fleet, each Instance's plans as they run,
// history, drift and why an Instance is not Ready — read with the user's
// own credentials from one watch per kind.
//
// The pages are views: pure functions of a Snapshot of the watched objects
// (this file, instance.go, operator.go) rendered by html/template; the
// server (server.go) gathers the snapshot from its cache (source.go),
// checks the token and runs the actions through the CLI's own code.
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

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/trust"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Snapshot is what the watches hold when a page is asked for: the objects
// the user may see, typed Instances' records read into their status.
type Snapshot struct {
	Now time.Time
	// Namespace is the one namespace watched, "" for all of them.
	Namespace        string
	Instances        []kudov1beta1.Instance
	Operators        []kudov1beta1.Operator
	OperatorVersions []kudov1beta1.OperatorVersion
	Rollouts         []kudov1alpha1.Rollout
	Events           []corev1.Event
}

// State is where an Instance stands, as the fleet counts it.
type State string

const (
	StateReady    State = "Ready"
	StateRunning  State = "Running"
	StateFailed   State = "Failed"
	StateNotReady State = "NotReady"
	StateDrifted  State = "Drifted"
	StatePending  State = "Pending"
)

// states in the order the fleet's counts show them.
var states = []State{StateReady, StateRunning, StatePending, StateNotReady, StateDrifted, StateFailed}

// StuckAfter is how long a step may wait on the same object before the
// fleet lists it as needing attention.
const StuckAfter = 5 * time.Minute

// MaxActivity is how many events the fleet's timeline lists.
const MaxActivity = 100

// Filter is what the fleet page shows of the Instances and the timeline.
type Filter struct {
	// State is one of states, NeedsAttention, or "" for all.
	State string
	// Query is a substring of an Instance's namespace/name, Operator or
	// OperatorVersion, or of an event's object, reason or message.
	Query string
	// EventType is Normal, Warning or "" for both.
	EventType string
}

// Fleet is the fleet page.
type Fleet struct {
	Namespace string
	// Health is Healthy, Progressing or NeedsAttention: the banner's colour.
	Health    string
	Headline  string
	Total     int
	Shown     int
	Counts    []Count
	Attention []Attention
	Operators []OperatorRow
	Groups    []NamespaceGroup
	Rollouts  []RolloutRow
	Activity  []EventRow
	Filter    Filter
}

// The fleet's health, and the filter of what needs attention.
const (
	Healthy        = "healthy"
	Progressing    = "progressing"
	NeedsAttention = "attention"
)

// Count is the number of Instances in one State.
type Count struct {
	State State
	N     int
}

// Attention is one thing that needs someone: what, and why.
type Attention struct {
	Kind, Namespace, Name string
	Problem               string
	Reason                string
	Link                  string
}

// OperatorRow is an Operator and its versions.
type OperatorRow struct {
	Namespace, Name string
	Link            string
	Versions        []Link
	Instances       int
}

// Link is a name and its page.
type Link struct {
	Text, Href string
}

// NamespaceGroup are the Instances of one namespace that act on one
// cluster: the manager's own (Cluster "") or the one a kubeconfig Secret of
// the namespace names.
type NamespaceGroup struct {
	Namespace string
	Cluster   string
	Instances []InstanceRow
}

// InstanceRow is one Instance of the fleet.
type InstanceRow struct {
	Namespace, Name string
	Link            string
	Operator        string
	OperatorVersion Link
	// Typed is the kind of the typed object the Instance runs, if any.
	Typed string
	// Cluster is the kubeconfig Secret and key of the cluster the Instance
	// acts on (spec.kubeConfig), "" for the manager's own.
	Cluster    string
	Plan       string
	PlanStatus kudov1beta1.ExecutionStatus
	State      State
	Ready      metav1.ConditionStatus
	// Why is the Ready condition's reason and message when not Ready.
	Why string
}

// RolloutRow is one Rollout.
type RolloutRow struct {
	Namespace, Name string
	Link            string
	Operator        string
	Target          string
	Progress        string
	State           string
	Message         string
}

// EventRow is one event of the timeline.
type EventRow struct {
	Time    time.Time
	Ago     string
	Type    string
	Reason  string
	Object  string
	Link    string
	Message string
	Count   int32
}

// InstanceHref is the page of an Instance.
func InstanceHref(ns, name string) string { return "/instances/" + ns + "/" + name }

// OperatorHref is the page of an Operator.
func OperatorHref(ns, name string) string { return "/operators/" + ns + "/" + name }

// OperatorVersionHref is the page of an OperatorVersion.
func OperatorVersionHref(ns, name string) string { return "/operatorversions/" + ns + "/" + name }

// RolloutHref is the page of a Rollout.
func RolloutHref(ns, name string) string { return "/rollouts/" + ns + "/" + name }

// FleetOf is the fleet page of s, filtered.
func FleetOf(s *Snapshot, f Filter) *Fleet {
	fleet := &Fleet{Namespace: s.Namespace, Filter: f, Total: len(s.Instances)}
	counts := map[State]int{}
	type groupKey struct{ cluster, namespace string }
	groups := map[groupKey][]InstanceRow{}
	instancesOf := map[string]int{}
	for k := range s.Instances {
		i := &s.Instances[k]
		row := instanceRow(i)
		counts[row.State]++
		instancesOf[i.Namespace+"/"+operatorOf(i)]++
		attention := instanceAttention(i, row.State, s.Now)
		fleet.Attention = append(fleet.Attention, attention...)
		if !f.matches(&row, len(attention) > 0) {
			continue
		}
		fleet.Shown++
		key := groupKey{cluster: row.Cluster, namespace: i.Namespace}
		groups[key] = append(groups[key], row)
	}
	for _, st := range states {
		fleet.Counts = append(fleet.Counts, Count{State: st, N: counts[st]})
	}
	// The manager's own cluster first, then the others by name.
	keys := slices.SortedFunc(maps.Keys(groups), func(a, b groupKey) int {
		return cmp.Or(strings.Compare(a.cluster, b.cluster), strings.Compare(a.namespace, b.namespace))
	})
	for _, key := range keys {
		rows := groups[key]
		slices.SortFunc(rows, func(a, b InstanceRow) int { return strings.Compare(a.Name, b.Name) })
		fleet.Groups = append(fleet.Groups, NamespaceGroup{Namespace: key.namespace, Cluster: key.cluster, Instances: rows})
	}
	fleet.Operators = operatorRows(s, instancesOf)
	for k := range s.OperatorVersions {
		ov := &s.OperatorVersions[k]
		if c := meta.FindStatusCondition(ov.Status.Conditions, trust.VerifiedCondition); c != nil && c.Status == metav1.ConditionFalse {
			fleet.Attention = append(fleet.Attention, Attention{Kind: "OperatorVersion", Namespace: ov.Namespace, Name: ov.Name,
				Problem: "package not verified", Reason: c.Message, Link: OperatorVersionHref(ov.Namespace, ov.Name)})
		}
	}
	for k := range s.Rollouts {
		r := &s.Rollouts[k]
		row := rolloutRow(r)
		fleet.Rollouts = append(fleet.Rollouts, row)
		if row.State == "Stalled" {
			fleet.Attention = append(fleet.Attention, Attention{Kind: "Rollout", Namespace: r.Namespace, Name: r.Name,
				Problem: "rollout stopped", Reason: row.Message, Link: row.Link})
		}
	}
	slices.SortFunc(fleet.Attention, func(a, b Attention) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name), strings.Compare(a.Problem, b.Problem))
	})
	fleet.Activity = activity(s.Events, s.Now, f, MaxActivity)
	fleet.Health, fleet.Headline = headline(counts, len(s.Instances), len(fleet.Attention))
	return fleet
}

func headline(counts map[State]int, total, attention int) (string, string) {
	switch {
	case total == 0:
		return Healthy, "No Instances yet"
	case attention > 0:
		return NeedsAttention, fmt.Sprintf("%d of %s Ready · %d need attention", counts[StateReady], Plural(total, "Instance"), attention)
	case counts[StateReady] == total && total == 1:
		return Healthy, "The Instance is Ready"
	case counts[StateReady] == total:
		return Healthy, fmt.Sprintf("All %d Instances Ready", total)
	default:
		return Progressing, fmt.Sprintf("%d of %s Ready · %d running a plan", counts[StateReady], Plural(total, "Instance"),
			counts[StateRunning]+counts[StatePending])
	}
}

// Plural is n and noun, in the plural unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func (f Filter) matches(row *InstanceRow, attention bool) bool {
	switch f.State {
	case "":
	case NeedsAttention:
		if !attention {
			return false
		}
	default:
		if string(row.State) != f.State {
			return false
		}
	}
	if f.Query == "" {
		return true
	}
	q := strings.ToLower(f.Query)
	for _, field := range []string{row.Namespace + "/" + row.Name, row.Operator, row.OperatorVersion.Text, row.Typed, row.Cluster} {
		if strings.Contains(strings.ToLower(field), q) {
			return true
		}
	}
	return false
}

func operatorOf(i *kudov1beta1.Instance) string {
	if name := i.Labels[kudov1beta1.OperatorLabel]; name != "" {
		return name
	}
	return ""
}

// LastPlan is the plan the Instance runs, or else the one that ran last.
func LastPlan(i *kudov1beta1.Instance) (string, *kudov1beta1.PlanStatus) {
	if a := i.Status.ActivePlan; a != nil {
		if ps, ok := i.Status.PlanStatus[a.Name]; ok {
			return a.Name, &ps
		}
	}
	var name string
	var last *kudov1beta1.PlanStatus
	for _, n := range slices.Sorted(maps.Keys(i.Status.PlanStatus)) {
		ps := i.Status.PlanStatus[n]
		if ps.LastUpdatedTimestamp == nil {
			continue
		}
		if last == nil || ps.LastUpdatedTimestamp.After(last.LastUpdatedTimestamp.Time) {
			name, last = n, &ps
		}
	}
	return name, last
}

// StateOf is where the Instance stands: a plan failing or failed, running,
// waiting to run, and once none runs its Ready condition.
func StateOf(i *kudov1beta1.Instance) State {
	_, ps := LastPlan(i)
	ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
	switch {
	case ps != nil && ps.Status == kudov1beta1.ExecutionFatalError:
		return StateFailed
	case ps != nil && ps.Status.IsRunning():
		return StateRunning
	case ps == nil || ready == nil:
		return StatePending
	case ready.Status == metav1.ConditionTrue:
		return StateReady
	case ready.Reason == kudov1beta1.DriftedReason || ready.Reason == kudov1beta1.MissingReason ||
		ready.Reason == kudov1beta1.DriftFightReason:
		return StateDrifted
	case ready.Reason == kudov1beta1.PlanPendingReason || ready.Reason == kudov1beta1.PlanInProgressReason:
		return StatePending
	default:
		return StateNotReady
	}
}

func instanceRow(i *kudov1beta1.Instance) InstanceRow {
	row := InstanceRow{
		Namespace: i.Namespace, Name: i.Name, Link: InstanceHref(i.Namespace, i.Name),
		Operator: operatorOf(i), State: StateOf(i), Ready: metav1.ConditionUnknown,
		OperatorVersion: Link{Text: i.Spec.OperatorVersion.Name,
			Href: OperatorVersionHref(cmp.Or(i.Spec.OperatorVersion.Namespace, i.Namespace), i.Spec.OperatorVersion.Name)},
	}
	if holder := typedapi.HolderOf(i); holder != nil {
		row.Typed = holder.GetKind()
	}
	if kc := i.Spec.KubeConfig; kc != nil {
		row.Cluster = kc.String()
	}
	name, ps := LastPlan(i)
	row.Plan = name
	row.PlanStatus = kudov1beta1.ExecutionNeverRun
	if ps != nil {
		row.PlanStatus = ps.Status
	}
	if ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition); ready != nil {
		row.Ready = ready.Status
		if ready.Status != metav1.ConditionTrue {
			row.Why = reasonAndMessage(ready.Reason, ready.Message)
		}
	}
	return row
}

func reasonAndMessage(reason, message string) string {
	if message == "" {
		return reason
	}
	return reason + ": " + message
}

// instanceAttention is what of i, in state, needs someone: a failed plan, a step
// waiting on the same object past StuckAfter, not Ready after its plan
// completed (drift among it).
func instanceAttention(i *kudov1beta1.Instance, state State, now time.Time) []Attention {
	at := func(problem, reason string) Attention {
		return Attention{Kind: "Instance", Namespace: i.Namespace, Name: i.Name, Problem: problem, Reason: reason,
			Link: InstanceHref(i.Namespace, i.Name)}
	}
	name, ps := LastPlan(i)
	var out []Attention
	switch {
	case ps == nil:
	case ps.Status == kudov1beta1.ExecutionFatalError:
		out = append(out, at("plan "+name+" failed", ps.Message))
	case ps.Status.IsRunning():
		if stuck := stuckStep(ps, now); stuck != "" {
			out = append(out, at("plan "+name+" stuck", stuck))
		}
	}
	if len(out) > 0 {
		return out
	}
	switch state {
	case StateDrifted:
		ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
		out = append(out, at("drift being corrected", reasonAndMessage(ready.Reason, ready.Message)))
	case StateNotReady:
		ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
		out = append(out, at("not Ready", reasonAndMessage(ready.Reason, ready.Message)))
	}
	return out
}

// stuckStep says which step of a running plan waits on an object past
// StuckAfter, or fails and is retried; "" when none does.
func stuckStep(ps *kudov1beta1.PlanStatus, now time.Time) string {
	for at, s := range ps.Steps() {
		if s.Status == kudov1beta1.ExecutionError {
			return fmt.Sprintf("step %s/%s: %s", at.Phase.Name, s.Name, s.Message)
		}
		if s.Status != kudov1beta1.ExecutionInProgress {
			continue
		}
		for _, w := range s.WaitingOn {
			if w.Since != nil && now.Sub(w.Since.Time) > StuckAfter {
				return fmt.Sprintf("step %s/%s waits on %s %s since %s: %s", at.Phase.Name, s.Name, w.Kind, w.Name,
					Ago(now, w.Since.Time), w.Message)
			}
		}
	}
	return ""
}

func operatorRows(s *Snapshot, instancesOf map[string]int) []OperatorRow {
	versions := map[string][]kudov1beta1.OperatorVersion{}
	for _, ov := range s.OperatorVersions {
		key := ov.Namespace + "/" + ov.Spec.Operator.Name
		versions[key] = append(versions[key], ov)
	}
	rows := make([]OperatorRow, 0, len(s.Operators))
	for _, o := range s.Operators {
		key := o.Namespace + "/" + o.Name
		row := OperatorRow{Namespace: o.Namespace, Name: o.Name, Link: OperatorHref(o.Namespace, o.Name), Instances: instancesOf[key]}
		ovs := versions[key]
		slices.SortFunc(ovs, func(a, b kudov1beta1.OperatorVersion) int { return strings.Compare(a.Name, b.Name) })
		for _, ov := range ovs {
			row.Versions = append(row.Versions, Link{Text: versionText(&ov), Href: OperatorVersionHref(ov.Namespace, ov.Name)})
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b OperatorRow) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return rows
}

func versionText(ov *kudov1beta1.OperatorVersion) string {
	if ov.Spec.AppVersion != "" {
		return ov.Spec.AppVersion + "-" + ov.Spec.Version
	}
	return ov.Spec.Version
}

func rolloutRow(r *kudov1alpha1.Rollout) RolloutRow {
	row := RolloutRow{Namespace: r.Namespace, Name: r.Name, Link: RolloutHref(r.Namespace, r.Name), Operator: r.Spec.Operator,
		Target: r.Spec.OperatorVersion,
		Progress: fmt.Sprintf("%d/%d updated, wave %d of %d", r.Status.Updated, r.Status.Total,
			min(int(r.Status.Current)+1, len(r.Status.Waves)), len(r.Status.Waves)),
		Message: r.Status.Message, State: "Progressing"}
	// The Ready condition says what the rollout does and why it stopped, as
	// kubectl kudo rollout status prints it.
	if ready := meta.FindStatusCondition(r.Status.Conditions, kudov1beta1.ReadyCondition); ready != nil && ready.Message != "" {
		row.Message = ready.Message
	}
	switch {
	case meta.IsStatusConditionTrue(r.Status.Conditions, kudov1alpha1.RolloutComplete):
		row.State = "Complete"
	case meta.IsStatusConditionTrue(r.Status.Conditions, kudov1beta1.StalledCondition):
		row.State = "Stalled"
	case r.Spec.Paused:
		row.State = "Paused"
	}
	return row
}

// activity is the timeline: the newest events first, filtered, at most max.
func activity(events []corev1.Event, now time.Time, f Filter, max int) []EventRow {
	rows := make([]EventRow, 0, min(len(events), max))
	q := strings.ToLower(f.Query)
	for k := range events {
		e := &events[k]
		if f.EventType != "" && e.Type != f.EventType {
			continue
		}
		row := eventRow(e, now)
		if q != "" && !strings.Contains(strings.ToLower(row.Object+" "+row.Reason+" "+row.Message), q) {
			continue
		}
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b EventRow) int { return b.Time.Compare(a.Time) })
	if len(rows) > max {
		rows = rows[:max]
	}
	return rows
}

func eventRow(e *corev1.Event, now time.Time) EventRow {
	t := e.LastTimestamp.Time
	if t.IsZero() {
		t = e.EventTime.Time
	}
	if t.IsZero() {
		t = e.CreationTimestamp.Time
	}
	o := e.InvolvedObject
	row := EventRow{Time: t, Ago: Ago(now, t), Type: e.Type, Reason: e.Reason, Message: e.Message, Count: e.Count,
		Object: o.Kind + " " + o.Namespace + "/" + o.Name}
	switch o.Kind {
	case "Instance":
		row.Link = InstanceHref(o.Namespace, o.Name)
	case "OperatorVersion":
		row.Link = OperatorVersionHref(o.Namespace, o.Name)
	case "Operator":
		row.Link = OperatorHref(o.Namespace, o.Name)
	case "Rollout":
		row.Link = RolloutHref(o.Namespace, o.Name)
	}
	return row
}

// Ago is how long before now t was, as kubectl's AGE column says it.
func Ago(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}
