package rolloutcmd

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestPrintStatus(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: start.Add(d)} }
	ro := &kudov1alpha1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "pg-2"},
		Spec:       kudov1alpha1.RolloutSpec{Operator: "postgres", OperatorVersion: "0.2.0"},
		Status: kudov1alpha1.RolloutStatus{
			Updated: 2, Total: 4,
			Conditions: []metav1.Condition{{Type: kudov1beta1.ReadyCondition, Status: metav1.ConditionFalse,
				Message: "Paused at wave 2: Instance c: its upgrade plan failed: step migrate: job failed"}},
			Failure: &kudov1alpha1.RolloutFailure{Instance: "c", Reason: "its upgrade plan failed: step migrate: job failed"},
			Waves: []kudov1alpha1.WaveStatus{
				{Instances: []string{"a"}, Phase: kudov1alpha1.WaveComplete, StartedAt: at(0), CompletedAt: at(42 * time.Second)},
				{Instances: []string{"b", "c"}, Phase: kudov1alpha1.WaveFailed, StartedAt: at(43 * time.Second)},
				{Instances: []string{"d"}, Phase: kudov1alpha1.WavePending},
			},
		},
	}
	var out bytes.Buffer
	if err := PrintStatus(&out, ro, start.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	want := `Rollout pg-2 of postgres to 0.2.0: 2 of 4 Instances upgraded. Paused at wave 2: Instance c: its upgrade plan failed: step migrate: job failed
Failed: Instance c: its upgrade plan failed: step migrate: job failed
WAVE  PHASE     INSTANCES  TOOK
1     Complete  a          42s
2     Failed    b, c       1m17s so far
3     Pending   d          
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestPrintStatusNamesEachWavesClusterWhenTheRolloutGoesByCluster(t *testing.T) {
	ro := &kudov1alpha1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "pg-2"},
		Spec: kudov1alpha1.RolloutSpec{Operator: "postgres", OperatorVersion: "0.2.0",
			Strategy: kudov1alpha1.RolloutStrategy{Clusters: []string{"staging-kubeconfig", "prod-kubeconfig"}}},
		Status: kudov1alpha1.RolloutStatus{
			Total: 3,
			Waves: []kudov1alpha1.WaveStatus{
				{Cluster: "staging-kubeconfig", Instances: []string{"a"}, Phase: kudov1alpha1.WavePending},
				{Cluster: "prod-kubeconfig", Instances: []string{"b", "c"}, Phase: kudov1alpha1.WavePending},
			},
		},
	}
	var out bytes.Buffer
	if err := PrintStatus(&out, ro, time.Now()); err != nil {
		t.Fatal(err)
	}
	want := `Rollout pg-2 of postgres to 0.2.0: 0 of 3 Instances upgraded. not started
WAVE  CLUSTER             PHASE    INSTANCES  TOOK
1     staging-kubeconfig  Pending  a          
2     prod-kubeconfig     Pending  b, c       
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}
