package main

import (
	"context"
	"fmt"
	"time"
)

// Restart is the manager killed and started again beside the largest size's
// Instances, all COMPLETE and unchanged: how long until it has reconciled
// each once, its caches' sync included, the requests it made meanwhile, and
// its peak memory as it caught up.
type Restart struct {
	Instances int
	// Seconds is from the new process's start until it has reconciled the
	// Instances as many times as there are Instances.
	Seconds float64
	// Requests are all it made from its start until it was quiet, by verb;
	// Writes those that changed what the API server stores (storedWrites).
	Requests   map[string]float64
	Writes     float64
	PeakRSSMiB float64
	CPUSeconds float64
}

// restartTimeout bounds the catching up of a restarted manager: well past
// the minute of the goal, to measure it when it is missed.
const restartTimeout = 10 * time.Minute

// restartRun kills the manager and starts it again with flags.
func restartRun(ctx context.Context, m *manager, instances int, flags ...string) (*Restart, error) {
	m.kill()
	start := time.Now()
	if err := m.start(flags...); err != nil {
		return nil, err
	}
	if err := m.reconciled(ctx, float64(instances), restartTimeout); err != nil {
		return nil, fmt.Errorf("restart: %w", err)
	}
	r := &Restart{Instances: instances, Seconds: time.Since(start).Seconds()}
	after, err := m.settled(ctx, time.Second, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	proc, err := m.process()
	if err != nil {
		return nil, err
	}
	calls := callsOf(after)
	r.Requests, r.Writes, r.PeakRSSMiB, r.CPUSeconds = calls.byVerb(), calls.storedWrites(), proc.PeakRSSMiB, proc.CPUSeconds
	logf("restart beside %d Instances: reconciled each in %.2fs, %.0f writes, %.0f requests (%v), peak RSS %.0f MiB",
		instances, r.Seconds, r.Writes, sum(r.Requests), r.Requests, r.PeakRSSMiB)
	return r, nil
}
