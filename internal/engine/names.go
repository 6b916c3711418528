package engine

import (
	"regexp"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// PipeNames are the names of the objects Pipe tasks store their files in,
// by key: <instance>.<plan>.<phase>.<step>.<task>.<key>, lower case, as KUDO
// names them.
func PipeNames(ov *kudov1beta1.OperatorVersion, instance string) map[string]string {
	tasks := map[string]*kudov1beta1.Task{}
	for i := range ov.Spec.Tasks {
		tasks[ov.Spec.Tasks[i].Name] = &ov.Spec.Tasks[i]
	}
	names := map[string]string{}
	for planName, plan := range ov.Spec.Plans {
		for _, phase := range plan.Phases {
			for _, step := range phase.Steps {
				for _, taskName := range step.Tasks {
					t := tasks[taskName]
					if t == nil || t.Kind != kudov1beta1.PipeTaskKind {
						continue
					}
					for _, p := range t.Spec.Pipe {
						names[p.Key] = DNSName(strings.Join([]string{instance, planName, phase.Name, step.Name, t.Name, p.Key}, "."))
					}
				}
			}
		}
	}
	return names
}

var notDNS = regexp.MustCompile(`[^a-z0-9.-]+`)

// DNSName makes a valid object name of s: lower case, only letters, digits,
// dots and dashes, at most 63 characters (the limit of pod names).
func DNSName(s string) string {
	s = notDNS.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-.")
}
