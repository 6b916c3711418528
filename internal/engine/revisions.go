package engine

import (
	"maps"
	"slices"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
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
