package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/google/pprof/profile"
	"k8s.io/client-go/kubernetes"

	"github.com/kudo-ng/kudo/test/localcluster"
)

// apiServerProfileSeconds is how long the API server's CPU profiles of the
// largest run and of its floor last: one window for both, longer than either
// run, so that what the two profiles differ by is what kudo-ng adds.
const apiServerProfileSeconds = 100

// APIServerWork is the API server's CPU time on one kind of work, during
// the largest scale run, its floor and the helm-operator's run, each over
// the same window.
type APIServerWork struct {
	Work                                       string
	Seconds, FloorSeconds, HelmOperatorSeconds float64
}

// apiServerWork sorts the API server's work by the functions on its stack.
// A sample counts for the first kind whose functions are on it: admission
// runs inside the custom resources' handlers, so it comes before them.
var apiServerWork = []struct {
	work   string
	frames *regexp.Regexp
}{
	{"status writes of the custom resources (Instances; the helm-operator's ScaleApps)", regexp.MustCompile(`customresource\.\(\*StatusREST\)\.Update$`)},
	{"admission webhooks: matching each request against them, and calling them", regexp.MustCompile(`admission/plugin/webhook/(mutating|validating)\.`)},
	{"the other work on custom resources: their decoding, schema validation and handlers", regexp.MustCompile(`^k8s\.io/apiextensions-apiserver/`)},
	{"watches served", regexp.MustCompile(`handlers\.\(\*WatchServer\)\.HandleHTTP$`)},
	{"Go's garbage collector", regexp.MustCompile(`^runtime\.gcBgMarkWorker$`)},
}

// customResourceWork is how many kinds of apiServerWork, first, are work on
// the custom resources themselves.
const customResourceWork = 3

// otherWork names the rest: the writes of the objects themselves, the
// controllers' status updates, events, authentication and the like.
const otherWork = "the rest: the objects' writes, the controllers' status updates, events, the request filters"

// apiServerProfile records the API server's CPU profile into path.
func apiServerProfile(ctx context.Context, c *localcluster.Cluster, path string) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	data, err := cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(apiServerProfileSeconds)).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("the API server's CPU profile: %w", err)
	}
	return os.WriteFile(path, data, 0o644)
}

// The runs beside kudo-ng's that the API server is profiled in.
const (
	floorRunName        = "floor"
	helmOperatorRunName = "helm-operator"
)

// apiServerProfilePath is where the API server's profile of the run of n
// Instances is kept: kudo-ng's, or that of the run named.
func apiServerProfilePath(c *localcluster.Cluster, run string, n int) string {
	if run != "" {
		run += "-"
	}
	return filepath.Join(c.Root, "bin", fmt.Sprintf("bench-apiserver-%s%d.pprof", run, n))
}

// addAPIServerWork adds the helm-operator's profile to rows.
func addAPIServerWork(rows []APIServerWork, helmOperator string) error {
	seconds, err := cpuByWork(helmOperator)
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].HelmOperatorSeconds = seconds[i]
	}
	return nil
}

// compareAPIServerWork is the API server's CPU seconds by kind of work in
// the profile of a run and in that of its floor, all of it last.
func compareAPIServerWork(run, floor string) ([]APIServerWork, error) {
	runSeconds, err := cpuByWork(run)
	if err != nil {
		return nil, err
	}
	floorSeconds, err := cpuByWork(floor)
	if err != nil {
		return nil, err
	}
	var rows []APIServerWork
	for i := range floorSeconds {
		work := otherWork
		if i < len(apiServerWork) {
			work = apiServerWork[i].work
		}
		rows = append(rows, APIServerWork{Work: work, Seconds: runSeconds[i], FloorSeconds: floorSeconds[i]})
	}
	return rows, nil
}

// cpuByWork sums a CPU profile's samples by the kind of work on their
// stack, in the order of apiServerWork, the rest last.
func cpuByWork(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cpu := -1
	for i, t := range p.SampleType {
		if t.Type == "cpu" && t.Unit == "nanoseconds" {
			cpu = i
		}
	}
	if cpu < 0 {
		return nil, fmt.Errorf("%s is not a CPU profile", path)
	}
	seconds := make([]float64, len(apiServerWork)+1)
	for _, s := range p.Sample {
		seconds[workOf(s)] += float64(s.Value[cpu]) / 1e9
	}
	return seconds, nil
}

// workOf is the index in apiServerWork of the first kind whose functions
// are on the sample's stack; len(apiServerWork) for none.
func workOf(s *profile.Sample) int {
	for i, w := range apiServerWork {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && w.frames.MatchString(line.Function.Name) {
					return i
				}
			}
		}
	}
	return len(apiServerWork)
}
