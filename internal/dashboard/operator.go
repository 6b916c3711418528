package dashboard

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/trust"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// OperatorPage is the page of an Operator: what it is and its versions.
type OperatorPage struct {
	Namespace, Name string
	Found           bool
	Description     string
	URL             string
	Maintainers     []string
	KudoVersion     string
	Versions        []OperatorVersionRow
}

// OperatorVersionRow is a version of an Operator and how many Instances
// run it.
type OperatorVersionRow struct {
	Link      Link
	Version   string
	Verified  string
	Instances int
}

// OperatorVersionPage is the page of an OperatorVersion.
type OperatorVersionPage struct {
	Namespace, Name string
	Found           bool
	Operator        Link
	Version         string
	AppVersion      string
	// Typed is the kind it serves (Kind.group/version), "" when none.
	Typed string
	// Package is the OCI reference by digest it was installed from.
	Package string
	// Verified is the Verified condition: who signed it, or why not.
	Verified   *metav1.Condition
	Parameters []ParameterDefinition
	Plans      []PlanTree
	Instances  []Link
}

// ParameterDefinition is a parameter an OperatorVersion declares.
type ParameterDefinition struct {
	Name, Description, Default, Trigger, Type string
	Required, Immutable, Sensitive            bool
}

// OperatorOf is the page of the Operator ns/name.
func OperatorOf(s *Snapshot, ns, name string) *OperatorPage {
	p := &OperatorPage{Namespace: ns, Name: name}
	if o := find(s.Operators, ns, name); o != nil {
		p.Found, p.Description, p.URL, p.KudoVersion = true, o.Spec.Description, o.Spec.URL, o.Spec.KudoVersion
		for _, m := range o.Spec.Maintainers {
			if m != nil {
				p.Maintainers = append(p.Maintainers, strings.TrimSpace(m.Name+" "+angled(m.Email)))
			}
		}
	}
	running := map[string]int{}
	for k := range s.Instances {
		i := &s.Instances[k]
		running[cmp.Or(i.Spec.OperatorVersion.Namespace, i.Namespace)+"/"+i.Spec.OperatorVersion.Name]++
	}
	for k := range s.OperatorVersions {
		ov := &s.OperatorVersions[k]
		if ov.Namespace != ns || ov.Spec.Operator.Name != name {
			continue
		}
		row := OperatorVersionRow{Link: Link{Text: ov.Name, Href: OperatorVersionHref(ov.Namespace, ov.Name)},
			Version: versionText(ov), Instances: running[ov.Namespace+"/"+ov.Name], Verified: "not covered by a TrustPolicy"}
		if c := meta.FindStatusCondition(ov.Status.Conditions, trust.VerifiedCondition); c != nil {
			row.Verified = c.Reason
		}
		p.Versions = append(p.Versions, row)
	}
	slices.SortFunc(p.Versions, func(a, b OperatorVersionRow) int { return strings.Compare(a.Link.Text, b.Link.Text) })
	return p
}

func angled(email string) string {
	if email == "" {
		return ""
	}
	return "<" + email + ">"
}

// OperatorVersionOf is the page of the OperatorVersion ns/name.
func OperatorVersionOf(s *Snapshot, ns, name string) *OperatorVersionPage {
	p := &OperatorVersionPage{Namespace: ns, Name: name}
	ov := find(s.OperatorVersions, ns, name)
	if ov == nil {
		return p
	}
	p.Found, p.Version, p.AppVersion = true, ov.Spec.Version, ov.Spec.AppVersion
	p.Operator = Link{Text: ov.Spec.Operator.Name, Href: OperatorHref(ns, ov.Spec.Operator.Name)}
	p.Package = ov.Annotations[kudov1beta1.PackageDigestAnnotation]
	p.Verified = meta.FindStatusCondition(ov.Status.Conditions, trust.VerifiedCondition)
	if ov.Spec.TypedAPI != nil {
		if names, err := typedapi.NamesOf(ov.Spec.Operator.Name, ov.Spec.TypedAPI); err == nil {
			p.Typed = fmt.Sprintf("%s.%s/%s", names.Kind, names.Group, typedapi.APIVersionOf(ov))
		}
	}
	for _, def := range ov.Spec.Parameters {
		pd := ParameterDefinition{Name: def.Name, Description: def.Description, Trigger: def.Trigger, Type: cmp.Or(string(def.Type), "string"),
			Required: def.Required != nil && *def.Required, Immutable: def.Immutable != nil && *def.Immutable, Sensitive: def.IsSensitive()}
		if def.Default != nil {
			pd.Default = *def.Default
			if pd.Sensitive {
				pd.Default = Masked
			}
		}
		p.Parameters = append(p.Parameters, pd)
	}
	for _, plan := range slices.Sorted(maps.Keys(ov.Spec.Plans)) {
		p.Plans = append(p.Plans, planTree(plan, ov.Spec.Plans[plan], kudov1beta1.PlanStatus{}, false, s.Now))
	}
	for k := range s.Instances {
		i := &s.Instances[k]
		if i.Spec.OperatorVersion.Name == name && cmp.Or(i.Spec.OperatorVersion.Namespace, i.Namespace) == ns {
			p.Instances = append(p.Instances, Link{Text: i.Namespace + "/" + i.Name, Href: InstanceHref(i.Namespace, i.Name)})
		}
	}
	slices.SortFunc(p.Instances, func(a, b Link) int { return strings.Compare(a.Text, b.Text) })
	return p
}

// RolloutPage is the page of a Rollout: its waves as they go.
type RolloutPage struct {
	Namespace, Name string
	Found           bool
	Row             RolloutRow
	Strategy        string
	Conditions      []metav1.Condition
	Waves           []WaveRow
}

// WaveRow is a wave of a Rollout.
type WaveRow struct {
	Number    int
	Phase     kudov1alpha1.WavePhase
	Instances []Link
	Took      string
	Current   bool
}

// RolloutOf is the page of the Rollout ns/name.
func RolloutOf(s *Snapshot, ns, name string) *RolloutPage {
	p := &RolloutPage{Namespace: ns, Name: name}
	if r := s.Rollout(ns, name); r != nil {
		p.Found, p.Row, p.Conditions = true, rolloutRow(r), r.Status.Conditions
		st := r.Spec.Strategy
		waves := make([]string, 0, len(st.Waves))
		for _, w := range st.Waves {
			waves = append(waves, w.String())
		}
		p.Strategy = fmt.Sprintf("waves [%s], maxParallel %d, maxUnavailable %d, bake %s, on failure %s",
			strings.Join(waves, ", "), st.MaxParallel, st.MaxUnavailable, st.BakeTime.Duration, cmp.Or(st.OnFailure, kudov1alpha1.Pause))
		for n, w := range r.Status.Waves {
			row := WaveRow{Number: n + 1, Phase: w.Phase, Current: n == int(r.Status.Current)}
			for _, i := range w.Instances {
				row.Instances = append(row.Instances, Link{Text: i, Href: InstanceHref(ns, i)})
			}
			if w.StartedAt != nil {
				end := s.Now
				if w.CompletedAt != nil {
					end = w.CompletedAt.Time
				}
				row.Took = end.Sub(w.StartedAt.Time).Round(time.Second).String()
			}
			p.Waves = append(p.Waves, row)
		}
	}
	return p
}
