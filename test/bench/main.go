// Command bench measures kudo-ng on a fresh local control plane, with the
// manager as a process of its own: how fast a plan runs against the best any
// controller could do and against helm, how far one manager scales, and how
// many API requests it spends. `make bench` runs it and writes
// docs/benchmarks.md and bin/bench.json.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kudo-ng/kudo/test/localcluster"
)

func main() {
	cfg := config{}
	flag.IntVar(&cfg.runs, "runs", 20, "Runs of each plan latency measurement.")
	sizes := flag.String("scale", "100,300,1000", "Instance counts of the scale measurement, comma-separated.")
	flag.IntVar(&cfg.scaleRuns, "scale-runs", 5,
		"Runs of each scale size, at most: a size runs as often as fits in 1,000 Instances, so 1,000 and more run once.")
	flag.DurationVar(&cfg.syncPeriod, "sync-period", 30*time.Second,
		"The resync period of the idle measurement: the manager restarts with it after the scale runs and is watched through one resync.")
	flag.StringVar(&cfg.helm, "helm", "bin/helm", "The helm binary (make helm builds it).")
	flag.StringVar(&cfg.helmOperator, "helm-operator", "bin/helm-operator",
		"operator-sdk's helm-operator binary (make helm-operator builds it).")
	flag.IntVar(&resetSize, "reset-size", resetSize,
		"The largest run whose namespace is deleted after it; past it, a new control plane takes the cluster's place.")
	flag.IntVar(&namespaceInstances, "namespace-instances", namespaceInstances,
		"The most Instances of a run in one namespace; past it, a run spreads them over as many namespaces as it takes.")
	flag.IntVar(&cfg.helmOperatorMax, "helm-operator-max", 3000, "The largest scale size the helm-operator runs too.")
	flag.StringVar(&cfg.renderBench, "render", "bin/bench-render.txt", "Output of the render Go benchmarks.")
	flag.StringVar(&cfg.jsonOut, "json", "bin/bench.json", "Where to write the JSON report.")
	flag.StringVar(&cfg.markdownOut, "markdown", "docs/benchmarks.md", "Where to write the Markdown report.")
	keep := flag.String("keep", "", "Earlier JSON reports, comma-separated, whose scale sizes this run does not measure are kept "+
		"in its report, each whole, from the first that has it (the rest is this run's). "+
		"With -rewrite, the report's kept sizes are taken again from them.")
	rewriteOnly := flag.Bool("rewrite", false, "Measure nothing: write the Markdown report again from the JSON report.")
	flag.Parse()
	if *keep != "" {
		for _, path := range strings.Split(*keep, ",") {
			earlier, err := readReport(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench: -keep:", err)
				os.Exit(2)
			}
			cfg.kept = append(cfg.kept, earlier)
		}
	}
	if *rewriteOnly {
		if err := rewrite(cfg.jsonOut, cfg.markdownOut, cfg.kept); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if namespaceInstances < 1 {
		fmt.Fprintf(os.Stderr, "bench: -namespace-instances: %d is not a positive count\n", namespaceInstances)
		os.Exit(2)
	}
	if cfg.scaleRuns < 1 {
		fmt.Fprintf(os.Stderr, "bench: -scale-runs: %d is not a positive count\n", cfg.scaleRuns)
		os.Exit(2)
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bench: -scale: %q is not a positive count\n", s)
			os.Exit(2)
		}
		cfg.sizes = append(cfg.sizes, n)
	}
	// Interrupted, a run still writes the JSON report of what it measured.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type config struct {
	runs, scaleRuns, helmOperatorMax  int
	sizes                             []int
	syncPeriod                        time.Duration
	helm, helmOperator                string
	renderBench, jsonOut, markdownOut string
	// kept are the reports of -keep.
	kept []*Report
}

