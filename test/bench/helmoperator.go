package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kudo-ng/kudo/test/localcluster"
)

const (
	helmOperatorTestdata = "test/bench/testdata/helm-operator"
	helmOperatorProbes   = "127.0.0.1:16754"
)

// The helm-operator's custom resources: one release each, of the scale
// chart (a ScaleApp) or of the latency package's objects (a LatencyApp).
var (
	scaleApps   = helmOperatorApp{Kind: "ScaleApp", GroupVersionResource: benchApp("scaleapps")}
	latencyApps = helmOperatorApp{Kind: "LatencyApp", GroupVersionResource: benchApp("latencyapps")}
)

type helmOperatorApp struct {
	schema.GroupVersionResource
	Kind string
}

func benchApp(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "bench.kudo-ng.dev", Version: "v1", Resource: resource}
}

// newApp is a custom resource of app in namespace ns, with no values.
func newApp(app helmOperatorApp, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetAPIVersion(app.GroupVersion().String())
	u.SetKind(app.Kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// SideRun is a run of a scale size beside kudo-ng's plain one, measured as
// it is: a peer's, or kudo-ng's own in another setting. Of several runs,
// the median, with the time of each; the controller's CPU, peak RSS and API
// requests in it, by verb and by verb and resource.
type SideRun struct {
	Seconds    float64
	Runs       []float64
	CPUSeconds float64
	PeakRSSMiB float64
	Requests   map[string]float64
	Calls      map[string]float64 `json:",omitempty"`
}

// sideRunOf is what scaleRun measured of a run, as a side run.
func sideRunOf(s *Scale) *SideRun {
	return &SideRun{Seconds: s.Seconds, CPUSeconds: s.CPUSeconds, PeakRSSMiB: s.PeakRSSMiB, Requests: s.Requests, Calls: s.Calls}
}

// medianSideRun is the median of runs, with the time of each.
func medianSideRun(runs []*SideRun) *SideRun {
	seconds := func(r *SideRun) float64 { return r.Seconds }
	median := medianRun(runs, seconds)
	median.Runs = times(runs, seconds)
	return median
}

// PeerIdle is what a peer did through one resync with nothing to change.
type PeerIdle struct {
	Period     string
	Releases   int
	CPUSeconds float64
	Requests   map[string]float64
}

// helmOperator is operator-sdk's helm-operator, as `operator-sdk init
// --plugins helm` scaffolds it and as `make run` of such a project runs it:
// a process of its own with its defaults, one chart in its watches file.
// Its API requests go through an apiCounter.
type helmOperator struct {
	cmd     *exec.Cmd
	counter *apiCounter
	period  time.Duration
}

// startHelmOperator runs the helm-operator with chart as the chart of app.
func startHelmOperator(
	ctx context.Context, c *localcluster.Cluster, binary string, app helmOperatorApp, chart string,
) (*helmOperator, error) {
	if _, err := c.Kubectl("apply", "-f", filepath.Join(c.Root, helmOperatorTestdata, "crd.yaml")); err != nil {
		return nil, err
	}
	if _, err := c.Kubectl("wait", "--for", "condition=Established", "crd/"+app.GroupResource().String()); err != nil {
		return nil, err
	}
	dir := filepath.Join(c.Dir, "helm-operator-"+app.Resource)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	watches := fmt.Sprintf("- group: %s\n  version: %s\n  kind: %s\n  chart: %s\n", app.Group, app.Version, app.Kind, chart)
	if err := os.WriteFile(filepath.Join(dir, "watches.yaml"), []byte(watches), 0o644); err != nil {
		return nil, err
	}
	counter, err := startAPICounter(c.Config)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := counter.writeKubeconfig(dir)
	if err != nil {
		counter.stop()
		return nil, err
	}
	log, err := os.Create(filepath.Join(c.Root, "bin", "bench-helm-operator-"+app.Resource+".log"))
	if err != nil {
		counter.stop()
		return nil, err
	}
	defer func() { _ = log.Close() }()
	// Its defaults, the reconcile period among them (a minute), but for
	// the addresses it binds, which are the manager's.
	h := &helmOperator{counter: counter, period: time.Minute}
	// It runs in dir.
	if binary, err = filepath.Abs(binary); err != nil {
		counter.stop()
		return nil, err
	}
	h.cmd = exec.CommandContext(ctx, binary, "run", "--watches-file", filepath.Join(dir, "watches.yaml"),
		"--metrics-bind-address=0", "--health-probe-bind-address="+helmOperatorProbes)
	h.cmd.Dir = dir
	h.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+dir)
	h.cmd.Stdout, h.cmd.Stderr = log, log
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := h.cmd.Start(); err != nil {
		counter.stop()
		return nil, err
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get("http://" + helmOperatorProbes + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return h, nil
			}
		}
		if time.Now().After(deadline) {
			h.stop()
			return nil, fmt.Errorf("the helm-operator was not ready within a minute (log: %s)", log.Name())
		}
	}
}

