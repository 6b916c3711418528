package engine

import (
	"maps"
	"slices"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// RanByKUDO reports whether KUDO ran the Instance before kudo-ng took over:
// its plans have run, and nothing of kudo-ng's records what with. KUDO kept
// no such record (its webhook compared the old and new Instance), and
// kudo-ng writes one whenever it starts a plan.
func RanByKUDO(i *kudov1beta1.Instance) bool {
	if i.Status.AppliedOperatorVersion != "" {
		return false
	}
	for _, ps := range i.Status.PlanStatus {
		if hasRun(ps) {
			return true
		}
	}
	return false
}

func hasRun(ps kudov1beta1.PlanStatus) bool {
	return ps.Status != "" && ps.Status != kudov1beta1.ExecutionNeverRun
}

// AdoptFromKUDO takes over an Instance KUDO ran as it is, so that switching
// runs nothing: its spec becomes the one its plans ran with (parameters as
// NextPlan compares them), so no parameter looks changed; the plan KUDO
// left running becomes the active one and goes on from its steps'
// statuses; otherwise the plan that ended last is, completed or failed, and
// a failed one stays failed until a user acts. Its first revision records
// that state. It returns the active plan.
func AdoptFromKUDO(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion, parameters map[string]string) string {
	active := ""
	for _, name := range slices.Sorted(maps.Keys(i.Status.PlanStatus)) {
		ps := i.Status.PlanStatus[name]
		if ps.Status.IsRunning() {
			// KUDO ran one plan at a time.
			active = name
			break
		}
		if hasRun(ps) && (active == "" || laterThan(ps, i.Status.PlanStatus[active])) {
			active = name
		}
	}
	ps := i.Status.PlanStatus[active]
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: active, Status: ps.Status}
	i.Status.AppliedOperatorVersion = ov.Name
	i.Status.AppliedOperatorVersionDigest = OperatorVersionDigest(ov)
	i.Status.AppliedGeneration = i.Generation
	i.Status.AppliedParameters = maps.Clone(parameters)
	if len(i.Status.Revisions) == 0 {
		i.Status.Revisions = []kudov1beta1.Revision{{
			Number: 1, Plan: active, UID: ps.UID, Status: ps.Status, StartedAt: ps.LastUpdatedTimestamp,
			OperatorVersion: ov.Name, Parameters: maps.Clone(parameters),
		}}
	}
	return active
}

// laterThan: a's run was last updated after b's.
func laterThan(a, b kudov1beta1.PlanStatus) bool {
	switch {
	case a.LastUpdatedTimestamp == nil:
		return false
	case b.LastUpdatedTimestamp == nil:
		return true
	}
	return a.LastUpdatedTimestamp.After(b.LastUpdatedTimestamp.Time)
}
