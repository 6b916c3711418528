package engine

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// The decisions about an Instance's plans, as plain functions of the
// Instance and its OperatorVersion: the controller, the admission webhook
// and the CLI ask them here.

// ActivePlan returns the plan the status says runs, and whether it still
// runs: it is defined and has not ended.
func ActivePlan(i *kudov1beta1.Instance, plans map[string]kudov1beta1.Plan) (string, bool) {
	a := i.Status.ActivePlan
	if a == nil {
		return "", false
	}
	ps, ok := i.Status.PlanStatus[a.Name]
	_, defined := plans[a.Name]
	return a.Name, ok && defined && ps.Status.IsRunning()
}

// NextPlan picks the plan the spec asks for, when none runs: an explicit
// spec.planExecution with a new uid; deploy for a new Instance; the upgrade
// plan for a new OperatorVersion; the plan changed parameters trigger.
// parameters are the Instance's values as the status records them
// (sensitive ones masked), compared with the last plan's. It returns ""
// when the spec asks for nothing; newUID makes the uid of a run
// spec.planExecution did not ask for.
func NextPlan(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion, parameters map[string]string,
	newUID func() types.UID) (string, types.UID, error) {
	plans := ov.Spec.Plans
	if pe := i.Spec.PlanExecution; pe.PlanName != "" && pe.UID != "" && i.Status.PlanStatus[pe.PlanName].UID != pe.UID {
		if _, ok := plans[pe.PlanName]; !ok {
			return "", "", fmt.Errorf("spec.planExecution asks for plan %q, which OperatorVersion %s does not define", pe.PlanName, ov.Name)
		}
		return pe.PlanName, pe.UID, nil
	}
	switch {
	case i.Status.AppliedOperatorVersion == "":
		if _, ok := plans[kudov1beta1.DeployPlanName]; !ok {
			return "", "", fmt.Errorf("OperatorVersion %s has no deploy plan", ov.Name)
		}
		return kudov1beta1.DeployPlanName, newUID(), nil
	case i.Status.AppliedOperatorVersion != ov.Name:
		return PlanForUpgrade(plans), newUID(), nil
	}
	changed := ChangedParameters(i.Status.AppliedParameters, parameters)
	if len(changed) == 0 {
		return "", "", nil
	}
	plan, err := PlanForParameters(&ov.Spec, changed)
	if err != nil || plan == "" {
		return "", "", err
	}
	return plan, newUID(), nil
}

// EnsurePlanStatuses gives every plan of the OperatorVersion a status tree,
// NEVER_RUN until it runs, as KUDO does.
func EnsurePlanStatuses(status *kudov1beta1.InstanceStatus, plans map[string]kudov1beta1.Plan) {
	if status.PlanStatus == nil {
		status.PlanStatus = map[string]kudov1beta1.PlanStatus{}
	}
	for name, plan := range plans {
		if _, ok := status.PlanStatus[name]; !ok {
			status.PlanStatus[name] = NewPlanStatus(name, &plan)
		}
	}
}

// StartPlan makes the plan the active one with a fresh status tree, and
// records the spec it runs with: the OperatorVersion, the parameters as
// NextPlan compares them, the Secret keys they come from.
func StartPlan(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion, name string, uid types.UID, now time.Time,
	parameters map[string]string) {
	plan := ov.Spec.Plans[name]
	ps := Start(name, &plan, uid, now)
	i.Status.PlanStatus[name] = ps
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: name, Status: ps.Status}
	i.Status.AppliedOperatorVersion = ov.Name
	i.Status.AppliedGeneration = i.Generation
	revisions := supersede(Revisions(&i.Status))
	number := int64(1)
	if len(revisions) > 0 {
		number = revisions[len(revisions)-1].Number + 1
	}
	revisions = append(revisions, kudov1beta1.Revision{
		Number: number, Plan: name, UID: uid, Status: kudov1beta1.ExecutionInProgress, StartedAt: ps.StartedAt,
		OperatorVersion: ov.Name, Parameters: maps.Clone(parameters), SecretParameters: maps.Clone(i.Spec.SecretParameters),
	})
	i.Status.AppliedParameters = maps.Clone(parameters)
	i.Status.Revisions = compactRevisions(revisions, parameters)
}

// supersede ends the revisions whose runs have not ended: a run starting
// replaces them (the running plan started over, or cleanup in its place), and
// nothing would end them otherwise.
func supersede(revisions []kudov1beta1.Revision) []kudov1beta1.Revision {
	for k := range revisions {
		if !revisions[k].Status.IsTerminal() {
			revisions[k].Status = kudov1beta1.ExecutionSuperseded
		}
	}
	return revisions
}

