package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestReportOfTheOptInSizes: a report up to 10,000 Instances, whose largest
// sizes have no multi-tenant, typed or helm-operator runs, states the
// growth, restart, shard and drift goals with their figures.
func TestReportOfTheOptInSizes(t *testing.T) {
	side := &SideRun{Seconds: 10, PeakRSSMiB: 100, Requests: map[string]float64{"apply": 5000}}
	size := func(n int, seconds, rss float64) Scale {
		return Scale{Instances: n, Seconds: seconds, Runs: []float64{seconds}, FloorSeconds: seconds / 1.1,
			PeakRSSMiB: rss, Requests: map[string]float64{"apply": 5 * float64(n), "patch": 3 * float64(n)},
			QueueDepths: []float64{0, 40, 3}}
	}
	at1000 := size(1000, 40, 140)
	at1000.MultiTenant, at1000.Typed, at1000.HelmOperator = side, side, side
	at3000 := size(3000, 130, 260)
	at3000.HelmOperator = side
	r := &Report{
		Latency: &Latency{Kudo: Distribution{Median: 1, P95: 1}, Floor: Distribution{Median: 1, P95: 1}},
		Scale:   []Scale{at1000, at3000, size(10000, 500, 480)},
		Sharded: &Sharded{Instances: 10000, Seconds: 520, PeakRSSMiB: [2]float64{250, 260}},
		Restart: &Restart{Instances: 10000, Seconds: 42, Requests: map[string]float64{"create": 10, "list": 9, "watch": 9}, PeakRSSMiB: 300},
		Idle:    &Idle{Instances: 10000, Requests: map[string]float64{}},
		Drift:   &Drift{Instances: 100, Kind: "ConfigMap", Name: "x", Recreate: Distribution{Median: 0.3, P95: 1.5}},
	}
	md := r.markdown()
	for _, want := range []string{
		"Growth to 10000: time per Instance 50.0 ms against 40.0 ms at 1,000 (1.25×), goal ≤ 1.2× — **not met**",
		"goal at most 5% more — met",
		"Manager peak RSS at 10,000 ≤ 500 MiB — met (480 MiB)",
		"at most 60%) — met (52% and 54%)",
		"Goals: no writes — met; every Instance reconciled within 60 s — met.",
		"Goal: p95 ≤ 2 s beside 10000 Instances — met.",
		"Goal: no writes while idle — met.",
		"| 10000 | 1 | 500.00 s |",
		"![Time to all COMPLETE",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(md, "| 10000 | 500.00 s |") {
		t.Error("the helm-operator's table has a row for 10,000, which it did not run")
	}
	// Fewer requests an object at 10,000 meet the goal; 10 % more do not.
	for factor, want := range map[float64]string{0.8: "(-20.0%), goal at most 5% more — met", 1.1: "(+10.0%), goal at most 5% more — **not met**"} {
		r.Scale[2].Requests = map[string]float64{"apply": factor * 50000, "patch": factor * 30000}
		if md := r.markdown(); !strings.Contains(md, want) {
			t.Errorf("with %.1f× the requests at 10,000, the report lacks %q", factor, want)
		}
	}
}

// An opt-in size run again after a change keeps the other sizes of the
// report before it, whole, and says so.
func TestKeepTakesTheSizesNotMeasured(t *testing.T) {
	earlier := &Report{Date: "2026-11-30T16:17:00Z", Scale: []Scale{
		{Instances: 100, Seconds: 12}, {Instances: 1000, Seconds: 125, HelmOperator: &SideRun{Seconds: 432}}, {Instances: 10000, Seconds: 1458},
	}}
	r := &Report{Scale: []Scale{{Instances: 10000, Seconds: 1400}}}
	r.keep(earlier)
	var got []float64
	for _, s := range r.Scale {
		got = append(got, s.Seconds)
	}
	if want := []float64{12, 125, 1400}; !slices.Equal(got, want) {
		t.Errorf("kept runs take %v s, want %v", got, want)
	}
	if r.Scale[1].HelmOperator == nil || len(r.KeptFrom) != 1 || !slices.Equal(r.KeptFrom[0].Sizes, []int{100, 1000}) ||
		r.KeptFrom[0].Date != earlier.Date {
		t.Errorf("kept = %+v, with the helm-operator's run %v", r.KeptFrom, r.Scale[1].HelmOperator)
	}
	r.Latency = &Latency{Kudo: Distribution{Median: 1, P95: 1}, Floor: Distribution{Median: 1, P95: 1}}
	r.Idle = &Idle{Instances: 10000, Requests: map[string]float64{}}
	r.Drift = &Drift{Instances: 100, Kind: "ConfigMap", Name: "x", Recreate: Distribution{Median: 0.3, P95: 1.5}}
	if md := r.markdown(); !strings.Contains(md, "The rows of 100 and 1000 Instances are those of the report of 2026-11-30T16:17:00Z") {
		t.Error("the report does not say which rows it kept")
	}

	// Rewritten, the kept sizes come from the first report that has them.
	sameDay := &Report{Date: "2026-12-01T15:45:00Z", Scale: []Scale{{Instances: 1000, Seconds: 120}}}
	r.keepAgain([]*Report{sameDay, earlier})
	got = nil
	for _, s := range r.Scale {
		got = append(got, s.Seconds)
	}
	if want := []float64{12, 120, 1400}; !slices.Equal(got, want) {
		t.Errorf("kept again, runs take %v s, want %v", got, want)
	}
	md := r.markdown()
	for _, want := range []string{"The rows of 1000 Instances are those of the report of 2026-12-01T15:45:00Z",
		"The rows of 100 Instances are those of the report of 2026-11-30T16:17:00Z"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// The helm-operator's chart as a Helm task goes beside the helm-operator's
// runs of it and kudo-ng's plain runs, at the sizes all three ran.
func TestReportOfTheHelmTask(t *testing.T) {
	at := func(seconds float64) *SideRun {
		return &SideRun{Seconds: seconds, Runs: []float64{seconds}, CPUSeconds: seconds, PeakRSSMiB: 100,
			Requests: map[string]float64{"apply": 50 * seconds}}
	}
	plain := Scale{Instances: 100, Seconds: 10, Runs: []float64{10}, Requests: map[string]float64{"apply": 500}}
	plain.HelmOperator, plain.HelmTask = at(40), at(20)
	unmatched := Scale{Instances: 3000, Seconds: 300, Runs: []float64{300}, Requests: map[string]float64{"apply": 15000}}
	unmatched.HelmOperator = at(1200)
	var b strings.Builder
	writeHelmOperator(func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }, &Report{Scale: []Scale{plain, unmatched}})
	md := b.String()
	want := "| 100 | 20.00 s | — | 0.50× | 2.00× | 2.00 / 4.00 = 0.50× | 20.0 / 40.0 s | 100 / 100 MiB = 1.00× |"
	if !strings.Contains(md, want) {
		t.Errorf("the report lacks the Helm task's row %q:\n%s", want, md)
	}
	if strings.Contains(md, "| 3000 | 0.00 s") || strings.Count(md, "Helm task range") != 1 {
		t.Error("the Helm task's table has a row for a size it did not run")
	}
}
