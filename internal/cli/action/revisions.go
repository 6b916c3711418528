package action

import (
	"maps"
	"slices"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// DescribeParameters lists the parameters a revision ran with, sorted by
// name: values (sensitive ones as their masks), and Secret keys as kubectl
// kudo takes them.
func DescribeParameters(r *kudov1beta1.Revision) string {
	if len(r.Parameters) == 0 && len(r.SecretParameters) == 0 {
		return "(defaults)"
	}
	described := params.Declared(r.Parameters, r.SecretParameters)
	pairs := make([]string, 0, len(described))
	for _, name := range slices.Sorted(maps.Keys(described)) {
		pairs = append(pairs, name+"="+described[name])
	}
	return strings.Join(pairs, ",")
}
