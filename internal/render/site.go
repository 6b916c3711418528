package render

import (
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Site is where in an Instance's plan a task renders its templates. What the
// templates see and what KUDO records on their objects both come from it:
// the controller, the preview, package verify and the golden files render
// through the same two methods.
type Site struct {
	OperatorVersion *kudov1beta1.OperatorVersion
	Instance        string
	Namespace       string
	Plan            string
	Phase           string
	Step            string
	PlanUID         types.UID
	// Revision numbers the plan run among the Instance's
	// (status.revisions), from 1; 0 when unknown. The first installs a Helm
	// task's chart, a later one upgrades it.
	Revision int64
	// Params are the parameter values as templates see them (params.Values).
	Params map[string]any
	// Shard is the manager shard of the Instance (its sharding.kudo.dev/key
	// label), which its objects carry so that only that shard's manager
	// caches them; "" for an Instance of the unsharded manager.
	Shard string
	// Owner, the Instance, becomes the controller owner of namespaced
	// objects; nil offline.
	Owner *metav1.OwnerReference
	// Remote says that the objects live in another cluster than the
	// Instance (its spec.kubeConfig), where no owner reference can name it.
	Remote bool
	// Limits bound each render at the site; none set: DefaultLimits.
	Limits Limits
}

// Variables are what the templates see at the site.
func (s *Site) Variables() Variables {
	ov := s.OperatorVersion
	return Variables{
		Params: s.Params, Pipes: PipeNames(ov, s.Instance),
		Name: s.Instance, Namespace: s.Namespace,
		// As KUDO: .OperatorVersion is the version (0.1.0), not the object's name.
		OperatorName: ov.Spec.Operator.Name, OperatorVersion: ov.Spec.Version, AppVersion: ov.Spec.AppVersion,
		PlanName: s.Plan, PhaseName: s.Phase, StepName: s.Step,
	}
}

// Metadata is what KUDO records on the objects rendered at the site.
func (s *Site) Metadata() Metadata {
	ov := s.OperatorVersion
	return Metadata{
		InstanceName: s.Instance, Namespace: s.Namespace, OperatorName: ov.Spec.Operator.Name, OperatorVersion: ov.Spec.Version,
		PlanName: s.Plan, PhaseName: s.Phase, StepName: s.Step, PlanUID: s.PlanUID, Shard: s.Shard, Owner: s.Owner,
		Remote: s.Remote,
	}
}

// PipeNames are the names of the objects Pipe tasks store their files in,
// by key: <instance>.<plan>.<phase>.<step>.<task>.<key>, lower case, as KUDO
// names them.
func PipeNames(ov *kudov1beta1.OperatorVersion, instance string) map[string]string {
	tasks := ov.Spec.TasksByName()
	names := map[string]string{}
	for planName, plan := range ov.Spec.Plans {
		for at, step := range plan.Steps() {
			for _, taskName := range step.Tasks {
				t := tasks[taskName]
				if t == nil || t.Kind != kudov1beta1.PipeTaskKind {
					continue
				}
				for _, p := range t.Spec.Pipe {
					names[p.Key] = DNSName(strings.Join([]string{instance, planName, at.Phase.Name, step.Name, t.Name, p.Key}, "."))
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
