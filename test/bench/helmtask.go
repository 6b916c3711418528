package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kudo-ng/kudo/internal/chartimport"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/localcluster"
)

func helmTaskNamespace(n, run int) namespaces {
	return namespaces{name: fmt.Sprintf("helm-task-%d-%d", n, run+1), n: n}
}

// helmTaskPackage is the chart the helm-operator runs (section 3) as
// `kubectl kudo package import` makes a package of it: one Helm task, its
// values as parameters.
func helmTaskPackage(c *localcluster.Cluster) (*packages.Package, error) {
	files, err := chartimport.Package(filepath.Join(c.Root, helmOperatorTestdata, "chart"))
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(c.Dir, "helm-task-package")
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
	}
	return packages.Read(dir)
}

// helmTaskRuns runs a size as often as the helm-operator's runs with the
// helm-operator's chart as a kudo-ng Helm task, each alone in the cluster
// as the plain runs are.
func helmTaskRuns(ctx context.Context, c *localcluster.Cluster, m *manager, pkg *packages.Package, n, count int) (*SideRun, error) {
	runs := make([]*SideRun, count)
	for k := range runs {
		ns := helmTaskNamespace(n, k)
		s, err := scaleRun(ctx, c, m, pkg, ns, "", nil, createInstancesOf(c))
		if err != nil {
			return nil, err
		}
		logf("scale %d, Helm task run %d: all COMPLETE in %.2fs, CPU %.1fs, peak RSS %.0f MiB, requests %v",
			n, k+1, s.Seconds, s.CPUSeconds, s.PeakRSSMiB, s.Requests)
		runs[k] = sideRunOf(s)
		if err := resetCluster(ctx, c, m, ns); err != nil {
			return nil, err
		}
	}
	return medianSideRun(runs), nil
}
