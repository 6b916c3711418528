// Package rollout decides, as plain functions, how a new OperatorVersion
// reaches a fleet of Instances: which wave each belongs to (Waves), and what
// the rollout does next given what the Instances of the current wave and
// the fleet's readiness say (Next). The rollout controller gathers the
// Instances, calls them, and acts.
package rollout

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Waves splits the fleet's members, in the order given, into waves of the
// sizes given: a count, or a percentage of the fleet rounded up (at least
// one). Members past the last size form a last wave; a size past the
// members left takes what is left.
func Waves(members []string, sizes []intstr.IntOrString) ([][]string, error) {
	var waves [][]string
	rest := members
	for i, size := range sizes {
		if len(rest) == 0 {
			break
		}
		n, err := intstr.GetScaledValueFromIntOrPercent(&size, len(members), true)
		if err != nil {
			return nil, fmt.Errorf("wave %d: %w", i+1, err)
		}
		if n <= 0 {
			return nil, fmt.Errorf("wave %d: size %s takes no Instance", i+1, size.String())
		}
		n = min(n, len(rest))
		waves = append(waves, rest[:n:n])
		rest = rest[n:]
	}
	if len(rest) > 0 {
		waves = append(waves, rest)
	}
	return waves, nil
}

// Wave is a wave the rollout plans: its Instances and, going cluster by
// cluster, the cluster they act on.
type Wave struct {
	Cluster   string
	Instances []string
}

// ClusterOf names the cluster an Instance acts on as spec.strategy.clusters
// does: its kubeconfig Secret's name, or the manager's own.
func ClusterOf(i *kudov1beta1.Instance) string {
	if kc := i.Spec.KubeConfig; kc != nil {
		return kc.SecretRef.Name
	}
	return kudov1alpha1.LocalCluster
}

// PlanWaves splits the rollout's fleet (Fleet), in its order, into the
// waves of its strategy: without clusters, all of it by the sizes (Waves);
// with them, each cluster's Instances by the sizes, cluster after cluster
// in their order. A fleet that is empty, or that has an Instance with no
// target version beside it, or of a cluster the strategy does not name, is
// refused: where an Instance goes is the user's to say, not a guess.
func PlanWaves(fleet []Candidate, ro *kudov1alpha1.Rollout) ([]Wave, error) {
	if len(fleet) == 0 {
		return nil, fmt.Errorf("no Instance of %s in namespace %s matches", ro.Spec.Operator, ro.Namespace)
	}
	for _, c := range fleet {
		if c.Target == nil {
			return nil, fmt.Errorf("no OperatorVersion %s of %s is installed beside Instance %s's", ro.Spec.OperatorVersion, ro.Spec.Operator,
				c.Instance.Name)
		}
	}
	strategy := &ro.Spec.Strategy
	if len(strategy.Clusters) == 0 {
		names := make([]string, len(fleet))
		for n, c := range fleet {
			names[n] = c.Instance.Name
		}
		return wavesOf("", names, strategy.Waves)
	}
	byCluster := map[string][]string{}
	for _, c := range fleet {
		cluster := ClusterOf(c.Instance)
		if !slices.Contains(strategy.Clusters, cluster) {
			return nil, fmt.Errorf("spec.strategy.clusters: Instance %s acts on cluster %s, which it does not name", c.Instance.Name, cluster)
		}
		byCluster[cluster] = append(byCluster[cluster], c.Instance.Name)
	}
	var waves []Wave
	for _, cluster := range strategy.Clusters {
		if len(byCluster[cluster]) == 0 {
			continue
		}
		w, err := wavesOf(cluster, byCluster[cluster], strategy.Waves)
		if err != nil {
			return nil, err
		}
		waves = append(waves, w...)
	}
	return waves, nil
}