func (h *helmOperator) stop() {
	_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGTERM)
	_ = h.cmd.Wait()
	h.counter.stop()
}

// settled is what the helm-operator had requested once it made none for
// quiet, or when timeout passed: with its reconcile period, a thousand
// releases keep it from ever being quiet for long.
func (h *helmOperator) settled(ctx context.Context, quiet, timeout time.Duration) (apiCalls, error) {
	deadline := time.Now().Add(timeout)
	last := h.counter.snapshot()
	for {
		select {
		case <-time.After(quiet):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		next := h.counter.snapshot()
		if sum(next.byVerb()) == sum(last.byVerb()) || time.Now().After(deadline) {
			return next, nil
		}
		last = next
	}
}

// measureHelmOperatorScale runs each size of the scale runs with the
// helm-operator as it ran with kudo-ng: as often, each run alone in the
// cluster with its releases; then its idle cost, with the largest size's
// releases in place, through one reconcile period.
func measureHelmOperatorScale(ctx context.Context, c *localcluster.Cluster, cfg *config, results []Scale) (*PeerIdle, error) {
	h, err := startHelmOperator(ctx, c, cfg.helmOperator, scaleApps, filepath.Join(c.Root, helmOperatorTestdata, "chart"))
	if err != nil {
		return nil, err
	}
	defer h.stop()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	// The helm-operator at the sizes up to -helm-operator-max: at 1,000 it
	// takes four times kudo-ng's time already.
	var measured []*Scale
	for i := range results {
		if results[i].Instances <= cfg.helmOperatorMax {
			measured = append(measured, &results[i])
		}
	}
	var previous namespaces
	for i, result := range measured {
		n := result.Instances
		runs := make([]*SideRun, sideRuns(n, cfg.scaleRuns))
		for k := range runs {
			if previous.n > 0 {
				if err := previous.delete(ctx, c); err != nil {
					return nil, err
				}
			}
			previous = helmOperatorNamespace(n, k)
			profile := ""
			if i == len(measured)-1 && k == len(runs)-1 {
				profile = apiServerProfilePath(c, helmOperatorRunName, n)
			}
			if runs[k], err = helmOperatorScaleRun(ctx, c, dyn, h, previous, profile); err != nil {
				return nil, err
			}
			logf("helm-operator %d, run %d: all deployed and Current in %.2fs, CPU %.1fs, peak RSS %.0f MiB, requests %v",
				n, k+1, runs[k].Seconds, runs[k].CPUSeconds, runs[k].PeakRSSMiB, runs[k].Requests)
		}
		result.HelmOperator = medianSideRun(runs)
	}
	if len(measured) == 0 {
		return nil, nil
	}
	// Its API server profile goes beside kudo-ng's and the floor's when they
	// are of the same size.
	last := measured[len(measured)-1]
	if last == &results[len(results)-1] {
		if err := addAPIServerWork(last.APIServerWork, apiServerProfilePath(c, helmOperatorRunName, last.Instances)); err != nil {
			return nil, err
		}
	}
	return helmOperatorIdle(ctx, h, last.Instances)
}

func helmOperatorNamespace(n, run int) namespaces {
	return namespaces{name: fmt.Sprintf("helm-operator-%d-%d", n, run+1), n: n}
}

// helmOperatorScaleRun creates n ScaleApps, 32 at a time, and times them
// until every release is deployed and every Deployment Current: what
// kudo-ng's COMPLETE says. Given a profile path, it profiles the API server
// as kudo-ng's largest run does.
func helmOperatorScaleRun(
	ctx context.Context, c *localcluster.Cluster, dyn dynamic.Interface, h *helmOperator, ns namespaces, profile string,
) (*SideRun, error) {
	n := ns.n
	if err := ns.create(ctx, c); err != nil {
		return nil, err
	}
	allApps, err := unstructuredWatch(ctx, dyn.Resource(scaleApps.GroupVersionResource))
	if err != nil {
		return nil, err
	}
	apps := ns.only(allApps)
	defer apps.Stop()
	allDeployments, err := unstructuredWatch(ctx, dyn.Resource(deploymentsResource))
	if err != nil {
		return nil, err
	}
	deployments := ns.only(allDeployments)
	defer deployments.Stop()
	before, err := h.settled(ctx, runQuiet, time.Minute)
	if err != nil {
		return nil, err
	}
	if err := resetPeakRSS(h.cmd.Process.Pid); err != nil {
		return nil, err
	}
	procBefore, err := processOf(h.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}

	waitProfile := func() error { return nil }
	if profile != "" {
		waitProfile = inBackground(func() error { return apiServerProfile(ctx, c, profile) })
	}
	start := time.Now()
	var done errgroup.Group
	done.Go(func() error { return untilDone(ctx, apps, n, 3*runTimeout(n), "releases", deployed) })
	done.Go(func() error { return untilDeploymentsCurrent(ctx, deployments, n, 3*runTimeout(n)) })
	create, cctx := errgroup.WithContext(ctx)
	create.SetLimit(32)
	for i := range n {
		create.Go(func() error {
			app := newApp(scaleApps, ns.of(i), scaleInstanceName(i))
			_, err := dyn.Resource(scaleApps.GroupVersionResource).Namespace(ns.of(i)).Create(cctx, app, metav1.CreateOptions{})
			return err
		})
	}
	if err := create.Wait(); err != nil {
		return nil, err
	}
	if err := done.Wait(); err != nil {
		return nil, err
	}
	r := &SideRun{Seconds: time.Since(start).Seconds()}
	after, err := h.settled(ctx, time.Second, 10*time.Second)
	if err != nil {
		return nil, err
	}
	procAfter, err := processOf(h.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	r.Requests, r.Calls = sub(after.byVerb(), before.byVerb()), sub(after.byCall(), before.byCall())
	r.CPUSeconds, r.PeakRSSMiB = procAfter.CPUSeconds-procBefore.CPUSeconds, procAfter.PeakRSSMiB
	return r, waitProfile()
}

// helmOperatorIdle counts what the helm-operator does through one
// reconcile period with its releases in place and nothing changing.
func helmOperatorIdle(ctx context.Context, h *helmOperator, releases int) (*PeerIdle, error) {
	before := h.counter.snapshot()
	procBefore, err := processOf(h.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	logf("idle: the helm-operator through one reconcile period (%s) of %d releases", h.period, releases)
	select {
	case <-time.After(h.period):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	procAfter, err := processOf(h.cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	return &PeerIdle{Period: h.period.String(), Releases: releases, CPUSeconds: procAfter.CPUSeconds - procBefore.CPUSeconds,
		Requests: sub(h.counter.snapshot().byVerb(), before.byVerb())}, nil
}

// deployed: the helm-operator has installed the release of a ScaleApp
// (its Deployed condition), or failed to.
func deployed(obj runtime.Object) (string, bool, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return "", false, nil
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		condition, _ := c.(map[string]any)
		switch {
		case condition["type"] == "Deployed" && condition["status"] == "True":
			return u.GetName(), true, nil
		case condition["type"] == "ReleaseFailed" && condition["status"] == "True":
			return "", false, fmt.Errorf("scaleapp %s/%s: %v", u.GetNamespace(), u.GetName(), condition["message"])
		}
	}
	return "", false, nil
}
