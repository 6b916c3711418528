package planmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Rollouts' waves take from a canary's minute to a fleet's hours.
var waveBuckets = prometheus.ExponentialBuckets(5, 3, 10)

var (
	rolloutWaves = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kudo_ng_rollout_wave_duration_seconds",
		Help: "How long Rollouts' waves took, from their first upgrade to their gate passed or their failure, " +
			"by operator and result (Complete, Failed).",
		Buckets: waveBuckets,
	}, []string{"operator", "result"})
	rolloutUpgrades = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kudo_ng_rollout_upgrades_total",
		Help: "Instances Rollouts pointed at a new OperatorVersion, by operator.",
	}, []string{"operator"})
	rolloutRollbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kudo_ng_rollout_rollbacks_total",
		Help: "Instances Rollouts rolled back (a failed wave, abort, undo), by operator.",
	}, []string{"operator"})
	rolloutsStopped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kudo_ng_rollouts_stopped_total",
		Help: "Rollouts that stopped before their last wave, by operator and reason (RolloutPaused, RolloutAborted).",
	}, []string{"operator", "reason"})
)

func init() {
	metrics.Registry.MustRegister(rolloutWaves, rolloutUpgrades, rolloutRollbacks, rolloutsStopped)
}

// WaveEnded notes a wave that passed its gate or failed, and how long it took.
func WaveEnded(operator, result string, took time.Duration) {
	rolloutWaves.WithLabelValues(operator, result).Observe(took.Seconds())
}

// RolloutUpgraded counts an Instance a Rollout pointed at its target.
func RolloutUpgraded(operator string) { rolloutUpgrades.WithLabelValues(operator).Inc() }

// RolloutRolledBack counts an Instance a Rollout rolled back.
func RolloutRolledBack(operator string) { rolloutRollbacks.WithLabelValues(operator).Inc() }

// RolloutStopped counts a Rollout that stopped before its last wave.
func RolloutStopped(operator, reason string) { rolloutsStopped.WithLabelValues(operator, reason).Inc() }