// UpdateRevision records the status of a plan run in its revision.
func UpdateRevision(i *kudov1beta1.Instance, ps *kudov1beta1.PlanStatus) {
	for k := range i.Status.Revisions {
		if r := &i.Status.Revisions[k]; r.UID == ps.UID && r.Plan == ps.Name {
			r.Status = ps.Status
		}
	}
}

// RollbackTarget is the revision a rollback returns to: the one numbered
// number, or, when number is 0, the newest completed one whose spec is not
// the Instance's; sensitive names the parameters whose values revisions
// record masked.
func RollbackTarget(i *kudov1beta1.Instance, number int64, sensitive map[string]bool) (*kudov1beta1.Revision, error) {
	// Copies: choosing a target changes nothing of the Instance.
	revisions := supersede(Revisions(&i.Status))
	if len(revisions) == 0 {
		return nil, fmt.Errorf("no plan of Instance %s has run yet: it has no revisions", i.Name)
	}
	for k := len(revisions) - 1; k >= 0; k-- {
		r := &revisions[k]
		switch {
		case number != 0 && r.Number == number:
			return r, nil
		case number == 0 && r.Status == kudov1beta1.ExecutionComplete && !ranSpec(r, i, sensitive):
			return r, nil
		}
	}
	if number != 0 {
		return nil, fmt.Errorf("no revision %d of Instance %s: it keeps revisions %d to %d",
			number, i.Name, revisions[0].Number, revisions[len(revisions)-1].Number)
	}
	return nil, fmt.Errorf("no completed revision of Instance %s has another OperatorVersion or other parameters than it has now", i.Name)
}

// ranSpec reports whether a revision ran the Instance's spec: its
// OperatorVersion, its values (masked as the revision records them), its
// Secret keys; whether a Secret's data changed since is not known here. A
// sensitive value it cannot compare (RecordedSpec) counts as another.
func ranSpec(r *kudov1beta1.Revision, i *kudov1beta1.Instance, sensitive map[string]bool) bool {
	if r.OperatorVersion != i.Spec.OperatorVersion.Name || !maps.Equal(r.SecretParameters, i.Spec.SecretParameters) {
		return false
	}
	values := maps.Clone(r.Parameters)
	for name := range r.SecretParameters {
		delete(values, name)
	}
	spec, known := RecordedSpec(i, sensitive)
	return known && maps.Equal(values, spec)
}

// RecordedSpec are the values of the Instance's spec.parameters as the
// status records them, sensitive ones masked, for whoever cannot make a
// mask (only the manager holds the key): the masks are appliedParameters',
// so known is false when a sensitive value is set and appliedParameters do
// not hold the spec's values (AppliedGeneration). The values its Secret keys
// give are the Secrets', not the spec's, and left out.
func RecordedSpec(i *kudov1beta1.Instance, sensitive map[string]bool) (recorded map[string]string, known bool) {
	recorded = map[string]string{}
	for name, v := range i.Spec.Parameters {
		if _, fromSecret := i.Spec.SecretParameters[name]; fromSecret {
			continue
		}
		if sensitive[name] {
			if i.Status.AppliedGeneration != i.Generation {
				return nil, false
			}
			v = i.Status.AppliedParameters[name]
		}
		recorded[name] = v
	}
	return recorded, true
}

// RekeyMasks makes again with the current key the masks the status records
// (appliedParameters, revisions) that another key made of the values the
// Instance has now (params.Rekey), so that a rotated key can be dropped;
// it reports whether it made any.
func RekeyMasks(status *kudov1beta1.InstanceStatus, values map[string]string, keys params.MaskKeys) bool {
	rekeyed := false
	rekey := func(recorded map[string]string) map[string]string {
		out := params.Rekey(recorded, values, keys)
		rekeyed = rekeyed || !maps.Equal(out, recorded)
		return out
	}
	status.AppliedParameters = rekey(status.AppliedParameters)
	for k := range status.Revisions {
		r := &status.Revisions[k]
		r.Parameters, r.ChangedParameters = rekey(r.Parameters), rekey(r.ChangedParameters)
	}
	return rekeyed
}

