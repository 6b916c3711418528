package main

import (
	"bufio"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Report is everything `make bench` measured.
type Report struct {
	Machine Machine
	Date    string
	Latency *Latency
	Scale   []Scale
	// ScaleRuns is the most runs of one scale size (-scale-runs).
	ScaleRuns int
	// NamespaceInstances is the most Instances of a run in one namespace
	// (-namespace-instances).
	NamespaceInstances int `json:",omitempty"`
	// KeptFrom names the scale sizes taken whole from earlier reports
	// (-keep), and each report's date.
	KeptFrom []Kept `json:",omitempty"`
	// SoftMemoryLimitMiB is the manager's GOMEMLIMIT, as deployed.
	SoftMemoryLimitMiB float64 `json:",omitempty"`
	Sharded            *Sharded
	Restart            *Restart `json:",omitempty"`
	Idle               *Idle
	// HelmOperatorIdle is the helm-operator's through one reconcile period
	// with the largest size's releases in place.
	HelmOperatorIdle *PeerIdle `json:",omitempty"`
	Drift            *Drift
	Render           []GoBenchmark
}

// Machine is what the numbers were measured on.
type Machine struct {
	Cores     int
	MemoryGiB float64
	CPU       string
	Go        string
}

func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
				m.MemoryGiB = kb / (1 << 20)
			}
		}
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
				break
			}
		}
	}
	return m
}

// GoBenchmark is the median of a Go benchmark's runs.
type GoBenchmark struct {
	Name                             string
	Runs                             int
	NsPerOp, BytesPerOp, AllocsPerOp float64
}

// readRenderBench reads `go test -bench -benchmem -count N` output.
func readRenderBench(path string) ([]GoBenchmark, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	runs := map[string][][3]float64{}
	var names []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 8 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		var v [3]float64
		for i, unit := range []string{"ns/op", "B/op", "allocs/op"} {
			for j := 3; j < len(fields); j++ {
				if fields[j] == unit {
					v[i], _ = strconv.ParseFloat(fields[j-1], 64)
				}
			}
		}
		if _, seen := runs[fields[0]]; !seen {
			names = append(names, fields[0])
		}
		runs[fields[0]] = append(runs[fields[0]], v)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results", path)
	}
	var out []GoBenchmark
	for _, name := range names {
		b := GoBenchmark{Name: name, Runs: len(runs[name])}
		b.NsPerOp, b.BytesPerOp, b.AllocsPerOp = medianOf(runs[name], 0), medianOf(runs[name], 1), medianOf(runs[name], 2)
		out = append(out, b)
	}
	return out, scanner.Err()
}

