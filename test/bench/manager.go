package main

import (
	"bufio"
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

	"github.com/kudo-ng/kudo/test/localcluster"
)

const (
	metricsAddress = "127.0.0.1:16750"
	pprofAddress   = "127.0.0.1:16752"
	webhookPort    = "16751"
)

// manager is the kudo-ng manager running as a process of its own, with its
// webhooks, as `make run` runs it.
type manager struct {
	cmd *exec.Cmd
	log string
}

func startManager(ctx context.Context, c *localcluster.Cluster, syncPeriod time.Duration) (*manager, error) {
	if err := c.Make("install"); err != nil {
		return nil, err
	}
	binary := filepath.Join(c.Dir, "manager")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, ".")
	build.Dir = c.Root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %w\n%s", err, out)
	}
	webhooks := filepath.Join(c.Dir, "webhook")
	setup := exec.CommandContext(ctx, filepath.Join(c.Root, "hack", "webhook-local.sh"))
	setup.Env = append(c.Env(), "WEBHOOK_DIR="+webhooks, "WEBHOOK_PORT="+webhookPort,
		"KUBECTL="+filepath.Join(os.Getenv("ENVTEST_ASSETS"), "kubectl"))
	if out, err := setup.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("webhook-local.sh: %w\n%s", err, out)
	}
	m := &manager{log: filepath.Join(c.Root, "bin", "bench-manager.log")}
	logFile, err := os.Create(m.log)
	if err != nil {
		return nil, err
	}
	m.cmd = exec.Command(binary, "--kubeconfig", c.Kubeconfig, "--leader-elect=false", "--zap-devel=false",
		"--health-probe-bind-address=0", "--metrics-bind-address="+metricsAddress, "--metrics-secure=false",
		"--pprof-bind-address="+pprofAddress, "--sync-period="+syncPeriod.String(),
		"--webhook-cert-dir", webhooks, "--webhook-host", "127.0.0.1", "--webhook-port", webhookPort)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if _, err := m.metrics(); err == nil {
			return m, nil
		}
		if time.Now().After(deadline) {
			m.stop()
			return nil, fmt.Errorf("the manager did not serve metrics within a minute (log: %s)", m.log)
		}
	}
}

func (m *manager) stop() {
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGTERM)
	_ = m.cmd.Wait()
}

// metrics scrapes the manager's Prometheus metrics: sample line → value.
func (m *manager) metrics() (map[string]float64, error) {
	resp, err := http.Get("http://" + metricsAddress + "/metrics")
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

// process is what the kernel says of the manager: CPU seconds so far and
// peak resident memory.
type process struct {
	CPUSeconds float64
	PeakRSSMiB float64
}

func (m *manager) process() (process, error) {
	pid := m.cmd.Process.Pid
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return process{}, err
	}
	// Fields after the command, which is in parentheses: utime and stime are
	// the 14th and 15th of the whole line.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	const clockTicks = 100 // USER_HZ on Linux
	p := process{CPUSeconds: (utime + stime) / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return process{}, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			p.PeakRSSMiB = kb / 1024
		}
	}
	return p, nil
}

// profile records the manager's CPU profile for the given time into path.
func (m *manager) profile(seconds int, path string) error {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddress, seconds))
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

// requests sums the kudo_ng_api_requests_total samples by verb.
func requests(samples map[string]float64) map[string]float64 {
	byVerb := map[string]float64{}
	for name, v := range samples {
		rest, ok := strings.CutPrefix(name, `kudo_ng_api_requests_total{`)
		if !ok {
			continue
		}
		for _, label := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
			if verb, ok := strings.CutPrefix(label, `verb="`); ok {
				byVerb[strings.TrimSuffix(verb, `"`)] += v
			}
		}
	}
	return byVerb
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
