package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a' + i))
	}
	return out
}

func TestWaves(t *testing.T) {
	tests := []struct {
		name    string
		members int
		sizes   []intstr.IntOrString
		want    [][]string
		err     string
	}{
		{name: "a canary, ten percent rounded up, the rest", members: 12,
			sizes: []intstr.IntOrString{intstr.FromInt32(1), intstr.FromString("10%")},
			want:  [][]string{{"a"}, {"b", "c"}, {"d", "e", "f", "g", "h", "i", "j", "k", "l"}}},
		{name: "no sizes: one wave", members: 3, want: [][]string{{"a", "b", "c"}}},
		{name: "sizes past the fleet take what is left", members: 3,
			sizes: []intstr.IntOrString{intstr.FromInt32(2), intstr.FromInt32(5), intstr.FromInt32(1)},
			want:  [][]string{{"a", "b"}, {"c"}}},
		{name: "a wave of nobody is refused", members: 3, sizes: []intstr.IntOrString{intstr.FromInt32(0)}, err: "wave 1: size 0 takes no Instance"},
		{name: "a size that is no number", members: 3, sizes: []intstr.IntOrString{intstr.FromString("half")}, err: "wave 1: invalid value"},
		{name: "no members, no wave", members: 0, sizes: []intstr.IntOrString{intstr.FromInt32(1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Waves(names(tc.members), tc.sizes)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("waves (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanWavesGoesClusterByCluster(t *testing.T) {
	target := &kudov1beta1.OperatorVersion{}
	member := func(name, cluster string) Candidate {
		i := &kudov1beta1.Instance{}
		i.Name = name
		if cluster != "" {
			i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: cluster, Key: "config"}}
		}
		return Candidate{Instance: i, Target: target}
	}
	fleet := []Candidate{member("a", "prod"), member("b", "staging"), member("c", ""), member("d", "prod"), member("e", "prod")}
	tests := []struct {
		name     string
		clusters []string
		sizes    []intstr.IntOrString
		fleet    []Candidate
		want     []Wave
		err      string
	}{
		{name: "no clusters: the fleet by name", sizes: []intstr.IntOrString{intstr.FromInt32(1)},
			want: []Wave{{Instances: []string{"a"}}, {Instances: []string{"b", "c", "d", "e"}}}},
		{name: "each cluster in its order, split by the sizes; the manager's own is in-cluster",
			clusters: []string{"staging", kudov1alpha1.LocalCluster, "prod"}, sizes: []intstr.IntOrString{intstr.FromInt32(1)},
			want: []Wave{{Cluster: "staging", Instances: []string{"b"}}, {Cluster: "in-cluster", Instances: []string{"c"}},
				{Cluster: "prod", Instances: []string{"a"}}, {Cluster: "prod", Instances: []string{"d", "e"}}}},
		{name: "a named cluster with no Instance has no wave", clusters: []string{"dev", "staging", "in-cluster", "prod"},
			want: []Wave{{Cluster: "staging", Instances: []string{"b"}}, {Cluster: "in-cluster", Instances: []string{"c"}},
				{Cluster: "prod", Instances: []string{"a", "d", "e"}}}},
		{name: "an Instance of a cluster not named is refused", clusters: []string{"staging", "prod"},
			err: "spec.strategy.clusters: Instance c acts on cluster in-cluster, which it does not name"},
		{name: "an empty fleet is refused", fleet: []Candidate{}, err: "no Instance of pg in namespace team matches"},
		{name: "an Instance with no target beside it is refused", fleet: []Candidate{{Instance: fleet[0].Instance}},
			err: "no OperatorVersion 2.0.0 of pg is installed beside Instance a's"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ro := &kudov1alpha1.Rollout{Spec: kudov1alpha1.RolloutSpec{Operator: "pg", OperatorVersion: "2.0.0",
				Strategy: kudov1alpha1.RolloutStrategy{Clusters: tc.clusters, Waves: tc.sizes}}}
			ro.Namespace = "team"
			in := fleet
			if tc.fleet != nil {
				in = tc.fleet
			}
			got, err := PlanWaves(in, ro)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("waves (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNext(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	pending := func(name string) Member { return Member{Name: name} }
	running := func(name string) Member {
		return Member{Name: name, AtTarget: true, Plan: kudov1beta1.ExecutionInProgress}
	}
	readyFor := func(name string, d time.Duration) Member {
		return Member{Name: name, AtTarget: true, Plan: kudov1beta1.ExecutionComplete, Ready: true, ReadySince: now.Add(-d)}
	}
	failed := func(name string) Member {
		return Member{Name: name, AtTarget: true, Plan: kudov1beta1.ExecutionFatalError, Reason: "step migrate: job failed"}
	}
	stalled := func(name string) Member {
		return Member{Name: name, AtTarget: true, Plan: kudov1beta1.ExecutionComplete, Stalled: true,
			Reason: "health rule replicas-ready false for 5m0s"}
	}
	strategy := Strategy{MaxParallel: 2, MaxUnavailable: 2, Bake: time.Minute}
	tests := []struct {
		name        string
		wave        []Member
		strategy    Strategy
		unavailable int
		want        Decision
	}{{
		name: "a new wave starts as many as maxParallel",
		wave: []Member{pending("a"), pending("b"), pending("c")}, strategy: strategy,
		want: Decision{Upgrade: []string{"a", "b"}, Waiting: "2 upgrading, 1 waiting for room"},
	}, {
		name: "maxUnavailable leaves less room than maxParallel",
		wave: []Member{pending("a"), pending("b")}, strategy: strategy, unavailable: 1,
		want: Decision{Upgrade: []string{"a"}, Waiting: "1 upgrading, 1 waiting for room"},
	}, {
		name: "no room while the fleet has as many not Ready as it may",
		wave: []Member{running("a"), pending("b")}, strategy: Strategy{MaxParallel: 2, MaxUnavailable: 1, Bake: time.Minute}, unavailable: 1,
		want: Decision{Waiting: "1 upgrading, 1 waiting for room"},
	}, {
		name: "one baking: the rollout wakes when its bake time ends",
		wave: []Member{readyFor("a", 20*time.Second), running("b")}, strategy: strategy, unavailable: 1,
		want: Decision{Waiting: "1 upgrading, 1 baking (a)", RequeueAfter: 40 * time.Second},
	}, {
		name: "every member Ready for the bake time: the wave is done",
		wave: []Member{readyFor("a", time.Minute), readyFor("b", time.Hour)}, strategy: strategy,
		want: Decision{WaveDone: true},
	}, {
		name: "a failed plan pauses, naming the Instance and the step",
		wave: []Member{readyFor("a", time.Hour), failed("b"), pending("c")}, strategy: strategy,
		want: Decision{Stop: true, Failed: "b", Reason: "its upgrade plan failed: step migrate: job failed"},
	}, {
		name:     "a failure rolls the wave's upgraded members back, when the strategy says so",
		wave:     []Member{readyFor("a", time.Hour), stalled("b"), pending("c")},
		strategy: Strategy{MaxParallel: 2, MaxUnavailable: 2, Bake: time.Minute, RollbackOnFailure: true},
		want:     Decision{Stop: true, Failed: "b", Reason: "it is stalled: health rule replicas-ready false for 5m0s", RollBack: []string{"a", "b"}},
	}, {
		name: "more of the fleet not Ready than maxUnavailable pauses",
		wave: []Member{running("a"), pending("b")}, strategy: strategy, unavailable: 3,
		want: Decision{Stop: true, Failed: "a", Reason: "3 Instances are not Ready, more than maxUnavailable 2"},
	}, {
		name: "the fleet's Instances not Ready, outside the wave, stop it too",
		wave: []Member{readyFor("a", time.Hour), pending("b")}, strategy: strategy, unavailable: 3,
		want: Decision{Stop: true, Reason: "3 Instances are not Ready, more than maxUnavailable 2"},
	}, {
		name: "a member not yet pointed at the target cannot fail",
		wave: []Member{{Name: "a", Plan: kudov1beta1.ExecutionFatalError}}, strategy: strategy,
		want: Decision{Upgrade: []string{"a"}, Waiting: "1 upgrading"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Next(tc.wave, tc.strategy, tc.unavailable, now)); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}