func medianOf(runs [][3]float64, i int) float64 {
	v := make([]float64, 0, len(runs))
	for _, r := range runs {
		v = append(v, r[i])
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

func writes(requests map[string]float64) float64 {
	total := 0.0
	for verb, n := range requests {
		if isWrite(verb) {
			total += n
		}
	}
	return total
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "apply", "delete", "deletecollection":
		return true
	}
	return false
}

func sum(requests map[string]float64) float64 {
	t := 0.0
	for _, v := range requests {
		t += v
	}
	return t
}

// levers is the record, kept by hand, of what each change for speed and
// memory did, measured by make bench before and after it.
//
//go:embed levers.md
var levers string

// Kept is what a report took from an earlier one.
type Kept struct {
	Sizes []int
	Date  string
}

// keep adds to r the scale sizes of the earlier report that r does not
// hold yet, each whole: its runs, floor and side runs. An opt-in size takes
// hours; after a change that matters at some sizes, the others need not run
// again.
func (r *Report) keep(earlier *Report) {
	held := map[int]bool{}
	for _, s := range r.Scale {
		held[s.Instances] = true
	}
	kept := Kept{Date: earlier.Date}
	for _, s := range earlier.Scale {
		if !held[s.Instances] {
			r.Scale = append(r.Scale, s)
			kept.Sizes = append(kept.Sizes, s.Instances)
		}
	}
	if len(kept.Sizes) > 0 {
		slices.SortFunc(r.Scale, func(a, b Scale) int { return a.Instances - b.Instances })
		r.KeptFrom = append(r.KeptFrom, kept)
	}
}

// keepAgain takes r's kept sizes again from the earlier reports, the first
// that holds a size giving it: a report rewritten with the sizes of
// another day beside those it measured.
func (r *Report) keepAgain(earlier []*Report) {
	kept := map[int]bool{}
	for _, k := range r.KeptFrom {
		for _, n := range k.Sizes {
			kept[n] = true
		}
	}
	r.Scale = slices.DeleteFunc(r.Scale, func(s Scale) bool { return kept[s.Instances] })
	r.KeptFrom = nil
	for _, e := range earlier {
		r.keep(e)
	}
}

// rewrite writes the Markdown report again from a JSON one, after a change
// to the report's text or to the record of levers; with earlier reports,
// its kept sizes are taken again from them, and the JSON written again too.
func rewrite(jsonPath, markdownPath string, earlier []*Report) error {
	r, err := readReport(jsonPath)
	if err != nil {
		return err
	}
	if len(earlier) == 0 {
		return r.writeMarkdown(markdownPath)
	}
	r.keepAgain(earlier)
	return r.write(jsonPath, markdownPath)
}

func readReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Report{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func (r *Report) write(jsonPath, markdownPath string) error {
	if err := r.writeJSON(jsonPath); err != nil {
		return err
	}
	return r.writeMarkdown(markdownPath)
}

func (r *Report) writeJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// plotPath is where the picture of the scale runs goes, relative to the
// Markdown report.
const plotPath = "images/bench-scale.svg"

// writeMarkdown writes the Markdown report and its picture.
func (r *Report) writeMarkdown(markdownPath string) error {
	svg := filepath.Join(filepath.Dir(markdownPath), plotPath)
	if err := os.MkdirAll(filepath.Dir(svg), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(svg, scalePlot(r.Scale), 0o644); err != nil {
		return err
	}
	return os.WriteFile(markdownPath, []byte(r.markdown()), 0o644)
}

// runsNote says what a scale figure is of: one run, or the median of several.
func runsNote(runs []float64) string {
	if len(runs) == 1 {
		return "one run"
	}
	return fmt.Sprintf("median of %d runs", len(runs))
}

// span is the range of a series of seconds; a dash for a single run.
func span(seconds []float64) string {
	if len(seconds) < 2 {
		return "—"
	}
	return fmt.Sprintf("%.2f–%.2f s", slices.Min(seconds), slices.Max(seconds))
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func (r *Report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	m := r.Machine
	p("# kudo-ng benchmarks")
	p("")
	p("Written by `make bench` (test/bench) on %s: %d cores (%s), %.0f GiB, %s. A fresh local control plane",
		r.Date, m.Cores, m.CPU, m.MemoryGiB, m.Go)
	p("(etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with 3 simulated nodes) and the")
	p("manager as a process of its own with its webhooks, on the same machine. The raw numbers are in `bin/bench.json`.")
	p("")

	l := r.Latency
	p("## 1. Plan latency")
	p("")
	p("A package of %d objects (5 ConfigMaps and a Service, then 3 Deployments, then a StatefulSet) in %d serial", l.Resources, l.Steps)
	p("steps; %d runs of each, interleaved. kudo-ng: Instance created → deploy COMPLETE. Floor: a Go program", l.Runs)
	p("applying the same objects in the same steps with server-side apply, waiting for each step through watches")
	p("until kstatus says Current. helm: `helm install --wait` of the same objects as a chart (all at once).")
	rows := []struct {
		name string
		d    Distribution
	}{
		{"kudo-ng", l.Kudo}, {"kudo-ng, the StatefulSet judged by a health rule", l.KudoRule},
		{"floor", l.Floor}, {"helm install --wait", l.Helm},
	}
	if len(l.HelmOperator.Samples) > 0 {
		p("helm-operator: operator-sdk's (section 3) with that chart, a LatencyApp created → its release deployed and")
		p("every object Current.")
		rows = append(rows, struct {
			name string
			d    Distribution
		}{"helm-operator", l.HelmOperator})
	}
	p("")
	p("| | median | p95 | median / floor | p95 / floor |")
	p("|---|---|---|---|---|")
	for _, row := range rows {
		p("| %s | %.3f s | %.3f s | %.2f× | %.2f× |", row.name, row.d.Median, row.d.P95, row.d.Median/l.Floor.Median, row.d.P95/l.Floor.P95)
	}
	p("")
	p("kudo-ng / helm: median %.2f×, p95 %.2f×.", l.Kudo.Median/l.Helm.Median, l.Kudo.P95/l.Helm.P95)
	if len(l.HelmOperator.Samples) > 0 {
		p("kudo-ng / helm-operator: median %.2f×, p95 %.2f×.", l.Kudo.Median/l.HelmOperator.Median, l.Kudo.P95/l.HelmOperator.P95)
	}
	p("Goals: median ≤ 1.15× the floor — %s; p95 ≤ 1.5× the floor — %s.",
		verdict(l.Kudo.Median <= 1.15*l.Floor.Median), verdict(l.Kudo.P95 <= 1.5*l.Floor.P95))
	p("")
	p("The health rule: the same package under another name, with a `healthChecks` rule (docs/health.md) judging")
	p("its StatefulSet in place of kstatus, `%s`; a change of its verdict wakes the Instance at", statefulSetRule.Current)
	p("once, as kstatus's, a change of the values it reads 2 s later. The two take turns at going first. With the rule / without:")
	p("median %.2f×, p95 %.2f×.", l.KudoRule.Median/l.Kudo.Median, l.KudoRule.P95/l.Kudo.P95)
	p("Goal: the rule makes the plan at most 5%% slower (median) — %s.", verdict(l.KudoRule.Median <= 1.05*l.Kudo.Median))
	p("")

	p("## 2. Scale")
	p("")
	p("Instances of a 5-object package (two ConfigMaps, a Secret and a headless Service, then a Deployment) created at once")
	p("(32 at a time) in a new namespace; the time until every deploy plan is COMPLETE. Each size up to 1,000 runs as often")
	p("as fits in 1,000 Instances but at least 3 times, at most %d (`-scale-runs`), a larger one once (3,000 and 10,000 are", r.ScaleRuns)
	p("opt-in: `make bench BENCH_ARGS=\"-scale 100,300,1000,3000,10000\"`). Each run is alone with its Instances: after a run of")
	p("up to %d Instances its namespace is deleted, after a larger one a new control plane takes the cluster's place and", resetSize)
	p("the manager starts again on it (deleting thousands of Instances takes minutes, a new control plane seconds); the")
	p("largest size's last run stays for what follows. The table shows the median run, as benchstat")
	p("does (of an even number, the slower middle one), and the range of all runs. CPU is the manager's from the creates")
	p("until it is quiet after the last COMPLETE; peak RSS its high-water mark during the run, from its creates until")
	p("then (reset before it, so that the typed run before a plain one does not count in it).")
	p("Floor: the same objects of as many Instances applied by a Go program with server-side apply, 32 Instances at a")
	p("time, each Instance's steps in order, until every Deployment is Current — what the control plane itself can do")
	p("on this machine (run as often, after kudo-ng's runs, alone in the cluster). The work queue is the manager's")
	p("Instance queue, its depth read each second of the run (`workqueue_depth`).")
	writeRunConditions(p, r)
	if r.NamespaceInstances > 0 {
		p("A run of more than %d Instances (`-namespace-instances`), and its floor, spreads them over namespaces of %d each,",
			r.NamespaceInstances, r.NamespaceInstances)
		p("as a platform with a namespace per team has them: Kubernetes' Deployment, EndpointSlice and Endpoints controllers")
		p("list a namespace's pods, ReplicaSets and EndpointSlices on each sync, so in one namespace the control plane's own")
		p("work grows with the square of its workloads, whoever applies them (test/bench/levers.md).")
	}
	p("")
	columns := []string{"Instances", "runs", "all COMPLETE", "range", "floor", "floor range", "/ floor",
		"per Instance", "Service create, run / floor", "manager CPU", "API server CPU", "peak RSS", "queue depth, peak"}
	p("| %s |", strings.Join(columns, " | "))
	p("|%s", strings.Repeat("---|", len(columns)))
	for _, s := range r.Scale {
		peak := 0.0
		if len(s.QueueDepths) > 0 {
			peak = slices.Max(s.QueueDepths)
		}
		p("| %d | %d | %.2f s | %s | %.2f s | %s | %.2f× | %.1f ms | %.0f / %.0f ms | %.1f s | %.1f s | %.0f MiB | %.0f |", s.Instances,
			len(s.Runs), s.Seconds, span(s.Runs), s.FloorSeconds, span(s.FloorRuns), s.Seconds/s.FloorSeconds,
			1000*s.Seconds/float64(s.Instances), s.ServiceCreateMs, s.FloorServiceCreateMs, s.CPUSeconds,
			s.ControlPlaneCPU["kube-apiserver"], s.PeakRSSMiB, peak)
	}
	p("")
	p("![Time to all COMPLETE and the manager's peak RSS against the number of Instances, log-log](%s)", plotPath)
	p("")
	writeWebhookCalls(p, r.Scale)
	writeGrowth(p, r)
	p("CPU seconds the control plane's processes used from the first create until all were done, in the median run of")
	p("each size and of its floor (%d cores give %d CPU seconds a second):", r.Machine.Cores, r.Machine.Cores)
	p("")
	processes := []string{"kube-apiserver", "kube-controller-manager", "etcd", "kube-scheduler", "kwok"}
	p("| Instances | run | %s | control plane in all |", strings.Join(processes, " | "))
	p("|---|---|%s---|", strings.Repeat("---|", len(processes)))
	for _, s := range r.Scale {
		for _, run := range []struct {
			name string
			cpu  map[string]float64
		}{{"kudo-ng", s.ControlPlaneCPU}, {"floor", s.FloorControlPlaneCPU}} {
			cells := make([]string, 0, len(processes))
			for _, name := range processes {
				cells = append(cells, fmt.Sprintf("%.1f s", run.cpu[name]))
			}
			p("| %d | %s | %s | %.1f s |", s.Instances, run.name, strings.Join(cells, " | "), sum(run.cpu))
		}
	}
	p("")
	ratios := make([]string, 0, len(r.Scale))
	for _, s := range r.Scale {
		ratios = append(ratios, fmt.Sprintf("%.2f× at %d", sum(s.ControlPlaneCPU)/s.floorCPU(), s.Instances))
	}
	p("The control plane alone used, in kudo-ng's runs, this many times the CPU that the control plane and the floor")
	p("program together used in the floor's: %s. Both keep the cores busy (below), so a manager", strings.Join(ratios, ", "))
	p("that used no CPU at all would still take about as many times the floor's time.")
	p("")
	p("Service create is the API server's mean time to create one of the package's Services (its")
	p("`apiserver_request_duration_seconds`). The Service is headless, as those of stateful packages are: Kubernetes 1.34")
	p("allocates ClusterIPs one at a time (its allocator holds a lock while it writes each IPAddress object), so")
	p("1,000 ClusterIP Services are created in a line that, on this machine's two busy cores, alone takes about the")
	p("minute of the goal, whoever creates them. The scale runs would then measure the allocator, not the manager.")
	p("")
	for _, s := range r.Scale {
		switch s.Instances {
		case 100:
			p("Goal: 100 Instances in ≤ 1.3× the floor's time (%s) — %s.", runsNote(s.Runs), verdict(s.Seconds <= 1.3*s.FloorSeconds))
		case 1000:
			extra := s.ControlPlaneCPU["kube-apiserver"]/s.FloorControlPlaneCPU["kube-apiserver"] - 1
			p("Goals: 1,000 Instances in ≤ 1.2× the floor's time (%s) — %s; the API server's CPU at most 25%% over the floor's",
				runsNote(s.Runs), verdict(s.Seconds <= 1.2*s.FloorSeconds))
			p("(%+.0f%%) — %s; manager RSS ≤ 150 MiB at 1,000 — %s.", 100*extra, verdict(extra <= 0.25), verdict(s.PeakRSSMiB <= 150))
			p("")
			busy := sum(s.ControlPlaneCPU) + s.CPUSeconds
			p("At 1,000 the machine's cores are the limit: kudo-ng's run used %.1f CPU s of the control plane and %.1f of",
				sum(s.ControlPlaneCPU), s.CPUSeconds)
			p("the manager in %.2f s, %.2f CPU s a second of the %d; the floor's %.1f of the control plane and %.1f of the floor",
				s.Seconds, busy/s.Seconds, r.Machine.Cores, sum(s.FloorControlPlaneCPU), s.FloorProgramCPU)
			p("program in %.2f s, %.2f a second. So the time follows the CPU, and what the manager and the API server do beyond",
				s.FloorSeconds, s.floorCPU()/s.FloorSeconds)
			p("the floor's work takes its time whatever order it runs in.")
		}
	}
	p("")
	if len(r.Scale) > 0 && len(r.Scale[len(r.Scale)-1].APIServerWork) > 0 {
		writeAPIServerWork(p, r.Scale[len(r.Scale)-1])
	}
	writeInstanceBytes(p, r.Scale)
	writeMultiTenant(p, r.Scale)
	writeTyped(p, r.Scale)
	writeSharded(p, r)
	writeRestart(p, r.Restart)
	writeIdle(p, r.Idle)
	if len(r.Scale) > 0 {
		last := r.Scale[len(r.Scale)-1]
		if last.Profile != "" {
			p("CPU profile of the manager during the first 30 s of the %d run (`go tool pprof -top bin/bench-%d.pprof`):",
				last.Instances, last.Instances)
			p("")
			p("```")
			p("%s", last.Profile)
			p("```")
			p("")
		}
		if last.HeapProfile != "" {
			p("Memory of the manager at the end of the %d run: %.0f MiB resident, of which %.0f MiB are the pages of its binary",
				last.Instances, last.RSSAnonMiB+last.RSSFileMiB, last.RSSFileMiB)
			p("it has run (file-backed) and %.0f MiB the Go runtime's (anonymous): the heap that is live after a collection, below,",
				last.RSSAnonMiB)
			if r.SoftMemoryLimitMiB > 0 {
				p("and the room the collector lets it grow into before the next (GOGC=100: as much again, but for the runtime's")
				p("memory as a whole no more than the soft limit of %.0f MiB: the binary's pages are not counted in it).", r.SoftMemoryLimitMiB)
			} else {
				p("and the room the collector lets it grow into before the next (GOGC=100: as much again).")
			}
			p("Heap profile (`go tool pprof -sample_index=inuse_space -top bin/bench-%d.heap.pprof`):", last.Instances)
			p("")
			p("```")
			p("%s", last.HeapProfile)
			p("```")
			p("")
		}
	}

	writeHelmOperator(p, r)

	d := r.Drift
	p("## 4. Drift correction: deletion to re-creation")
	p("")
	p("%d Instances of the scale package with `%s: \"true\"`, in a namespace of their own, after the scale runs",
		d.Instances, kudov1beta1.DriftCorrectionAnnotation)
	p("(the %d Instances of the largest run still there, steady). Once all were COMPLETE and the manager quiet,",
		largestSize(r.Scale))
	p("one object of each, which nothing")
	p("refers to, was deleted, %d at a time; the time from the delete call's return until a watch of the namespace saw", driftDeletes)
	p("the object again with a new UID, as the manager applied it again:")
	p("")
	p("| deleted | n | median | p95 |")
	p("|---|---|---|---|")
	p("| %s `%s` | %d | %.3f s | %.3f s |", d.Kind, d.Name, len(d.Recreate.Samples), d.Recreate.Median, d.Recreate.P95)
	p("")
	p("Goal: p95 ≤ 2 s beside %d Instances — %s.", largestSize(r.Scale), verdict(d.Recreate.P95 <= 2))
	p("")

	p("## 5. Efficiency")
	p("")
	lr := l.Requests
	cells := make([]string, len(verbNames))
	for i, v := range verbNames {
		cells[i] = fmt.Sprintf("%.2f", lr[v])
	}
	p("The manager's API requests per Instance, by verb, from its `kudo_ng_api_requests_total` metric (verb and")
	p("resource as the API server's authorizer names them; `apply` is a server-side apply patch). Counted from the")
	p("Instance's creation until the manager has been quiet for %s: its plan's applies, its status writes, the", runQuiet)
	p("clearing of spec.planExecution, the PlanFinished event and the Operator's list of Instances; the package's")
	p("install before it is not counted. Object writes are the writes to the package's objects. The latency package")
	p("(%d objects), per run:", l.Resources)
	p("")
	p("| per Instance | per resource | object writes per resource | %s |", strings.Join(verbNames, " | "))
	p("|---|---|---|%s", strings.Repeat("---|", len(verbNames)))
	p("| %.2f | %.2f | %.2f | %s |", sum(lr), sum(lr)/float64(l.Resources), l.ObjectWrites/float64(l.Resources), strings.Join(cells, " | "))
	p("")
	p("Goals: ≤ 1.3 requests per resource per plan in all — %s; ≤ 1 write per resource per plan — %s; no uncached GETs — %s.",
		verdict(sum(lr)/float64(l.Resources) <= 1.3), verdict(l.ObjectWrites/float64(l.Resources) <= 1), verdict(lr["get"] == 0))
	if len(l.InstanceWrites) > 0 {
		p("Writes to the Instance per plan run: %s. KUDO's visible contract is 2: the clearing of", instanceWrites(l.InstanceWrites, 1))
		p("spec.planExecution and the status that ends the run; what each other write is for is in section 7.")
	}
	if h := l.HelmOperatorRequests; len(h) > 0 {
		p("The helm-operator, per release of the same objects: %.2f requests, %.2f per resource (%s).",
			sum(h), sum(h)/float64(l.Resources), verbs(h))
	}
	p("")
	p("The scale package (%d objects), per Instance of each scale run. A plan's own writes (two status writes,", scaleResources)
	p("the clearing of spec.planExecution, an event) weigh more on a package of fewer objects:")
	p("")
	p("| Instances | per Instance | per resource | object writes per resource | %s |", strings.Join(verbNames, " | "))
	p("|---|---|---|---|%s", strings.Repeat("---|", len(verbNames)))
	for _, s := range r.Scale {
		n := float64(s.Instances)
		for i, v := range verbNames {
			cells[i] = fmt.Sprintf("%.2f", s.Requests[v]/n)
		}
		p("| %d | %.2f | %.2f | %.2f | %s |", s.Instances, sum(s.Requests)/n, sum(s.Requests)/n/scaleResources,
			s.ObjectWrites/n/scaleResources, strings.Join(cells, " | "))
	}
	p("")
	var perRun []string
	for _, s := range r.Scale {
		if writes := instanceWritesOfCalls(s.Calls); len(writes) > 0 {
			perRun = append(perRun, fmt.Sprintf("%d: %s", s.Instances, instanceWrites(writes, float64(s.Instances))))
		}
	}
	if len(perRun) > 0 {
		p("Writes to each Instance per plan run, by size: %s.", strings.Join(perRun, "; "))
		p("")
	}
	if eventsDropped(r.Scale) {
		p("Fewer than 2 creates per Instance are events that never reached the API server: client-go's event")
		p("broadcaster, KUDO's too, hands events to one goroutine that writes them one at a time, and drops, unlogged,")
		p("those that find 1,000 waiting. Measured ad hoc at 1,000 Instances: the Instances whose events are missing are")
		p("the last ones planned, and the manager's event creates all succeeded.")
		p("")
	}

	p("## 6. Render")
	p("")
	p("Go benchmarks (`go test ./internal/... -bench . -benchmem -count 6`), medians:")
	p("")
	p("| benchmark | time/op | bytes/op | allocs/op |")
	p("|---|---|---|---|")
	for _, g := range r.Render {
		p("| %s | %.2f ms | %.0f KiB | %.0f |", g.Name, g.NsPerOp/1e6, g.BytesPerOp/1024, g.AllocsPerOp)
	}
	p("")
	b.WriteString(levers)
	return b.String()
}

// writeRunConditions says under which memory limit the manager ran, and
// which sizes an earlier report gave.
func writeRunConditions(p func(string, ...any), r *Report) {
	if r.SoftMemoryLimitMiB > 0 {
		p("The manager runs with Go's soft memory limit at %.0f MiB (`GOMEMLIMIT`): what `--memory-limit-ratio`'s 0.9",
			r.SoftMemoryLimitMiB)
		p("makes of the 512 MiB limit of its container in `config/manager`, which the bench's process, in no container, does not have.")
	}
	for _, k := range r.KeptFrom {
		sizes := make([]string, len(k.Sizes))
		for i, n := range k.Sizes {
			sizes[i] = strconv.Itoa(n)
		}
		p("The rows of %s Instances are those of the report of %s, kept whole (`-keep`), with the manager of that day.",
			strings.Join(sizes, " and "), k.Date)
	}
	if len(r.KeptFrom) > 0 {
		p("The others, and everything after this section's tables but the rows of those sizes, are this run's (%s).", r.Date)
	}
}

// writeSharded sets the run over two shards' managers beside the one
// manager's of the same size.
func writeSharded(p func(string, ...any), r *Report) {
	s := r.Sharded
	if s == nil {
		return
	}
	one, found := sizeOf(r.Scale, s.Instances)
	p("Sharded: %d Instances over one manager (the run above) and over two — the unsharded manager, started with", s.Instances)
	p("`--sharded`, and one started with `--shard=%s`, each with half the Instances (`%s`), in one run alone in", benchShard,
		kudov1beta1.ShardLabel)
	p("the cluster, each manager started for it. Each caches the objects of its own Instances only, which carry its label.")
	if s.MemoryLimitMiB > 0 {
		p("Each runs as in a container of half one manager's memory limit, %.0f MiB, whose 0.9 is its Go soft limit, as a", s.MemoryLimitMiB)
		p("user who splits a manager in two gives each: under a looser limit a manager's heap grows into the room it is")
		p("given, collected less often, and its peak RSS says more of that room than of what it needs.")
	}
	p("")
	p("| managers | all COMPLETE | managers' CPU | peak RSS |")
	p("|---|---|---|---|")
	if found {
		p("| 1 | %.2f s | %.1f s | %.0f MiB |", one.Seconds, one.CPUSeconds, one.PeakRSSMiB)
	}
	p("| 2 | %.2f s | %.1f s + %.1f s | %.0f MiB + %.0f MiB |", s.Seconds, s.CPUSeconds[0], s.CPUSeconds[1],
		s.PeakRSSMiB[0], s.PeakRSSMiB[1])
	p("")
	if peak := max(s.PeakRSSMiB[0], s.PeakRSSMiB[1]); s.MemoryLimitMiB > 0 && peak > s.MemoryLimitMiB && found && one.RSSFileMiB > 0 {
		p("A peak RSS over the limit counts the pages of the binary a manager has run, file-backed (%.0f MiB at the end of", one.RSSFileMiB)
		p("the one manager's run): in a container at its limit the kernel takes those back, to read them again when needed,")
		p("before it stops a process; give a shard that much room beyond its share to spare it that.")
	}
	if found {
		p("Goal: each of two shards' managers takes about half the memory of one (at most 60%%) — %s (%.0f%% and %.0f%%).",
			verdict(max(s.PeakRSSMiB[0], s.PeakRSSMiB[1]) <= 0.6*one.PeakRSSMiB),
			100*s.PeakRSSMiB[0]/one.PeakRSSMiB, 100*s.PeakRSSMiB[1]/one.PeakRSSMiB)
	}
	p("Where the control plane already fills the machine's cores, a second manager adds work that competes with it for")
	p("them: shards split memory and the manager's CPU, not the API server's (docs/installing.md says how to choose them).")
	p("")
}

// writeRestart tells how a killed manager caught up with the Instances.
func writeRestart(p func(string, ...any), rs *Restart) {
	if rs == nil {
		return
	}
	p("Restart: with the %d Instances of the largest run COMPLETE and unchanged, the manager was killed (SIGKILL) and", rs.Instances)
	p("started again. It had reconciled each Instance once %.1f s after its start, its caches' sync included, made %.0f",
		rs.Seconds, rs.Writes)
	p("writes and %.0f requests in all until quiet (%s; the access reviews of each kind's first watch, creates the API", sum(rs.Requests),
		verbs(rs.Requests))
	p("server answers without storing them, are no writes), and its memory peaked at %.0f MiB (%.1f CPU s).", rs.PeakRSSMiB, rs.CPUSeconds)
	p("Goals: no writes — %s; every Instance reconciled within 60 s — %s.", verdict(rs.Writes == 0), verdict(rs.Seconds <= 60))
	p("")
}

// writeIdle tells what the manager did through a resync with nothing to do.
func writeIdle(p func(string, ...any), i *Idle) {
	if i == nil {
		return
	}
	p("Idle: the scale runs leave the manager's resync period at its default (10 hours); the restart above set")
	p("`--sync-period=%s` and, with %d Instances and nothing changing, it resynced (%.0f Instance reconciles in %.0f s) and made",
		i.SyncPeriod, i.Instances, i.Reconciles, i.Seconds)
	p("%.0f writes and %.0f requests in all (%s). Goal: no writes while idle — %s.",
		writes(i.Requests), sum(i.Requests), verbs(i.Requests), verdict(writes(i.Requests) == 0))
	p("")
}

// sizeOf is the scale size of n Instances.
func sizeOf(sizes []Scale, n int) (Scale, bool) {
	for _, s := range sizes {
		if s.Instances == n {
			return s, true
		}
	}
	return Scale{}, false
}

// largestSize is the number of Instances of the largest scale size.
func largestSize(sizes []Scale) int {
	if len(sizes) == 0 {
		return 0
	}
	return sizes[len(sizes)-1].Instances
}

// writeWebhookCalls tells how often the API server called the Instance
// webhooks, against the two calls of each Instance's create: the end of a
// plan run is not sent to them (config/webhook's match conditions).
func writeWebhookCalls(p func(string, ...any), runs []Scale) {
	var sizes []string
	met := true
	for _, s := range runs {
		if s.WebhookCalls == 0 {
			continue
		}
		perInstance := s.WebhookCalls / float64(s.Instances)
		sizes = append(sizes, fmt.Sprintf("%.2f at %d", perInstance, s.Instances))
		met = met && perInstance <= 2
	}
	if len(sizes) == 0 {
		return
	}
	p("Calls of the Instance webhooks per Instance, from the API server's metrics: %s.", strings.Join(sizes, ", "))
	p("Goal: 2, those of its create (mutating and validating) — %s.", verdict(met))
	p("")
}

// writeGrowth states the goals of growing from 1,000 Instances to the largest
// size: cost per Instance flat, memory bounded, requests per resource alike.
func writeGrowth(p func(string, ...any), r *Report) {
	at1000, found := sizeOf(r.Scale, 1000)
	largest := r.Scale[len(r.Scale)-1]
	if !found || largest.Instances <= 1000 {
		return
	}
	perInstance := func(s Scale) float64 { return s.Seconds / float64(s.Instances) }
	perResource := func(s Scale) float64 { return sum(s.Requests) / float64(s.Instances) / scaleResources }
	ratio := perResource(largest) / perResource(at1000)
	p("Growth to %d: time per Instance %.1f ms against %.1f ms at 1,000 (%.2f×), goal ≤ 1.2× — %s; requests per resource",
		largest.Instances, 1000*perInstance(largest), 1000*perInstance(at1000), perInstance(largest)/perInstance(at1000),
		verdict(perInstance(largest) <= 1.2*perInstance(at1000)))
	// The goal is that the cost does not grow: fewer requests an object at
	// the larger size (events aggregate) meet it.
	p("%.2f against %.2f (%+.1f%%), goal at most 5%% more — %s.", perResource(largest), perResource(at1000), 100*(ratio-1),
		verdict(ratio <= 1.05))
	if largest.FloorSeconds > 0 && at1000.FloorSeconds > 0 {
		floorPerInstance := func(s Scale) float64 { return s.FloorSeconds / float64(s.Instances) }
		p("The floor's own time per Instance grew %.2f× (%.1f ms against %.1f ms): the control plane's share of the growth;",
			floorPerInstance(largest)/floorPerInstance(at1000), 1000*floorPerInstance(largest), 1000*floorPerInstance(at1000))
		p("kudo-ng's time over the floor's went from %.2f× at 1,000 to %.2f× at %d.",
			at1000.Seconds/at1000.FloorSeconds, largest.Seconds/largest.FloorSeconds, largest.Instances)
	}
	if s, ok := sizeOf(r.Scale, 10000); ok {
		p("Manager peak RSS at 10,000 ≤ 500 MiB — %s (%.0f MiB).", verdict(s.PeakRSSMiB <= 500), s.PeakRSSMiB)
	}
	p("")
}

// writeInstanceBytes tells how large an Instance is at the end of a run:
// what each of its writes and watch events carries.
func writeInstanceBytes(p func(string, ...any), runs []Scale) {
	if len(runs) == 0 || runs[len(runs)-1].InstanceBytes == nil {
		return
	}
	s := runs[len(runs)-1]
	b := s.InstanceBytes
	p("An Instance of the scale package at the end of the %d run is %.1f KiB as JSON, on average: %.1f KiB of status,",
		s.Instances, b.Whole/1024, b.Status/1024)
	p("%.1f KiB of managed fields. The API server decodes, validates and encodes that much at each of its writes, and", b.ManagedFields/1024)
	p("sends it with each watch event.")
	p("")
}

// writeMultiTenant sets each size's multi-tenant run beside its plain one.
func writeMultiTenant(p func(string, ...any), runs []Scale) {
	if len(runs) == 0 || runs[0].MultiTenant == nil {
		return
	}
	p("Multi-tenant: the scale runs once more, as often, before the plain ones and each alone in the cluster as they")
	p("are, with the manager started with `--multi-tenant`: every Instance's work impersonates its namespace's")
	p("`default` service account, which a Role lets do what the scale package needs (as `kubectl kudo rbac` grants it).")
	p("Median runs:")
	p("")
	p("| Instances | plain | multi-tenant | multi-tenant range | multi-tenant / plain | manager CPU, plain / multi-tenant |" +
		" requests, plain / multi-tenant |")
	p("|---|---|---|---|---|---|---|")
	worst := 0.0
	for _, s := range runs {
		t := s.MultiTenant
		if t == nil {
			continue
		}
		worst = max(worst, t.Seconds/s.Seconds)
		p("| %d | %.2f s | %.2f s | %s | %.2f× | %.1f / %.1f s | %.0f / %.0f |", s.Instances, s.Seconds, t.Seconds, span(t.Runs),
			t.Seconds/s.Seconds, s.CPUSeconds, t.CPUSeconds, sum(s.Requests), sum(t.Requests))
	}
	p("")
	p("Goal: the multi-tenant run ≤ 1.15× the plain run at every size up to 1,000 — %s.", verdict(worst <= 1.15))
	p("")
}

// writeTyped sets each size's typed run beside its plain one.
func writeTyped(p func(string, ...any), runs []Scale) {
	if len(runs) == 0 || runs[0].Typed == nil {
		return
	}
	p("Typed objects (docs/typed-apis.md): the scale runs once more, as often, after the multi-tenant ones and each alone in")
	p("the cluster, creating objects of the package's own kind (`BenchScale`) in place of Instances; each makes the")
	p("Instance of its name, which runs as a plain one, and a run ends when every typed object's status shows deploy")
	p("COMPLETE. Median runs:")
	p("")
	p("| objects | Instances | typed | typed range | typed / Instances | manager CPU, Instances / typed |" +
		" requests, Instances / typed | requests, typed / Instances |")
	p("|---|---|---|---|---|---|---|---|")
	worstTime, worstRequests := 0.0, 0.0
	for _, s := range runs {
		t := s.Typed
		if t == nil {
			continue
		}
		worstTime, worstRequests = max(worstTime, t.Seconds/s.Seconds), max(worstRequests, sum(t.Requests)/sum(s.Requests))
		p("| %d | %.2f s | %.2f s | %s | %.2f× | %.1f / %.1f s | %.0f / %.0f | %.2f× |", s.Instances, s.Seconds, t.Seconds,
			span(t.Runs), t.Seconds/s.Seconds, s.CPUSeconds, t.CPUSeconds, sum(s.Requests), sum(t.Requests),
			sum(t.Requests)/sum(s.Requests))
	}
	p("")
	p("Goal: typed objects take at most 1.15× the time and the requests of Instances at every size up to 1,000 — time %s, requests %s.",
		verdict(worstTime <= 1.15), verdict(worstRequests <= 1.15))
	p("")
}

// writeHelmOperator sets the scale runs beside the helm-operator's.
func writeHelmOperator(p func(string, ...any), r *Report) {
	if len(r.Scale) == 0 || r.Scale[0].HelmOperator == nil {
		return
	}
	p("## 3. Against the helm-operator")
	p("")
	p("operator-sdk's helm-operator (the controller of `operator-sdk init --plugins helm` projects), built from")
	p("operator-sdk's module at the toolchain's version and run as the manager is, a process beside the cluster, with its")
	p("defaults: as many concurrent reconciles as cores, a reconcile period of a minute. It installs the scale package as a")
	p("chart of the same five objects (`test/bench/testdata/helm-operator`), a release per ScaleApp, created 32 at a")
	p("time. Each size up to `-helm-operator-max` (3,000) runs as often as fits in 1,000 releases, each run alone in the")
	p("cluster, after all of kudo-ng's and the floors'; the time is until every release is deployed (its `Deployed` condition) and every")
	p("Deployment is Current, which is what kudo-ng's COMPLETE says. Its CPU and peak RSS are read as the manager's; its")
	p("API requests are counted by a proxy in front of the API server, by verb and resource as the manager's own metric")
	p("counts them (`internal/apimetrics`).")
	p("")
	columns := []string{"Instances", "kudo-ng", "helm-operator", "helm-operator range", "kudo-ng / helm-operator",
		"requests per resource, kudo-ng / helm-operator", "CPU, kudo-ng / helm-operator", "peak RSS, kudo-ng / helm-operator"}
	p("| %s |", strings.Join(columns, " | "))
	p("|%s", strings.Repeat("---|", len(columns)))
	var measured []Scale
	for _, s := range r.Scale {
		if s.HelmOperator != nil {
			measured = append(measured, s)
		}
	}
	for _, s := range measured {
		h := s.HelmOperator
		perResource := float64(s.Instances * scaleResources)
		p("| %d | %.2f s | %.2f s | %s | %.2f× | %.2f / %.2f = %.2f× | %.1f / %.1f s | %.0f / %.0f MiB = %.2f× |",
			s.Instances, s.Seconds, h.Seconds, span(h.Runs), s.Seconds/h.Seconds,
			sum(s.Requests)/perResource, sum(h.Requests)/perResource, sum(s.Requests)/sum(h.Requests),
			s.CPUSeconds, h.CPUSeconds, s.PeakRSSMiB, h.PeakRSSMiB, s.PeakRSSMiB/h.PeakRSSMiB)
	}
	p("")
	for _, s := range measured {
		p("The helm-operator's requests at %d: %s.", s.Instances, verbs(s.HelmOperator.Requests))
	}
	p("")
	if last := measured[len(measured)-1]; last.Calls != nil && last.HelmOperator.Calls != nil {
		p("By verb and resource at %d, per release or Instance. The helm-operator: %s.", last.Instances,
			byCall(last.HelmOperator.Calls, last.Instances))
		p("kudo-ng: %s.", byCall(last.Calls, last.Instances))
		p("")
	}
	for _, s := range measured {
		h := s.HelmOperator
		switch s.Instances {
		case 100:
			p("Goal: kudo-ng in ≤ 0.5× the helm-operator's time at 100 — %s.", verdict(s.Seconds <= 0.5*h.Seconds))
		case 1000:
			p("Goals at 1,000: ≤ 0.5× its time — %s; ≤ 0.5× its requests per resource — %s; ≤ 0.5× its RSS — %s.",
				verdict(s.Seconds <= 0.5*h.Seconds), verdict(sum(s.Requests) <= 0.5*sum(h.Requests)),
				verdict(s.PeakRSSMiB <= 0.5*h.PeakRSSMiB))
		}
	}
	writeHelmTask(p, measured)
	if i, idle := r.HelmOperatorIdle, r.Idle; i != nil && idle != nil {
		p("")
		p("Idle: through one reconcile period (%s) with its %d releases and nothing changing, the helm-operator used",
			i.Period, i.Releases)
		p("%.1f CPU s and made %.0f writes and %.0f requests in all (%s); kudo-ng's resync above made %.0f writes.",
			i.CPUSeconds, writes(i.Requests), sum(i.Requests), verbs(i.Requests), writes(idle.Requests))
	}
	p("")
}

// writeHelmTask sets the helm-operator's chart run as a kudo-ng Helm task
// beside the helm-operator's runs of it and kudo-ng's of the scale package.
func writeHelmTask(p func(string, ...any), measured []Scale) {
	var both []Scale
	for _, s := range measured {
		if s.HelmTask != nil {
			both = append(both, s)
		}
	}
	if len(both) == 0 {
		return
	}
	p("")
	p("The same chart as a kudo-ng Helm task (docs/helm.md): `kubectl kudo package import` of it, a package of one Helm task")
	p("in a one-step deploy plan, its `replicas` a parameter; an Instance a release. Its runs go after the typed runs of")
	p("each size, as often, each alone in the cluster. The manager renders each chart in a child process of its own")
	p("(its CPU, waited for, is the manager's; its memory is not in the manager's peak RSS), and keeps what it rendered")
	p("for the reconciles after. Median runs:")
	p("")
	columns := []string{"Instances", "Helm task", "Helm task range", "Helm task / helm-operator", "Helm task / templates",
		"requests per resource, Helm task / helm-operator", "CPU, Helm task / helm-operator", "peak RSS, Helm task / helm-operator"}
	p("| %s |", strings.Join(columns, " | "))
	p("|%s", strings.Repeat("---|", len(columns)))
	for _, s := range both {
		t, h := s.HelmTask, s.HelmOperator
		perResource := float64(s.Instances * scaleResources)
		p("| %d | %.2f s | %s | %.2f× | %.2f× | %.2f / %.2f = %.2f× | %.1f / %.1f s | %.0f / %.0f MiB = %.2f× |",
			s.Instances, t.Seconds, span(t.Runs), t.Seconds/h.Seconds, t.Seconds/s.Seconds,
			sum(t.Requests)/perResource, sum(h.Requests)/perResource, sum(t.Requests)/sum(h.Requests),
			t.CPUSeconds, h.CPUSeconds, t.PeakRSSMiB, h.PeakRSSMiB, t.PeakRSSMiB/h.PeakRSSMiB)
	}
	if last := both[len(both)-1]; last.HelmTask.Calls != nil {
		p("")
		p("The Helm task's by verb and resource at %d, per Instance: %s.", last.Instances, byCall(last.HelmTask.Calls, last.Instances))
	}
}

// eventsDropped: a scale run created fewer than the two events each plan
// run records (PlanStarted, PlanFinished) per Instance.
func eventsDropped(runs []Scale) bool {
	for _, s := range runs {
		if s.Requests["create"] < 2*float64(s.Instances) {
			return true
		}
	}
	return false
}

// byCall lists requests by verb and resource per one of n, the most first.
func byCall(calls map[string]float64, n int) string {
	keys := slices.Collect(maps.Keys(calls))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(calls[b], calls[a]), cmp.Compare(a, b)) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if per := calls[k] / float64(n); per >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, per))
		}
	}
	return strings.Join(parts, ", ")
}