func wavesOf(cluster string, names []string, sizes []intstr.IntOrString) ([]Wave, error) {
	split, err := Waves(names, sizes)
	if err != nil {
		return nil, fmt.Errorf("spec.strategy.waves: %w", err)
	}
	waves := make([]Wave, len(split))
	for n, instances := range split {
		waves[n] = Wave{Cluster: cluster, Instances: instances}
	}
	return waves, nil
}

// Member is what the rollout reads of one Instance of the current wave.
type Member struct {
	Name string
	// AtTarget: the Instance's spec points at the target OperatorVersion.
	AtTarget bool
	// Plan is the status of the plan the upgrade to the target runs, once
	// the Instance's status says it started; "" before.
	Plan kudov1beta1.ExecutionStatus
	// Ready is the Instance's Ready condition, true since ReadySince.
	Ready      bool
	ReadySince time.Time
	// Stalled is the Instance's Stalled condition: a health rule false past
	// its deadline, a fight over an object. Reason says which.
	Stalled bool
	Reason  string
}

// settled reports whether the member passed the gate: upgraded, its plan
// complete, and Ready for the bake time.
func (m *Member) settled(bake time.Duration, now time.Time) bool {
	return m.AtTarget && m.Plan == kudov1beta1.ExecutionComplete && m.Ready && !now.Before(m.ReadySince.Add(bake))
}

// failure says why the member stops the rollout, "" when it does not.
func (m *Member) failure() string {
	switch {
	case !m.AtTarget:
		return ""
	case m.Plan == kudov1beta1.ExecutionFatalError:
		return "its upgrade plan failed: " + m.Reason
	case m.Stalled:
		return "it is stalled: " + m.Reason
	}
	return ""
}

// Strategy is how the rollout moves through a wave.
type Strategy struct {
	// MaxParallel is how many Instances of a wave upgrade at once.
	MaxParallel int
	// MaxUnavailable is how many Instances of the fleet may be not Ready
	// at once before the rollout pauses.
	MaxUnavailable int
	// Bake is how long each Instance of a wave must stay Ready.
	Bake time.Duration
	// RollbackOnFailure rolls the wave's upgraded Instances back when the
	// rollout pauses for a failure.
	RollbackOnFailure bool
}

// Decision is what the rollout does next.
type Decision struct {
	// Upgrade are the members to point at the target now.
	Upgrade []string
	// Stop says the rollout stops; Failed names the member that stops it,
	// if one does, Reason why, and RollBack the upgraded members of the
	// wave to roll back.
	Stop     bool
	Failed   string
	Reason   string
	RollBack []string
	// WaveDone: every member passed the gate; the next wave may start.
	WaveDone bool
	// Waiting says what the wave waits for, and RequeueAfter when the
	// bake time of the first member still baking ends (0: a change of an
	// Instance wakes the rollout).
	Waiting      string
	RequeueAfter time.Duration
}

// Next decides the rollout's next move in a wave: pause on the first
// failure (rolling the wave back if the strategy says so), pause when more
// of the fleet than MaxUnavailable is not Ready, start the members not yet
// upgraded up to MaxParallel in flight, and end the wave when every member
// passed the gate. unavailable is how many Instances of the whole fleet are
// not Ready now.
func Next(wave []Member, s Strategy, unavailable int, now time.Time) Decision {
	for i := range wave {
		if why := wave[i].failure(); why != "" {
			d := Decision{Stop: true, Failed: wave[i].Name, Reason: why}
			if s.RollbackOnFailure {
				for j := range wave {
					if wave[j].AtTarget {
						d.RollBack = append(d.RollBack, wave[j].Name)
					}
				}
			}
			return d
		}
	}
	if unavailable > s.MaxUnavailable {
		return Decision{Stop: true, Failed: notReady(wave), Reason: fmt.Sprintf("%d Instances are not Ready, more than maxUnavailable %d",
			unavailable, s.MaxUnavailable)}
	}
	var inFlight int
	var pending, baking []string
	wake := time.Duration(math.MaxInt64)
	for i := range wave {
		m := &wave[i]
		switch {
		case !m.AtTarget:
			pending = append(pending, m.Name)
		case !m.settled(s.Bake, now):
			inFlight++
			if m.Plan == kudov1beta1.ExecutionComplete && m.Ready {
				baking = append(baking, m.Name)
				wake = min(wake, m.ReadySince.Add(s.Bake).Sub(now))
			}
		}
	}
	if len(pending) == 0 && inFlight == 0 {
		return Decision{WaveDone: true}
	}
	d := Decision{}
	// An Instance upgrading is not Ready while its plan runs: each started
	// takes one of the fleet's unavailable places.
	if room := min(s.MaxParallel-inFlight, s.MaxUnavailable-unavailable); room > 0 {
		d.Upgrade = pending[:min(room, len(pending))]
	}
	if len(baking) > 0 {
		d.RequeueAfter = wake
	}
	d.Waiting = waiting(len(pending)-len(d.Upgrade), inFlight+len(d.Upgrade)-len(baking), baking)
	return d
}

