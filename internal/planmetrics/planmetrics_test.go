package planmetrics

import (
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func instance(operator string, active kudov1beta1.ExecutionStatus, steps ...kudov1beta1.ExecutionStatus) kudov1beta1.Instance {
	i := kudov1beta1.Instance{}
	i.Labels = map[string]string{kudov1beta1.OperatorLabel: operator}
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: active}
	phase := kudov1beta1.PhaseStatus{Name: "main"}
	for _, s := range steps {
		phase.Steps = append(phase.Steps, kudov1beta1.StepStatus{Status: s})
	}
	i.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{"deploy": {Name: "deploy", Status: active, Phases: []kudov1beta1.PhaseStatus{phase}}}
	return i
}

func TestRunning(t *testing.T) {
	const (
		inProgress = kudov1beta1.ExecutionInProgress
		errored    = kudov1beta1.ExecutionError
		complete   = kudov1beta1.ExecutionComplete
		pending    = kudov1beta1.ExecutionPending
	)
	got, err := Running(each(
		instance("zookeeper", inProgress, complete, inProgress, pending),
		instance("zookeeper", errored, errored, inProgress),
		instance("redis", inProgress, inProgress),
		instance("redis", complete, complete),
		kudov1beta1.Instance{},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := map[RunningKey]int{
		{"zookeeper", inProgress}: 2, {"zookeeper", errored}: 1, {"redis", inProgress}: 1,
	}
	if len(got) != len(want) {
		t.Fatalf("Running = %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("Running[%v] = %d, want %d", k, got[k], n)
		}
	}
}

func TestRunningEndsAtTheFirstError(t *testing.T) {
	failed := errors.New("the record of i-0001 could not be read")
	instances := func(yield func(*kudov1beta1.Instance, error) bool) {
		in := instance("redis", kudov1beta1.ExecutionInProgress)
		_ = yield(&in, nil) && yield(nil, failed) && yield(&in, nil)
	}
	if got, err := Running(instances); !errors.Is(err, failed) || got != nil {
		t.Errorf("Running = %v, %v; want the error %q", got, err, failed)
	}
}

func each(instances ...kudov1beta1.Instance) iter.Seq2[*kudov1beta1.Instance, error] {
	return func(yield func(*kudov1beta1.Instance, error) bool) {
		for i := range instances {
			if !yield(&instances[i], nil) {
				return
			}
		}
	}
}

func TestStepsRecorded(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	started := metav1.NewTime(t0)
	step := func(status kudov1beta1.ExecutionStatus, attempts int32) kudov1beta1.StepStatus {
		return kudov1beta1.StepStatus{Name: "web", Status: status, StartedAt: &started, Attempts: attempts}
	}
	tree := func(s kudov1beta1.StepStatus) *kudov1beta1.PlanStatus {
		return &kudov1beta1.PlanStatus{Name: "deploy", Phases: []kudov1beta1.PhaseStatus{{Steps: []kudov1beta1.StepStatus{s}}}}
	}
	retries := stepRetries.WithLabelValues("metrics-test", "deploy")
	durations := stepDuration.WithLabelValues("metrics-test", "deploy", "web", "COMPLETE")

	StepsRecorded("metrics-test", tree(step(kudov1beta1.ExecutionInProgress, 0)), tree(step(kudov1beta1.ExecutionError, 1)), t0)
	StepsRecorded("metrics-test", tree(step(kudov1beta1.ExecutionError, 1)), tree(step(kudov1beta1.ExecutionError, 2)), t0)
	StepsRecorded("metrics-test", tree(step(kudov1beta1.ExecutionError, 2)), tree(step(kudov1beta1.ExecutionComplete, 0)), t0.Add(3*time.Second))
	// A pass that changes nothing observes nothing.
	StepsRecorded("metrics-test", tree(step(kudov1beta1.ExecutionComplete, 0)), tree(step(kudov1beta1.ExecutionComplete, 0)), t0.Add(time.Hour))

	var m dto.Metric
	if err := retries.Write(&m); err != nil || m.GetCounter().GetValue() != 2 {
		t.Errorf("retries = %v (%v), want 2", m.GetCounter().GetValue(), err)
	}
	m.Reset()
	if err := durations.(prometheus.Histogram).Write(&m); err != nil ||
		m.GetHistogram().GetSampleCount() != 1 || m.GetHistogram().GetSampleSum() != 3 {
		t.Errorf("step durations = %v (%v), want one of 3 s", m.GetHistogram(), err)
	}
}