var verbNames = []string{"get", "list", "watch", "create", "apply", "patch", "update", "delete"}

// instanceWrites tells the writes to Instances per plan run, of n runs: in
// all, then the status's and the object's.
func instanceWrites(writes map[string]float64, n float64) string {
	status := writes[instancesResource+"/status"] / n
	object := writes[instancesResource] / n
	return fmt.Sprintf("%.2f (status %.2f, the Instance itself %.2f)", sum(writes)/n, status, object)
}

// instanceWritesOfCalls picks the writes to Instances, by resource, out of
// requests by "<verb> <resource>".
func instanceWritesOfCalls(calls map[string]float64) map[string]float64 {
	writes := map[string]float64{}
	for call, v := range calls {
		verb, resource, _ := strings.Cut(call, " ")
		if isWrite(verb) && strings.HasPrefix(resource, instancesResource) {
			writes[resource] += v
		}
	}
	return writes
}

func verbs(requests map[string]float64) string {
	var parts []string
	for _, v := range verbNames {
		if requests[v] != 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", v, requests[v]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// writeAPIServerWork tells where the API server's CPU went in the largest
// run and in its floor, and what kudo-ng added.
func writeAPIServerWork(p func(string, ...any), s Scale) {
	p("Where the API server's CPU went in the %d run, in its floor and in the helm-operator's run (section 3), each", s.Instances)
	p("profiled over the same %d s from its first create (`bin/bench-apiserver-%d.pprof`, `bin/bench-apiserver-%s-%d.pprof`,",
		apiServerProfileSeconds, s.Instances, floorRunName, s.Instances)
	if s.HelmOperator != nil {
		p("`bin/bench-apiserver-%s-%d.pprof`), by what is on each sample's stack:", helmOperatorRunName, s.Instances)
	} else {
		p("the helm-operator's not run at this size), by what is on each sample's stack:")
	}
	p("")
	p("| work | kudo-ng | floor | kudo-ng − floor | helm-operator |")
	p("|---|---|---|---|---|")
	var run, floor, helmOperator, customResources float64
	// The helm-operator runs the sizes up to -helm-operator-max only.
	helmCell := func(seconds float64) string {
		if s.HelmOperator == nil {
			return "—"
		}
		return fmt.Sprintf("%.2f s", seconds)
	}
	for i, w := range s.APIServerWork {
		p("| %s | %.2f s | %.2f s | %+.2f s | %s |", w.Work, w.Seconds, w.FloorSeconds, w.Seconds-w.FloorSeconds, helmCell(w.HelmOperatorSeconds))
		run, floor, helmOperator = run+w.Seconds, floor+w.FloorSeconds, helmOperator+w.HelmOperatorSeconds
		if i < customResourceWork {
			customResources += w.Seconds - w.FloorSeconds
		}
	}
	p("| all | %.2f s | %.2f s | %+.2f s | %s |", run, floor, run-floor, helmCell(helmOperator))
	p("")
	p("The first %d rows are the Instances themselves — each one's create, its status writes and the clearing of", customResourceWork)
	if customResources > run-floor {
		// A window shorter than the runs catches each at another point of
		// its work: the floor's objects come faster than kudo-ng's.
		p("spec.planExecution, their admission and their watches — and took %.2f s. The %d s window is a part of runs this", customResources,
			apiServerProfileSeconds)
		p("long, in which the floor had applied more objects than kudo-ng: its other rows do not compare.")
		p("")
		return
	}
	p("spec.planExecution, their admission and their watches — and make %.2f s of the %.2f s kudo-ng added (%.0f%%); the", customResources,
		run-floor, 100*customResources/(run-floor))
	p("collector's share grows with the JSON they allocate.")
	p("")
}