// PlanNames lists the plans, sorted, for messages.
func PlanNames(plans map[string]kudov1beta1.Plan) []string {
	names := make([]string, 0, len(plans))
	for n := range plans {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Problem is why an object of a completed plan keeps its Instance from
// being Ready: a Reason of the Instance's, and a message naming the object.
type Problem struct {
	Reason  string
	Message string
}

// severity orders the reasons of problems: the Ready condition carries the
// gravest.
var severity = map[string]int{
	kudov1beta1.DriftFightReason: 0, kudov1beta1.MissingReason: 1, kudov1beta1.ResourceNotReadyReason: 2, kudov1beta1.DriftedReason: 3,
}

// Readiness is the kstatus trio an object shows: Ready with this status,
// Stalled while Stalled holds, Reconciling while Ready is Unknown and it is
// not stalled.
type Readiness struct {
	Ready   metav1.ConditionStatus
	Stalled bool
	Reason  string
	Message string
}

// InstanceReadiness derives an Instance's conditions from its plans and,
// once the last plan completed, from what it applied (problems, as KUDO
// judged its workloads): Ready while nothing runs, the last plan completed
// and every object is there, as applied and healthy; Reconciling, naming
// what the running plan waits for; Stalled after a fatal error, a spec that
// selects no valid plan (selectionErr) or a fight over an object.
func InstanceReadiness(i *kudov1beta1.Instance, selectionErr error, problems []Problem) Readiness {
	if selectionErr != nil {
		return Readiness{metav1.ConditionFalse, true, kudov1beta1.InvalidRequestReason, selectionErr.Error()}
	}
	a := i.Status.ActivePlan
	if a == nil {
		return Readiness{metav1.ConditionUnknown, false, kudov1beta1.PlanPendingReason, "No plan has run yet"}
	}
	ps := i.Status.PlanStatus[a.Name]
	switch ps.Status {
	case kudov1beta1.ExecutionComplete:
		if len(problems) > 0 {
			return notReady(problems)
		}
		return Readiness{metav1.ConditionTrue, false, kudov1beta1.ResourcesReadyReason, fmt.Sprintf("Plan %s is complete", a.Name)}
	case kudov1beta1.ExecutionCancelled:
		return Readiness{metav1.ConditionFalse, false, kudov1beta1.PlanCancelledReason, fmt.Sprintf("Plan %s was cancelled", a.Name)}
	case kudov1beta1.ExecutionFatalError:
		// KUDO leaves Ready Unknown after a fatal error; Stalled says why.
		return Readiness{metav1.ConditionUnknown, true, kudov1beta1.PlanFailedReason, fmt.Sprintf("Plan %s failed: %s", a.Name, ps.Message)}
	default:
		return Readiness{metav1.ConditionUnknown, false, kudov1beta1.PlanInProgressReason,
			fmt.Sprintf("Plan %s is %s: %s", a.Name, ps.Status, blocking(&ps))}
	}
}

// MaxProblemsMessage bounds the problems a Ready message lists: a package of
// hundreds of missing objects would otherwise pass the 32,768 characters a
// condition's message may hold, and fail the whole status patch.
const MaxProblemsMessage = 4096

// MaxStepMessage bounds a step's message, which a phase's and a plan's
// repeat: an error may quote a whole rendered template.
const MaxStepMessage = 4096

// notReady: Ready False for the gravest problem, the gravest first in the
// message, as many as MaxProblemsMessage holds and a count of the others.
func notReady(problems []Problem) Readiness {
	problems = slices.Clone(problems)
	slices.SortStableFunc(problems, func(a, b Problem) int { return severity[a.Reason] - severity[b.Reason] })
	messages := make([]string, len(problems))
	for n, p := range problems {
		messages[n] = p.Message
	}
	reason := problems[0].Reason
	return Readiness{metav1.ConditionFalse, reason == kudov1beta1.DriftFightReason, reason, JoinAtMost(messages, MaxProblemsMessage)}
}

// JoinAtMost joins messages with ", " into at most limit bytes and a count
// of those it left out ("… and 650 more"); the first always shows, cut if it
// alone is longer.
func JoinAtMost(messages []string, limit int) string {
	var b strings.Builder
	for n, m := range messages {
		more := fmt.Sprintf(" … and %d more", len(messages)-n)
		if n > 0 && b.Len()+len(", ")+len(m)+len(more) > limit {
			b.WriteString(more)
			break
		}
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(TruncateMessage(m, limit))
	}
	return b.String()
}

// TruncateMessage cuts s to at most limit bytes, on a rune boundary, saying
// that it did.
func TruncateMessage(s string, limit int) string {
	const cut = " … (cut)"
	if len(s) <= limit {
		return s
	}
	end := max(limit-len(cut), 0)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + cut
}

// blocking names what a running plan waits for: the first unfinished step
// and its message.
func blocking(ps *kudov1beta1.PlanStatus) string {
	for at, step := range ps.Steps() {
		if step.Status == kudov1beta1.ExecutionInProgress || step.Status == kudov1beta1.ExecutionError {
			if step.Message == "" {
				return fmt.Sprintf("step %s/%s is %s", at.Phase.Name, step.Name, step.Status)
			}
			return fmt.Sprintf("step %s/%s: %s", at.Phase.Name, step.Name, step.Message)
		}
	}
	return "starting"
}