func run(ctx context.Context, cfg *config) (err error) {
	scaled := 0
	for _, n := range cfg.sizes {
		scaled += n
	}
	// Every Instance of the scale runs keeps its one pod, and so does every
	// Instance of the scale floors, beside the pods of the latency runs,
	// whose namespaces stay (4 pods deployed 5 ways, each run and the
	// warm-up): room for all on 3 nodes.
	latencyPods := 4 * 5 * (cfg.runs + 1)
	if err := os.Setenv("CLUSTER_NODE_PODS", strconv.Itoa(max(110, (latencyPods+2*scaled)/3+100))); err != nil {
		return err
	}
	// The API server's CPU profiles of the largest run and its floor.
	if err := os.Setenv("CLUSTER_APISERVER_PROFILING", "true"); err != nil {
		return err
	}
	start := time.Now()
	cluster, err := localcluster.Start("bench-cluster", 16740)
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	logf("control plane up in %s", time.Since(start).Round(time.Second))
	// The bench's own requests must not be what is measured: no client-side limit.
	if err := unlimitedClient(cluster); err != nil {
		return err
	}

	m, err := startManager(ctx, cluster)
	if err != nil {
		return err
	}
	defer m.stop()

	report := &Report{Machine: machine(), Date: time.Now().UTC().Format(time.RFC3339), ScaleRuns: cfg.scaleRuns,
		NamespaceInstances: namespaceInstances, SoftMemoryLimitMiB: float64(softMemoryLimit) / (1 << 20)}
	// Hours into the opt-in sizes, what was measured is kept: `-rewrite`
	// writes the Markdown report of it once the measurements it needs are in.
	defer func() {
		if err != nil {
			for _, earlier := range cfg.kept {
				report.keep(earlier)
			}
			if jsonErr := report.writeJSON(cfg.jsonOut); jsonErr == nil {
				logf("what was measured before the error is in %s", cfg.jsonOut)
			}
		}
	}()
	if report.Latency, err = measureLatency(ctx, cluster, m, cfg); err != nil {
		return fmt.Errorf("latency: %w", err)
	}
	if report.Scale, err = measureScale(ctx, cluster, m, cfg); err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	largest := cfg.sizes[len(cfg.sizes)-1]
	lastRun := scaleRuns(largest, cfg.scaleRuns) - 1
	// With the largest run's Instances still there, as a manager in use has
	// them; its own are gone again before idle counts the manager's writes.
	if report.Drift, err = measureRecreate(ctx, cluster, m); err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	// The runs before leave the manager's resync period at its default
	// (hours), as in production, rather than let resyncs land in them; the
	// restart sets the idle measurement's.
	if report.Restart, err = restartRun(ctx, m, largest, "--sync-period="+cfg.syncPeriod.String()); err != nil {
		return err
	}
	if report.Idle, err = idleRun(ctx, m, largest, cfg.syncPeriod); err != nil {
		return fmt.Errorf("idle: %w", err)
	}
	// The floors, the sharded run and the helm-operator each alone in the
	// cluster: their caches, like the manager's, hold every object of the
	// kinds they watch.
	if err := resetCluster(ctx, cluster, m, scaleNamespace(largest, lastRun)); err != nil {
		return err
	}
	if err := measureScaleFloors(ctx, cluster, m, cfg, report.Scale); err != nil {
		return fmt.Errorf("scale floor: %w", err)
	}
	if err := resetCluster(ctx, cluster, m, floorNamespace(largest, lastRun)); err != nil {
		return err
	}
	if report.Sharded, err = measureSharded(ctx, cluster, m, largest); err != nil {
		return fmt.Errorf("sharded: %w", err)
	}
	if report.HelmOperatorIdle, err = measureHelmOperatorScale(ctx, cluster, cfg, report.Scale); err != nil {
		return fmt.Errorf("helm-operator: %w", err)
	}
	if report.Render, err = readRenderBench(cfg.renderBench); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.markdownOut), 0o755); err != nil {
		return err
	}
	for _, earlier := range cfg.kept {
		report.keep(earlier)
	}
	return report.write(cfg.jsonOut, cfg.markdownOut)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}
