// Package planmetrics is what the manager tells Prometheus about plans: runs
// started and finished, how long runs and steps take, retries of steps that
// failed with an error that may heal, drift corrections, and the steps that
// run now. docs/metrics.md says what to alert on.
package planmetrics

import (
	"context"
	"iter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Plans and steps of KUDO packages take from seconds (ConfigMaps) to hours
// (a database's backup): 0.5 s to about 4.5 h.
var durationBuckets = prometheus.ExponentialBuckets(0.5, 3, 10)

var (
	plansStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kudo_ng_plans_started_total",
		Help: "Plan runs started, by operator and plan.",
	}, []string{"operator", "plan"})
	plansFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kudo_ng_plans_finished_total",
		Help: "Plan runs finished, by operator, plan and result (COMPLETE, FATAL_ERROR, CANCELLED).",
	}, []string{"operator", "plan", "result"})
	planDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kudo_ng_plan_duration_seconds",
		Help:    "How long plan runs took, from their start (or last retry) to their end, by operator, plan and result.",
		Buckets: durationBuckets,
	}, []string{"operator", "plan", "result"})
	stepDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kudo_ng_step_duration_seconds",
		Help:    "How long steps took, from their first run to their end, by operator, plan, step and result.",
		Buckets: durationBuckets,
	}, []string{"operator", "plan", "step", "result"})
	stepRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kudo_ng_step_retries_total",
		Help: "Tries of steps that failed with an error that may heal (ERROR), each tried again after a backoff, by operator and plan.",
	}, []string{"operator", "plan"})
	driftCorrections = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kudo_ng_drift_corrections_total",
		Help: "Objects applied again because someone else changed or deleted them, by operator.",
	}, []string{"operator"})
	stepsRunning = prometheus.NewDesc("kudo_ng_steps_running",
		"Steps of plans that run now, by operator and status (IN_PROGRESS, ERROR).", []string{"operator", "status"}, nil)
)

func init() {
	metrics.Registry.MustRegister(plansStarted, plansFinished, planDuration, stepDuration, stepRetries, driftCorrections)
}

// PlanStarted counts a plan run that started.
func PlanStarted(operator, plan string) { plansStarted.WithLabelValues(operator, plan).Inc() }

// PlanFinished counts a plan run that ended, and how long it took.
func PlanFinished(operator string, ps *kudov1beta1.PlanStatus, now time.Time) {
	result := string(ps.Status)
	plansFinished.WithLabelValues(operator, ps.Name, result).Inc()
	if ps.StartedAt != nil {
		planDuration.WithLabelValues(operator, ps.Name, result).Observe(now.Sub(ps.StartedAt.Time).Seconds())
	}
}

// StepsRecorded observes what a pass changed in a run's steps: how long the
// steps that ended took, and the tries that failed.
func StepsRecorded(operator string, before, after *kudov1beta1.PlanStatus, now time.Time) {
	for at, s := range after.Steps() {
		var was kudov1beta1.StepStatus
		if w := before.Step(at.PhaseIndex, at.StepIndex); w != nil {
			was = *w
		}
		if s.Attempts > was.Attempts {
			stepRetries.WithLabelValues(operator, after.Name).Add(float64(s.Attempts - was.Attempts))
		}
		if s.Status.IsTerminal() && !was.Status.IsTerminal() && s.StartedAt != nil {
			stepDuration.WithLabelValues(operator, after.Name, s.Name, string(s.Status)).Observe(now.Sub(s.StartedAt.Time).Seconds())
		}
	}
}

// DriftCorrected counts an object applied again.
func DriftCorrected(operator string) { driftCorrections.WithLabelValues(operator).Inc() }

// RunningSteps counts, at each scrape, the steps that run now across the
// Instances that Instances yields: the manager's cache, read in place, so
// that a scrape costs no request and no copy of every Instance.
type RunningSteps struct {
	Instances func(context.Context) iter.Seq2[*kudov1beta1.Instance, error]
}

// Describe implements prometheus.Collector.
func (RunningSteps) Describe(ch chan<- *prometheus.Desc) { ch <- stepsRunning }

// Collect implements prometheus.Collector.
func (r RunningSteps) Collect(ch chan<- prometheus.Metric) {
	counts, err := Running(r.Instances(context.Background()))
	if err != nil {
		ch <- prometheus.NewInvalidMetric(stepsRunning, err)
		return
	}
	for key, n := range counts {
		ch <- prometheus.MustNewConstMetric(stepsRunning, prometheus.GaugeValue, float64(n), key.Operator, string(key.Status))
	}
}

// RunningKey is what running steps are counted by.
type RunningKey struct {
	Operator string
	Status   kudov1beta1.ExecutionStatus
}

// Running counts the steps IN_PROGRESS or in ERROR of the Instances' active
// plans, by the operator label KUDO puts on Instances; the first error the
// Instances yield ends it.
func Running(instances iter.Seq2[*kudov1beta1.Instance, error]) (map[RunningKey]int, error) {
	counts := map[RunningKey]int{}
	for in, err := range instances {
		if err != nil {
			return nil, err
		}
		if in.Status.ActivePlan == nil || in.Status.ActivePlan.Status.IsTerminal() {
			continue
		}
		operator := in.Labels[kudov1beta1.OperatorLabel]
		for _, s := range in.Status.PlanStatus[in.Status.ActivePlan.Name].Steps() {
			if s.Status == kudov1beta1.ExecutionInProgress || s.Status == kudov1beta1.ExecutionError {
				counts[RunningKey{operator, s.Status}]++
			}
		}
	}
	return counts, nil
}
