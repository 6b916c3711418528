package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/test/localcluster"
)

const (
	metricsAddress      = "127.0.0.1:16750"
	pprofAddress        = "127.0.0.1:16752"
	webhookPort         = "16751"
	shardMetricsAddress = "127.0.0.1:16753"
)

// deployedMemoryLimit is the memory limit of the manager's container in
// config/manager/manager.yaml, of which --memory-limit-ratio's default 0.9
// is its soft limit there.
const deployedMemoryLimit = 512 << 20

// softMemoryLimit is the GOMEMLIMIT the deployed manager sets itself.
const softMemoryLimit = deployedMemoryLimit * 9 / 10

// shardMemoryLimit is the memory limit of each of two shards' containers:
// half of one manager's, as a user who splits a manager in two gives them.
const shardMemoryLimit = deployedMemoryLimit / 2

// manager is the kudo-ng manager running as a process of its own, with its
// webhooks, as `make run` runs it; or, with a shard, the manager of that
// shard's Instances beside it, without webhooks.
type manager struct {
	binary, webhooks, kubeconfig string
	metricsAddress, shard        string
	cmd                          *exec.Cmd
	log                          string
	// flags are those the manager last started with, beyond its defaults.
	flags []string
	// memoryLimit is the memory limit of the container it stands for;
	// zero: deployedMemoryLimit.
	memoryLimit int64
}

// startManager builds the manager and runs it with its defaults.
func startManager(ctx context.Context, c *localcluster.Cluster) (*manager, error) {
	// Its files beside the cluster's directory, which resetCluster removes.
	bin := filepath.Join(c.Root, "bin")
	m := &manager{
		binary: filepath.Join(bin, "bench-manager"), webhooks: filepath.Join(bin, "bench-webhook"), kubeconfig: c.Kubeconfig,
		log: filepath.Join(bin, "bench-manager.log"), metricsAddress: metricsAddress,
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", m.binary, ".")
	build.Dir = c.Root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %w\n%s", err, out)
	}
	if err := os.WriteFile(m.log, nil, 0o644); err != nil {
		return nil, err
	}
	if err := m.install(ctx, c); err != nil {
		return nil, err
	}
	return m, m.start()
}

// install puts in the cluster what the manager needs there: its
// CustomResourceDefinitions, and its webhooks' configurations pointing at
// where it serves them.
func (m *manager) install(ctx context.Context, c *localcluster.Cluster) error {
	if err := c.Make("install"); err != nil {
		return err
	}
	setup := exec.CommandContext(ctx, filepath.Join(c.Root, "hack", "webhook-local.sh"))
	setup.Env = append(c.Env(), "WEBHOOK_DIR="+m.webhooks, "WEBHOOK_PORT="+webhookPort,
		"KUBECTL="+filepath.Join(os.Getenv("ENVTEST_ASSETS"), "kubectl"))
	if out, err := setup.CombinedOutput(); err != nil {
		return fmt.Errorf("webhook-local.sh: %w\n%s", err, out)
	}
	return nil
}

// resetCluster gives the next run the cluster to itself again, past
// resetSize Instances with a new control plane in place of the old one,
// the manager started again on it as it ran: a control plane comes up in
// seconds, where the deletion of 3,000 Instances and their objects took
// over 7 minutes (and an etcd that held them stays larger for the runs
// after). Up to resetSize, the namespaces of the last run are deleted.
func resetCluster(ctx context.Context, c *localcluster.Cluster, m *manager, ns namespaces) error {
	if ns.n <= resetSize {
		return ns.delete(ctx, c)
	}
	m.stop()
	if err := c.Restart(); err != nil {
		return err
	}
	// The bench's own requests must not be what is measured: no client-side limit.
	if err := unlimitedClient(c); err != nil {
		return err
	}
	if err := m.install(ctx, c); err != nil {
		return err
	}
	return m.start(m.flags...)
}

// resetSize is the largest run whose namespace is deleted rather than the
// control plane made anew (resetCluster); -reset-size sets it.
var resetSize = 300

// unlimitedClient lifts the client-side rate limit of the cluster's client.
func unlimitedClient(c *localcluster.Cluster) error {
	c.Config.QPS, c.Config.Burst = -1, 0
	var err error
	c.Client, err = client.NewWithWatch(c.Config, client.Options{Scheme: c.Client.Scheme()})
	return err
}

