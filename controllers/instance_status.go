package controllers

import (
	"time"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// progressInterval is how often, at most, the progress of a running plan is
// written. The start of a run, its end, its errors and a new spec are written
// at once; in between, the messages of the steps change with every status
// change of the objects they wait for, and writing each costs more API
// requests than the plan's own applies.
const progressInterval = 2 * time.Second

// sameStepStatuses: no phase or step of the run changed status. A step that
// completed is written at once, not held back as progress: the reconcile that
// the next step's own changes wake (a Delete's, say) must not run the
// completed step again from the stored status — a Job would run twice.
func sameStepStatuses(a, b *kudov1beta1.PlanStatus) bool {
	if len(a.Phases) != len(b.Phases) {
		return false
	}
	for i := range a.Phases {
		pa, pb := &a.Phases[i], &b.Phases[i]
		if pa.Status != pb.Status || len(pa.Steps) != len(pb.Steps) {
			return false
		}
		for j := range pa.Steps {
			if pa.Steps[j].Status != pb.Steps[j].Status {
				return false
			}
		}
	}
	return true
}

// progressWait tells how long to hold back the status of i when, against the
// stored status before, all that changed is the progress of the same running
// plan — the messages of its steps, not their statuses — last written less
// than progressInterval ago. Held back, the status is
// written by the reconcile due after the wait, if the plan has not moved on.
func progressWait(before, i *kudov1beta1.Instance, now time.Time) time.Duration {
	stored, current := before.Status.ActivePlan, i.Status.ActivePlan
	if stored == nil || current == nil || stored.Name != current.Name ||
		stored.Status != kudov1beta1.ExecutionInProgress || current.Status != kudov1beta1.ExecutionInProgress ||
		before.Status.ObservedGeneration != i.Generation {
		return 0
	}
	storedRun, run := before.Status.PlanStatus[stored.Name], i.Status.PlanStatus[current.Name]
	if storedRun.UID != run.UID || storedRun.LastUpdatedTimestamp == nil || !sameStepStatuses(&storedRun, &run) {
		return 0
	}
	return max(0, storedRun.LastUpdatedTimestamp.Add(progressInterval).Sub(now))
}
