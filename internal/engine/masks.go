package engine

import (
	"maps"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

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