// start runs the manager with its defaults and the given flags, and waits
// until it serves its metrics.
func (m *manager) start(flags ...string) error {
	m.flags = flags
	logFile, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	args := []string{"--kubeconfig", m.kubeconfig, "--leader-elect=false", "--zap-devel=false",
		"--health-probe-bind-address=0", "--metrics-bind-address=" + m.metricsAddress, "--metrics-secure=false"}
	if m.shard == "" {
		args = append(args, "--pprof-bind-address="+pprofAddress,
			"--webhook-cert-dir", m.webhooks, "--webhook-host", "127.0.0.1", "--webhook-port", webhookPort)
	} else {
		args = append(args, "--shard="+m.shard, "--enable-webhooks=false")
	}
	m.cmd = exec.Command(m.binary, append(args, flags...)...)
	// Outside a container the manager finds no memory limit to hold its
	// heap under: it gets the soft limit its container's would give it.
	limit := cmp.Or(m.memoryLimit, deployedMemoryLimit)
	m.cmd.Env = append(os.Environ(), "GOMEMLIMIT="+strconv.FormatInt(limit*9/10, 10))
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.cmd.Start(); err != nil {
		return err
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if _, err := m.metrics(); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			m.stop()
			return fmt.Errorf("the manager did not serve metrics within a minute (log: %s)", m.log)
		}
	}
}

// kill ends the manager as a node's failure would: no shutdown of its own.
func (m *manager) kill() {
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	_ = m.cmd.Wait()
}

func (m *manager) stop() {
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGTERM)
	_ = m.cmd.Wait()
}

// metrics scrapes the manager's Prometheus metrics: sample line → value.
func (m *manager) metrics() (map[string]float64, error) {
	resp, err := http.Get("http://" + m.metricsAddress + "/metrics")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	samples := map[string]float64{}
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		samples[line[:i]] = v
	}
	return samples, scanner.Err()
}

// settled scrapes the manager's metrics once it has made no API request for
// quiet: the writes a change causes, such as events, trail the change itself.
func (m *manager) settled(ctx context.Context, quiet, timeout time.Duration) (map[string]float64, error) {
	deadline := time.Now().Add(timeout)
	last, err := m.metrics()
	if err != nil {
		return nil, err
	}
	for since := time.Now(); time.Since(since) < quiet; {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the manager still makes API requests after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(quiet / 5):
		}
		next, err := m.metrics()
		if err != nil {
			return nil, err
		}
		if sum(requests(next)) != sum(requests(last)) {
			since = time.Now()
		}
		last = next
	}
	return last, nil
}

// instanceReconciles is the metric of the Instance reconciles that succeeded.
const instanceReconciles = `controller_runtime_reconcile_total{controller="instance",result="success"}`

// reconciled waits until the manager has reconciled Instances n times since
// it started.
func (m *manager) reconciled(ctx context.Context, n float64, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); ; {
		metrics, err := m.metrics()
		if err != nil || metrics[instanceReconciles] >= n {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the manager reconciled Instances %.0f times in %s, not %.0f", metrics[instanceReconciles], timeout, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// instanceQueueDepth is the depth of the Instance controller's work queue
// in a scrape of the manager's metrics.
func instanceQueueDepth(samples map[string]float64) float64 {
	depth := 0.0
	for sample, v := range samples {
		if strings.HasPrefix(sample, "workqueue_depth{") && strings.Contains(sample, `name="instance"`) {
			depth += v
		}
	}
	return depth
}

// sampleQueueDepth scrapes the depth of the manager's Instance queue every
// interval until the function it returns is called, which returns the
// samples, one an interval; a scrape that fails counts as the last depth.
func (m *manager) sampleQueueDepth(interval time.Duration) (stop func() []float64) {
	done, samples := make(chan struct{}), make(chan []float64, 1)
	go func() {
		var depths []float64
		last := 0.0
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				samples <- depths
				return
			case <-tick.C:
				if metrics, err := m.metrics(); err == nil {
					last = instanceQueueDepth(metrics)
				}
				depths = append(depths, last)
			}
		}
	}()
	return func() []float64 {
		close(done)
		return <-samples
	}
}

// process is what the kernel says of the manager: CPU seconds so far, peak
// resident memory, and what is resident now: the Go runtime's memory
// (anonymous) and the pages of its binary it has touched (file).
type process struct {
	CPUSeconds                         float64
	PeakRSSMiB, RSSAnonMiB, RSSFileMiB float64
}

func (m *manager) process() (process, error) { return processOf(m.cmd.Process.Pid) }

// resetPeakRSS starts a process's peak resident memory (VmHWM) again from
// what it holds now (proc(5), clear_refs), so that a run's peak is its own,
// not that of a run before it on the same process: the typed runs of a size
// use more memory than its plain runs after them.
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

func processOf(pid int) (process, error) {
	cpu, err := cpuSeconds(pid)
	if err != nil {
		return process{}, err
	}
	p := process{CPUSeconds: cpu}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return process{}, err
	}
	fields := map[string]*float64{"VmHWM": &p.PeakRSSMiB, "RssAnon": &p.RSSAnonMiB, "RssFile": &p.RSSFileMiB}
	for _, line := range strings.Split(string(status), "\n") {
		name, rest, _ := strings.Cut(line, ":")
		if field, ok := fields[name]; ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			*field = kb / 1024
		}
	}
	return p, nil
}

