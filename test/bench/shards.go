package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/localcluster"
)

// benchShard is the key of the shard the second manager runs.
const benchShard = "b"

// Sharded is the largest size of the scale runs over two managers: the
// unsharded one with half the Instances, and the manager of shard
// benchShard, with the other half, each started for the run and caching
// only its own Instances' objects, each with half the memory limit of one
// manager.
type Sharded struct {
	Instances int
	Seconds   float64
	// MemoryLimitMiB is each manager's container memory limit, whose 0.9 is
	// its GOMEMLIMIT.
	MemoryLimitMiB float64 `json:",omitempty"`
	// CPUSeconds and PeakRSSMiB are each manager's: unsharded, then shard.
	CPUSeconds [2]float64
	PeakRSSMiB [2]float64
}

// measureSharded runs n Instances once over two shards, alone in the
// cluster, and leaves it empty again (resetCluster). The unsharded manager
// runs with --sharded for it, as beside a shard it must to cache only its
// own objects, and as before afterwards.
func measureSharded(ctx context.Context, c *localcluster.Cluster, m *manager, n int) (*Sharded, error) {
	shard := &manager{binary: m.binary, kubeconfig: m.kubeconfig, metricsAddress: shardMetricsAddress, shard: benchShard,
		log: filepath.Join(c.Root, "bin", "bench-shard-manager.log"), memoryLimit: shardMemoryLimit}
	if err := os.WriteFile(shard.log, nil, 0o644); err != nil {
		return nil, err
	}
	m.stop()
	m.memoryLimit = shardMemoryLimit
	if err := m.start("--sharded"); err != nil {
		return nil, err
	}
	if err := shard.start(); err != nil {
		return nil, err
	}
	s, err := shardedRun(ctx, c, [2]*manager{m, shard}, n)
	shard.stop()
	m.stop()
	m.memoryLimit = 0
	if startErr := m.start(); err == nil {
		err = startErr
	}
	if err != nil {
		return nil, err
	}
	return s, resetCluster(ctx, c, m, shardedNamespace(n))
}

func shardedRun(ctx context.Context, c *localcluster.Cluster, managers [2]*manager, n int) (*Sharded, error) {
	pkg, err := packages.Read(filepath.Join(c.Root, scalePackage))
	if err != nil {
		return nil, err
	}
	ns := shardedNamespace(n)
	ov, w, err := installAndWatch(ctx, c, pkg, ns)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var before [2]process
	for k, mgr := range managers {
		if _, err := mgr.settled(ctx, runQuiet, time.Minute); err != nil {
			return nil, err
		}
		if before[k], err = mgr.process(); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	half := func(i int) map[string]string {
		if i%2 == 1 {
			return map[string]string{kudov1beta1.ShardLabel: benchShard}
		}
		return nil
	}
	if err := createInstances(ctx, c, w, ns, ov, nil, half); err != nil {
		return nil, err
	}
	s := &Sharded{Instances: n, Seconds: time.Since(start).Seconds(), MemoryLimitMiB: float64(shardMemoryLimit) / (1 << 20)}
	for k, mgr := range managers {
		if _, err := mgr.settled(ctx, time.Second, runTimeout(n)); err != nil {
			return nil, err
		}
		after, err := mgr.process()
		if err != nil {
			return nil, err
		}
		s.CPUSeconds[k], s.PeakRSSMiB[k] = after.CPUSeconds-before[k].CPUSeconds, after.PeakRSSMiB
	}
	logf("sharded %d over 2 managers: all COMPLETE in %.2fs, CPU %.1fs + %.1fs, peak RSS %.0f + %.0f MiB",
		n, s.Seconds, s.CPUSeconds[0], s.CPUSeconds[1], s.PeakRSSMiB[0], s.PeakRSSMiB[1])
	return s, nil
}

func shardedNamespace(n int) namespaces {
	return namespaces{name: fmt.Sprintf("sharded-%d", n), n: n}
}
