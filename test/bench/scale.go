package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/localcluster"
)

const (
	scalePackage   = "test/bench/testdata/scale"
	scaleResources = 5
)

// Scale is one size: Instances created at once until all deploy plans are
// COMPLETE, and what the manager spent on them.
type Scale struct {
	Instances int
	Seconds   float64
	// CPUSeconds is the manager's CPU time during the run; PeakRSSMiB its
	// peak resident memory since it started.
	CPUSeconds float64
	PeakRSSMiB float64
	// Requests are the manager's API requests during the run, by verb.
	Requests map[string]float64
	// Profile lists the top of the CPU profile taken during the run.
	Profile string `json:",omitempty"`
}

// Idle is what the manager did during a resync with nothing to change.
type Idle struct {
	Instances  int
	Seconds    float64
	Reconciles float64
	Requests   map[string]float64
}

func measureScale(ctx context.Context, c *localcluster.Cluster, m *manager, cfg *config) ([]Scale, *Idle, error) {
	pkg, err := packages.Read(filepath.Join(c.Root, scalePackage))
	if err != nil {
		return nil, nil, err
	}
	var results []Scale
	total := 0
	for i, n := range cfg.sizes {
		profile := ""
		if i == len(cfg.sizes)-1 {
			profile = filepath.Join(c.Root, "bin", fmt.Sprintf("bench-%d.pprof", n))
		}
		s, err := scaleRun(ctx, c, m, pkg, n, profile)
		if err != nil {
			return nil, nil, err
		}
		total += n
		logf("scale %d: all COMPLETE in %.2fs, CPU %.1fs, peak RSS %.0f MiB, requests %v", n, s.Seconds, s.CPUSeconds, s.PeakRSSMiB, s.Requests)
		results = append(results, *s)
	}
	idle, err := idleRun(m, total, cfg.syncPeriod)
	if err != nil {
		return nil, nil, err
	}
	return results, idle, nil
}

func scaleRun(ctx context.Context, c *localcluster.Cluster, m *manager, pkg *packages.Package, n int, profile string) (*Scale, error) {
	ns := fmt.Sprintf("scale-%d", n)
	ov, err := installPackage(ctx, c, pkg, ns)
	if err != nil {
		return nil, err
	}
	w, err := c.Client.Watch(ctx, &kudov1beta1.InstanceList{}, client.InNamespace(ns))
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	before, err := m.metrics()
	if err != nil {
		return nil, err
	}
	procBefore, err := m.process()
	if err != nil {
		return nil, err
	}
	var profiled sync.WaitGroup
	var profileErr error
	if profile != "" {
		profiled.Add(1)
		go func() {
			defer profiled.Done()
			// A scale run is expected to last about a minute at 1,000.
			profileErr = m.profile(30, profile)
		}()
	}

	start := time.Now()
	create, cctx := errgroup.WithContext(ctx)
	create.SetLimit(32)
	for i := range n {
		create.Go(func() error {
			return c.Client.Create(cctx, newInstance(ns, fmt.Sprintf("i-%04d", i), ov))
		})
	}
	if err := create.Wait(); err != nil {
		return nil, err
	}
	if err := untilComplete(ctx, w, n, 10*time.Minute); err != nil {
		return nil, err
	}
	s := &Scale{Instances: n, Seconds: time.Since(start).Seconds()}

	after, err := m.metrics()
	if err != nil {
		return nil, err
	}
	procAfter, err := m.process()
	if err != nil {
		return nil, err
	}
	s.Requests = sub(requests(after), requests(before))
	s.CPUSeconds, s.PeakRSSMiB = procAfter.CPUSeconds-procBefore.CPUSeconds, procAfter.PeakRSSMiB
	if profile != "" {
		profiled.Wait()
		if profileErr != nil {
			return nil, profileErr
		}
		out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=12", profile).Output()
		if err != nil {
			return nil, fmt.Errorf("go tool pprof: %w", err)
		}
		s.Profile = strings.TrimSpace(string(out))
	}
	return s, nil
}

// idleRun waits through one resync of the manager's cache, with nothing
// changing, and counts what the manager did.
func idleRun(m *manager, instances int, syncPeriod time.Duration) (*Idle, error) {
	before, err := m.metrics()
	if err != nil {
		return nil, err
	}
	// controller-runtime jitters the resync period by up to 10%.
	wait := syncPeriod + syncPeriod/5
	logf("idle: waiting %s for a resync of %d Instances", wait, instances)
	time.Sleep(wait)
	after, err := m.metrics()
	if err != nil {
		return nil, err
	}
	return &Idle{
		Instances:  instances,
		Seconds:    wait.Seconds(),
		Reconciles: sub(after, before)[`controller_runtime_reconcile_total{controller="instance",result="success"}`],
		Requests:   sub(requests(after), requests(before)),
	}, nil
}
