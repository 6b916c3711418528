package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// cpuProfile writes a CPU profile of one sample per stack, each of the given
// nanoseconds; a stack lists function names from the leaf up.
func cpuProfile(t *testing.T, samples map[int64][]string) string {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
	}
	functions := map[string]*profile.Function{}
	for ns, stack := range samples {
		s := &profile.Sample{Value: []int64{1, ns}}
		for _, name := range stack {
			f, ok := functions[name]
			if !ok {
				f = &profile.Function{ID: uint64(len(functions) + 1), Name: name}
				functions[name] = f
				p.Function = append(p.Function, f)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return writeProfile(t, p)
}

func writeProfile(t *testing.T, p *profile.Profile) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profile.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompareAPIServerWork(t *testing.T) {
	const s = int64(1e9)
	run := cpuProfile(t, map[int64][]string{
		// A status write's JSON decoding counts as the status write.
		2 * s: {"encoding/json.Unmarshal", "k8s.io/apiextensions-apiserver/pkg/registry/customresource.(*StatusREST).Update",
			"k8s.io/apiserver/pkg/endpoints/handlers/finisher.finishRequest.func1"},
		3 * s: {"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating.(*mutatingDispatcher).Dispatch",
			"k8s.io/apiextensions-apiserver/pkg/apiserver.(*crdHandler).ServeHTTP"},
		5 * s:  {"k8s.io/apiextensions-apiserver/pkg/apiserver.schemaCoercingDecoder.Decode"},
		7 * s:  {"runtime.gcBgMarkWorker"},
		11 * s: {"k8s.io/apiserver/pkg/registry/generic/registry.(*Store).Update"},
	})
	floor := cpuProfile(t, map[int64][]string{
		13 * s: {"k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP"},
		17 * s: {"runtime.gcBgMarkWorker"},
	})
	rows, err := compareAPIServerWork(run, floor)
	if err != nil {
		t.Fatal(err)
	}
	helmOperator := cpuProfile(t, map[int64][]string{
		19 * s: {"k8s.io/apiextensions-apiserver/pkg/registry/customresource.(*StatusREST).Update"},
	})
	if err := addAPIServerWork(rows, helmOperator); err != nil {
		t.Fatal(err)
	}
	want := []APIServerWork{
		{apiServerWork[0].work, 2, 0, 19},
		{apiServerWork[1].work, 3, 0, 0},
		{apiServerWork[2].work, 5, 0, 0},
		{apiServerWork[3].work, 0, 13, 0},
		{apiServerWork[4].work, 7, 17, 0},
		{otherWork, 11, 0, 0},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, rows[i], want[i])
		}
	}
}

func TestCompareAPIServerWorkRefusesOtherProfiles(t *testing.T) {
	path := writeProfile(t, &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}}})
	if _, err := compareAPIServerWork(path, path); err == nil {
		t.Error("a heap profile was read as a CPU profile")
	}
}