// cpuSeconds is the CPU time a process has used so far, user and system,
// its own and that of its children it has waited for: a Helm task's
// renders are processes of the manager's.
func cpuSeconds(pid int) (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command, which is in parentheses: utime, stime,
	// cutime and cstime are the 14th to 17th of the whole line.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	var ticks float64
	for _, f := range fields[11:15] {
		t, _ := strconv.ParseFloat(f, 64)
		ticks += t
	}
	const clockTicks = 100 // USER_HZ on Linux
	return ticks / clockTicks, nil
}

// profile records the manager's CPU profile for the given time into path.
func (m *manager) profile(seconds int, path string) error {
	return download(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddress, seconds), path)
}

// heapProfile records the manager's heap profile into path: what is live
// as of the last garbage collection, by where it was allocated.
func (m *manager) heapProfile(path string) error {
	return download(fmt.Sprintf("http://%s/debug/pprof/heap?gc=1", pprofAddress), path)
}

func download(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// apiCall is an API request's verb and resource, as the API server's
// authorizer names them (kudo_ng_api_requests_total's labels).
type apiCall struct{ verb, resource string }

// apiCalls counts API requests by verb and resource.
type apiCalls map[apiCall]float64

// callsOf reads the kudo_ng_api_requests_total samples of a scrape.
func callsOf(samples map[string]float64) apiCalls {
	calls := apiCalls{}
	for name, v := range samples {
		if verb, resource, ok := apiRequest(name); ok {
			calls[apiCall{verb, resource}] += v
		}
	}
	return calls
}

// byVerb sums the requests by verb.
func (c apiCalls) byVerb() map[string]float64 {
	byVerb := map[string]float64{}
	for call, v := range c {
		byVerb[call.verb] += v
	}
	return byVerb
}

// byCall is the requests by verb and resource, keyed "<verb> <resource>".
func (c apiCalls) byCall() map[string]float64 {
	byCall := map[string]float64{}
	for call, v := range c {
		byCall[call.verb+" "+call.resource] += v
	}
	return byCall
}

// instanceWrites sums the writes to Instances by resource: the Instance
// itself (its finalizers, the answer to spec.planExecution) and its status.
func (c apiCalls) instanceWrites() map[string]float64 {
	writes := map[string]float64{}
	for call, v := range c {
		if isWrite(call.verb) && strings.HasPrefix(call.resource, instancesResource) {
			writes[call.resource] += v
		}
	}
	return writes
}

// instancesResource is the Instances' resource as the authorizer names it.
const instancesResource = "instances.kudo.dev"

// objectWrites sums the writes to the objects of packages: all but those to
// kudo.dev objects (status, spec.planExecution), events and access reviews.
func (c apiCalls) objectWrites() float64 {
	total := 0.0
	for call, v := range c {
		if !isWrite(call.verb) {
			continue
		}
		kind, _, _ := strings.Cut(call.resource, "/") // without the subresource
		if strings.HasSuffix(kind, ".kudo.dev") || kind == "events" || strings.HasPrefix(kind, "selfsubjectaccessreviews.") {
			continue
		}
		total += v
	}
	return total
}

// storedWrites sums the writes that change what the API server stores: all
// but access reviews, creates it answers without storing them (a kind's
// first watch reviews the manager's access to it).
func (c apiCalls) storedWrites() float64 {
	total := 0.0
	for call, v := range c {
		if isWrite(call.verb) && !strings.Contains(call.resource, "accessreviews.") {
			total += v
		}
	}
	return total
}

// requests sums the kudo_ng_api_requests_total samples by verb.
func requests(samples map[string]float64) map[string]float64 { return callsOf(samples).byVerb() }

// apiRequest parses the labels of a kudo_ng_api_requests_total sample.
func apiRequest(sample string) (verb, resource string, ok bool) {
	rest, ok := strings.CutPrefix(sample, `kudo_ng_api_requests_total{`)
	if !ok {
		return "", "", false
	}
	for _, label := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
		name, value, _ := strings.Cut(label, "=")
		switch name {
		case "verb":
			verb = strings.Trim(value, `"`)
		case "resource":
			resource = strings.Trim(value, `"`)
		}
	}
	return verb, resource, true
}

// spent is what the manager spent between two scrapes of its metrics: its
// API requests by verb, how many of them wrote objects of packages, and
// its writes of Instances by resource.
type spent struct {
	Requests       map[string]float64
	Calls          map[string]float64
	ObjectWrites   float64
	InstanceWrites map[string]float64
}

func spentBetween(before, after map[string]float64) spent {
	was, is := callsOf(before), callsOf(after)
	return spent{Requests: sub(is.byVerb(), was.byVerb()), Calls: sub(is.byCall(), was.byCall()),
		ObjectWrites: is.objectWrites() - was.objectWrites(), InstanceWrites: sub(is.instanceWrites(), was.instanceWrites())}
}

func sub(after, before map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if v-before[k] != 0 {
			d[k] = v - before[k]
		}
	}
	return d
}