// notReady names the first upgraded member of the wave that is not Ready;
// "" when those not Ready are all outside it, or not upgraded yet.
func notReady(wave []Member) string {
	for i := range wave {
		if wave[i].AtTarget && !wave[i].Ready {
			return wave[i].Name
		}
	}
	return ""
}

// waiting says what a wave waits for, as its status shows it.
func waiting(pending, upgrading int, baking []string) string {
	var parts []string
	if upgrading > 0 {
		parts = append(parts, fmt.Sprintf("%d upgrading", upgrading))
	}
	if len(baking) > 0 {
		parts = append(parts, fmt.Sprintf("%d baking (%s)", len(baking), strings.Join(slices.Sorted(slices.Values(baking)), ", ")))
	}
	if pending > 0 {
		parts = append(parts, fmt.Sprintf("%d waiting for room", pending))
	}
	return strings.Join(parts, ", ")
}

// Candidate is an Instance a rollout selects, and the OperatorVersion of
// the rollout's version beside the one it runs; nil when none is installed.
type Candidate struct {
	Instance *kudov1beta1.Instance
	Target   *kudov1beta1.OperatorVersion
}

// Fleet are the Instances that run the spec's package and whose labels
// match its selector, sorted by name, each with its target; versions are
// the OperatorVersions their current ones may be among.
func Fleet(instances []kudov1beta1.Instance, versions []kudov1beta1.OperatorVersion, spec *kudov1alpha1.RolloutSpec) ([]Candidate, error) {
	selector := labels.Everything()
	if spec.Selector != nil {
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
			return nil, fmt.Errorf("spec.selector: %w", err)
		}
	}
	var fleet []Candidate
	for k := range instances {
		i := &instances[k]
		current, target := versionsOf(versions, i, spec)
		if current != nil && current.Spec.Operator.Name == spec.Operator && selector.Matches(labels.Set(i.Labels)) {
			fleet = append(fleet, Candidate{Instance: i, Target: target})
		}
	}
	slices.SortFunc(fleet, func(a, b Candidate) int { return strings.Compare(a.Instance.Name, b.Instance.Name) })
	return fleet, nil
}

// versionsOf are the OperatorVersion the Instance runs and the one of the
// spec's version beside it, nil when there is none.
func versionsOf(versions []kudov1beta1.OperatorVersion, i *kudov1beta1.Instance, spec *kudov1alpha1.RolloutSpec) (
	current, target *kudov1beta1.OperatorVersion) {
	key := i.OperatorVersionKey()
	for k := range versions {
		ov := &versions[k]
		if ov.Namespace != key.Namespace {
			continue
		}
		if ov.Name == key.Name {
			current = ov
		}
		if ov.Spec.Operator.Name == spec.Operator && ov.Spec.Version == spec.OperatorVersion &&
			(spec.AppVersion == "" || ov.Spec.AppVersion == spec.AppVersion) {
			target = ov
		}
	}
	return current, target
}
