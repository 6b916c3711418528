package engine

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// Revisions are copies of the Instance's revisions with the parameters each
// ran with in full, in Parameters: the status keeps of each only how its
// values differ from the newest run's (status.appliedParameters).
func Revisions(status *kudov1beta1.InstanceStatus) []kudov1beta1.Revision {
	// Revisions recorded whole, before kudo-ng kept differences, are all
	// whole: one without parameters then ran with none.
	whole := slices.ContainsFunc(status.Revisions, func(r kudov1beta1.Revision) bool { return r.Parameters != nil })
	out := make([]kudov1beta1.Revision, len(status.Revisions))
	for k, r := range status.Revisions {
		out[k] = *r.DeepCopy()
		if whole {
			continue
		}
		values := maps.Clone(status.AppliedParameters)
		if values == nil {
			values = map[string]string{}
		}
		maps.Copy(values, r.ChangedParameters)
		for _, name := range r.UnsetParameters {
			delete(values, name)
		}
		if len(values) == 0 {
			values = nil
		}
		out[k].Parameters, out[k].ChangedParameters, out[k].UnsetParameters = values, nil, nil
	}
	return out
}

// compactRevisions records whole revisions (as Revisions gives them) as
// their differences from applied, the newest run's values, and keeps the
// newest MaxRevisions of them whose differences take at most
// MaxRevisionBytes; the newest is always kept.
func compactRevisions(revisions []kudov1beta1.Revision, applied map[string]string) []kudov1beta1.Revision {
	revisions = revisions[max(0, len(revisions)-kudov1beta1.MaxRevisions):]
	budget := kudov1beta1.MaxRevisionBytes
	first := len(revisions)
	for k := len(revisions) - 1; k >= 0; k-- {
		r := &revisions[k]
		r.ChangedParameters, r.UnsetParameters = differences(r.Parameters, applied)
		r.Parameters = nil
		budget -= differenceBytes(r)
		if budget < 0 && k < len(revisions)-1 {
			break
		}
		first = k
	}
	return revisions[first:]
}

// differences are how values differ from applied: the values that are not
// applied's, and the names applied sets and values do not.
func differences(values, applied map[string]string) (changed map[string]string, unset []string) {
	for name, v := range values {
		if now, ok := applied[name]; !ok || now != v {
			if changed == nil {
				changed = map[string]string{}
			}
			changed[name] = v
		}
	}
	for name := range applied {
		if _, ok := values[name]; !ok {
			unset = append(unset, name)
		}
	}
	slices.Sort(unset)
	return changed, unset
}

func differenceBytes(r *kudov1beta1.Revision) int {
	n := 0
	for name, v := range r.ChangedParameters {
		n += len(name) + len(v)
	}
	for _, name := range r.UnsetParameters {
		n += len(name)
	}
	return n
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

// RestoredValues are the spec.parameters of the revision: its values, but
// those taken from Secrets, which it names instead. A sensitive value the
// revision recorded masked is the Instance's own, when that is the one it
// ran with; kudo-ng keeps no other. Only the manager can make a mask: the
// mask of the Instance's value is the one the status recorded
// (RecordedSpec), when it recorded the Instance's spec.
func RestoredValues(i *kudov1beta1.Instance, target *kudov1beta1.Revision, sensitive map[string]bool) (map[string]string, error) {
	spec, known := RecordedSpec(i, sensitive)
	values := map[string]string{}
	for name, v := range target.Parameters {
		if _, fromSecret := target.SecretParameters[name]; fromSecret {
			continue
		}
		if params.IsMasked(v) {
			now, set := i.Spec.Parameters[name]
			if set && !known {
				return nil, fmt.Errorf("parameter %s is sensitive, and the Instance's status does not tell yet whether "+
					"revision %d ran with the value it has: the last plan did not start from its spec as it is now "+
					"(a plan started from an earlier one runs, or the manager has not taken this one yet); "+
					"roll back once no plan runs, or set it again with kubectl kudo update -p %s=VALUE and roll back then",
					name, target.Number, name)
			}
			if !set || spec[name] != v {
				return nil, fmt.Errorf("parameter %s is sensitive: revision %d ran with another value than the Instance has, "+
					"which kudo-ng does not keep; set it again with kubectl kudo update -p %s=VALUE (or keep it in a Secret: "+
					"-p %s=%sSECRET/KEY) and roll back then", name, target.Number, name, name, params.SecretPrefix)
			}
			v = now
		}
		values[name] = v
	}
	return values, nil
}

// CheckImmutableKept refuses a rollback that would change an immutable
// parameter of the current OperatorVersion, as admission would.
func CheckImmutableKept(current *kudov1beta1.OperatorVersion, i *kudov1beta1.Instance, values map[string]string,
	target *kudov1beta1.Revision) error {
	now, then := params.Declared(i.Spec.Parameters, i.Spec.SecretParameters), params.Declared(values, target.SecretParameters)
	for _, p := range current.Spec.Parameters {
		if !ptr.Deref(p.Immutable, false) {
			continue
		}
		before, after := now[p.Name], then[p.Name]
		if before == after {
			continue
		}
		if p.IsSensitive() {
			return fmt.Errorf("parameter %s is immutable: revision %d ran with another value than the Instance has, "+
				"and rollback cannot change it", p.Name, target.Number)
		}
		return fmt.Errorf("parameter %s is immutable: revision %d ran with %q, the Instance has %q, and rollback cannot change it",
			p.Name, target.Number, after, before)
	}
	return nil
}
