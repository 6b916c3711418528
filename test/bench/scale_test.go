package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/kudo-ng/kudo/internal/packages"
)

func TestScaleRuns(t *testing.T) {
	tests := []struct{ n, maxRuns, want int }{
		{100, 5, 5},
		{300, 5, 3},
		{1000, 5, 3},
		{3000, 5, 1},
		{10000, 5, 1},
		{100, 1, 1},
		{10, 20, 20},
	}
	for _, tt := range tests {
		if got := scaleRuns(tt.n, tt.maxRuns); got != tt.want {
			t.Errorf("scaleRuns(%d, %d) = %d, want %d", tt.n, tt.maxRuns, got, tt.want)
		}
	}
}

func TestMedianRun(t *testing.T) {
	tests := []struct {
		name string
		runs []float64
		want float64
	}{
		{"one run", []float64{4.2}, 4.2},
		{"odd", []float64{5.1, 3.8, 4.4}, 4.4},
		{"even: the slower middle one", []float64{4.9, 3.8, 4.4, 6.2}, 4.9},
		{"ties", []float64{4.0, 4.0, 3.0}, 4.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seconds := func(r float64) float64 { return r }
			if got := medianRun(tt.runs, seconds); got != tt.want {
				t.Errorf("medianRun(%v) = %v, want %v", tt.runs, got, tt.want)
			}
			if got := times(tt.runs, seconds); !slices.Equal(got, tt.runs) {
				t.Errorf("times() = %v, want the runs in order %v", got, tt.runs)
			}
		})
	}
}

// TestTheLatencyPackageWithARuleVerifies: the health rule the latency runs
// judge the StatefulSet with type-checks against apps/v1 StatefulSet.
func TestTheLatencyPackageWithARuleVerifies(t *testing.T) {
	pkg, err := withStatefulSetRule(filepath.Join("testdata", "latency"))
	if err != nil {
		t.Fatal(err)
	}
	if r := packages.Verify(pkg, packages.VerifyOptions{}); len(r.Errors) > 0 {
		t.Errorf("verify: %v", r.Errors)
	}
}

func TestSideRuns(t *testing.T) {
	tests := []struct{ n, maxRuns, want int }{{100, 5, 5}, {300, 5, 3}, {1000, 5, 1}, {3000, 5, 1}}
	for _, tt := range tests {
		if got := sideRuns(tt.n, tt.maxRuns); got != tt.want {
			t.Errorf("sideRuns(%d, %d) = %d, want %d", tt.n, tt.maxRuns, got, tt.want)
		}
	}
}
