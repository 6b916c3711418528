package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/localcluster"
)

const (
	scalePackage   = "test/bench/testdata/scale"
	scaleResources = 5
)

// Scale is one size: Instances created at once until all deploy plans are
// COMPLETE, and what the manager spent on them.
type Scale struct {
	Instances int
	// Seconds is the median run's; Runs the time of each run, in order. The
	// other figures are the median run's.
	Seconds float64
	Runs    []float64
	// FloorSeconds is the same objects applied without kudo-ng until every
	// Deployment is Current (scaleFloorRun), in the median of FloorRuns.
	FloorSeconds float64
	FloorRuns    []float64
	// ServiceCreateMs and FloorServiceCreateMs are how long the API server
	// took to create a Service, on average, during the run and its floor.
	ServiceCreateMs, FloorServiceCreateMs float64
	// WebhookCalls is how many times the API server called the Instance
	// webhooks in the run: two per Instance, of its create.
	WebhookCalls float64 `json:",omitempty"`
	// ControlPlaneCPU and FloorControlPlaneCPU are the CPU seconds each
	// process of the control plane used from the first create until all were
	// done, in the run and in its floor.
	ControlPlaneCPU, FloorControlPlaneCPU map[string]float64
	// FloorProgramCPU is the CPU seconds the floor program itself used in
	// its median run.
	FloorProgramCPU float64
	// CPUSeconds is the manager's CPU time during the run; PeakRSSMiB its
	// peak resident memory during the run.
	CPUSeconds float64
	PeakRSSMiB float64
	// QueueDepths is the depth of the manager's Instance work queue, each
	// second of the run.
	QueueDepths []float64 `json:",omitempty"`
	// Requests are the manager's API requests during the run, by verb, and
	// Calls by verb and resource; ObjectWrites how many of them wrote the
	// package's objects.
	Requests     map[string]float64
	Calls        map[string]float64 `json:",omitempty"`
	ObjectWrites float64
	// Profile lists the top of the CPU profile taken during the run, and
	// HeapProfile of the heap profile taken at its end, when RSSAnonMiB
	// and RSSFileMiB were resident.
	Profile, HeapProfile   string  `json:",omitempty"`
	RSSAnonMiB, RSSFileMiB float64 `json:",omitempty"`
	// APIServerWork is what the API server did, by kind of work, in the
	// last run of the largest size and in its floor.
	APIServerWork []APIServerWork `json:",omitempty"`
	// InstanceBytes is the mean size of an Instance at the end of the run,
	// as JSON, whole and of its status and managed fields: what each write
	// of it and each watch event carries.
	InstanceBytes *InstanceBytes `json:",omitempty"`
	// MultiTenant is kudo-ng's run of the same size with every Instance's
	// work impersonating a service account; HelmOperator is operator-sdk's
	// helm-operator's.
	MultiTenant  *SideRun `json:",omitempty"`
	HelmOperator *SideRun `json:",omitempty"`
	// Typed is kudo-ng's run of the same size with typed objects of the
	// package in place of Instances (docs/typed-apis.md).
	Typed *SideRun `json:",omitempty"`
	// HelmTask is kudo-ng's run of the same size with the helm-operator's
	// chart as a Helm task (docs/helm.md).
	HelmTask *SideRun `json:",omitempty"`
}

// floorCPU is the CPU seconds the floor's median run used in all: the
// control plane's and the floor program's.
func (s *Scale) floorCPU() float64 { return sum(s.FloorControlPlaneCPU) + s.FloorProgramCPU }

// Idle is what the manager did during a resync with nothing to change.
type Idle struct {
	SyncPeriod string
	Instances  int
	Seconds    float64
	Reconciles float64
	Requests   map[string]float64
}

func measureScale(ctx context.Context, c *localcluster.Cluster, m *manager, cfg *config) ([]Scale, error) {
	pkg, err := packages.Read(filepath.Join(c.Root, scalePackage))
	if err != nil {
		return nil, err
	}
	helmPkg, err := helmTaskPackage(c)
	if err != nil {
		return nil, err
	}
	var results []Scale
	for i, n := range cfg.sizes {
		runs := make([]*Scale, scaleRuns(n, cfg.scaleRuns))
		// Each run has the cluster to itself, the last of the size before
		// included: the largest run's memory is that of its own Instances.
		if i > 0 {
			before := cfg.sizes[i-1]
			if err := resetCluster(ctx, c, m, scaleNamespace(before, scaleRuns(before, cfg.scaleRuns)-1)); err != nil {
				return nil, err
			}
		}
		// The multi-tenant and typed runs compare with the plain ones at the
		// sizes up to 1,000: past it, each would cost as long as the plain run.
		var tenants, typed, helmTask *SideRun
		if n <= maxSideRunSize {
			var err error
			if tenants, err = multiTenantRuns(ctx, c, m, pkg, n, sideRuns(n, cfg.scaleRuns)); err != nil {
				return nil, err
			}
			if typed, err = typedRuns(ctx, c, m, pkg, n, sideRuns(n, cfg.scaleRuns)); err != nil {
				return nil, err
			}
			if helmTask, err = helmTaskRuns(ctx, c, m, helmPkg, n, sideRuns(n, cfg.scaleRuns)); err != nil {
				return nil, err
			}
		}
		for k := range runs {
			if k > 0 {
				if err := resetCluster(ctx, c, m, scaleNamespace(n, k-1)); err != nil {
					return nil, err
				}
			}
			profile := ""
			if i == len(cfg.sizes)-1 && k == len(runs)-1 {
				profile = filepath.Join(c.Root, "bin", fmt.Sprintf("bench-%d.pprof", n))
			}
			s, err := scaleRun(ctx, c, m, pkg, scaleNamespace(n, k), profile, nil, createInstancesOf(c))
			if err != nil {
				return nil, err
			}
			logf("scale %d, run %d: all COMPLETE in %.2fs, CPU %.1fs, peak RSS %.0f MiB, requests %v",
				n, k+1, s.Seconds, s.CPUSeconds, s.PeakRSSMiB, s.Requests)
			runs[k] = s
		}
		seconds := func(s *Scale) float64 { return s.Seconds }
		median := medianRun(runs, seconds)
		median.Runs = times(runs, seconds)
		last := runs[len(runs)-1]
		median.Profile, median.HeapProfile = last.Profile, last.HeapProfile
		median.RSSAnonMiB, median.RSSFileMiB = last.RSSAnonMiB, last.RSSFileMiB
		median.MultiTenant, median.Typed, median.HelmTask = tenants, typed, helmTask
		results = append(results, *median)
	}
	return results, nil
}

// measureScaleFloors adds to each size of the scale runs its floor.
func measureScaleFloors(ctx context.Context, c *localcluster.Cluster, m *manager, cfg *config, results []Scale) error {
	pkg, err := packages.Read(filepath.Join(c.Root, scalePackage))
	if err != nil {
		return err
	}
	// Each run alone in the cluster, as kudo-ng's: the previous one's
	// objects go first, of the size before too.
	var previous namespaces
	for i := range results {
		n := results[i].Instances
		runs := make([]*floorResult, scaleRuns(n, cfg.scaleRuns))
		for k := range runs {
			if previous.n > 0 {
				if err := resetCluster(ctx, c, m, previous); err != nil {
					return err
				}
			}
			previous = floorNamespace(n, k)
			profiled := i == len(results)-1 && k == len(runs)-1
			// Each run's: the cluster may be new (resetCluster).
			dyn, err := dynamic.NewForConfig(c.Config)
			if err != nil {
				return err
			}
			f, err := measureScaleFloor(ctx, c, dyn, pkg, n, k, profiled)
			if err != nil {
				return err
			}
			logf("scale floor %d, run %d: all Current in %.2fs", n, k+1, f.seconds)
			runs[k] = f
		}
		seconds := func(f *floorResult) float64 { return f.seconds }
		median := medianRun(runs, seconds)
		results[i].FloorSeconds, results[i].FloorRuns = median.seconds, times(runs, seconds)
		results[i].FloorControlPlaneCPU, results[i].FloorServiceCreateMs = median.controlPlaneCPU, median.serviceCreateMs
		results[i].FloorProgramCPU = median.programCPU
	}
	last := &results[len(results)-1]
	last.APIServerWork, err = compareAPIServerWork(apiServerProfilePath(c, "", last.Instances),
		apiServerProfilePath(c, floorRunName, last.Instances))
	return err
}

// scaleRuns is how many times a size of n Instances runs, and its floor: up
// to 1,000 as often as fits in 1,000 Instances, but at least 3 times (single
// runs vary by half), and at most maxRuns times; past 1,000, once.
func scaleRuns(n, maxRuns int) int {
	if n > maxSideRunSize {
		return 1
	}
	return min(maxRuns, max(3, 1000/n))
}

// sideRuns is how many times the multi-tenant, typed, Helm task and helm-operator runs
// of a size run: as often as fits in 1,000 Instances, at least once and at
// most maxRuns times.
func sideRuns(n, maxRuns int) int {
	return max(1, min(maxRuns, 1000/n))
}

// maxSideRunSize is the largest size with multi-tenant, typed and Helm task runs.
const maxSideRunSize = 1000

// runTimeout bounds the wait for n Instances, or the floor's objects, to be
// done: at least 10 minutes, and 600 ms an Instance at the opt-in sizes
// (10,000 took 296 ms an Instance here, twice 1,000's).
func runTimeout(n int) time.Duration {
	return max(10*time.Minute, time.Duration(n)*600*time.Millisecond)
}

// medianRun is the run of median time, as benchstat reports a series; of an
// even number of runs, the slower of the middle two.
func medianRun[R any](runs []R, seconds func(R) float64) R {
	sorted := slices.SortedStableFunc(slices.Values(runs), func(a, b R) int { return cmp.Compare(seconds(a), seconds(b)) })
	return sorted[len(sorted)/2]
}

func times[R any](runs []R, seconds func(R) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = seconds(r)
	}
	return out
}

// deleteNamespace deletes the namespace of a run, and waits until it is gone
// with everything in it.
func deleteNamespace(ctx context.Context, c *localcluster.Cluster, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Client.Delete(ctx, ns); err != nil {
		return fmt.Errorf("deleting namespace %s: %w", name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(ns), ns)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("waiting for namespace %s to be deleted: %w", name, err)
	}
	return nil
}

// floorResult is one run of a scale floor.
type floorResult struct {
	seconds, serviceCreateMs, programCPU float64
	controlPlaneCPU                      map[string]float64
}

func measureScaleFloor(
	ctx context.Context, c *localcluster.Cluster, dyn dynamic.Interface, pkg *packages.Package, n, run int, profiled bool,
) (*floorResult, error) {
	plane, err := controlPlaneBefore(c)
	if err != nil {
		return nil, err
	}
	waitProfile := func() error { return nil }
	if profiled {
		waitProfile = inBackground(func() error { return apiServerProfile(ctx, c, apiServerProfilePath(c, floorRunName, n)) })
	}
	programBefore, err := ownCPUSeconds()
	if err != nil {
		return nil, err
	}
	d, err := scaleFloorRun(ctx, c, dyn, pkg, n, run)
	if err != nil {
		return nil, err
	}
	work, err := plane.since(c)
	if err != nil {
		return nil, err
	}
	f := &floorResult{seconds: d.Seconds(), controlPlaneCPU: work.cpu, serviceCreateMs: work.serviceCreateMs}
	programAfter, err := ownCPUSeconds()
	if err != nil {
		return nil, err
	}
	f.programCPU = programAfter - programBefore
	return f, waitProfile()
}

// ownCPUSeconds is the CPU time this process has used: the floor program's,
// while a floor runs.
func ownCPUSeconds() (float64, error) {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0, err
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds(), nil
}

// controlPlaneUse is what the control plane had done before a run: the
// CPU seconds of its processes, its Service creates and webhook calls.
type controlPlaneUse struct {
	cpu    processCPU
	counts apiServerCounts
}

func controlPlaneBefore(c *localcluster.Cluster) (*controlPlaneUse, error) {
	counts, err := readAPIServerCounts(c)
	if err != nil {
		return nil, err
	}
	cpu, err := controlPlaneCPU(c)
	if err != nil {
		return nil, err
	}
	return &controlPlaneUse{cpu: cpu, counts: counts}, nil
}

// controlPlaneWork is what the control plane did in a run.
type controlPlaneWork struct {
	// cpu is the CPU seconds of each of its processes.
	cpu map[string]float64
	// serviceCreateMs is the mean time of a Service create.
	serviceCreateMs float64
	// webhookCalls is how many times the API server called the Instance webhooks.
	webhookCalls float64
}

func (before *controlPlaneUse) since(c *localcluster.Cluster) (controlPlaneWork, error) {
	cpu, err := before.cpu.usedSince(c)
	if err != nil {
		return controlPlaneWork{}, err
	}
	now, err := readAPIServerCounts(c)
	if err != nil {
		return controlPlaneWork{}, err
	}
	return controlPlaneWork{cpu: cpu, serviceCreateMs: before.counts.services.meanMsSince(now.services),
		webhookCalls: now.webhookCalls - before.counts.webhookCalls}, nil
}

// scaleNamespace and floorNamespace name the namespaces of each run of a
// size: creating the namespace and objects of a run just deleted again made
// every later run, the floor's too, some 40 % slower.
func scaleNamespace(n, run int) namespaces {
	return namespaces{name: fmt.Sprintf("scale-%d-%d", n, run+1), n: n}
}

func floorNamespace(n, run int) namespaces {
	return namespaces{name: fmt.Sprintf("floor-%d-%d", n, run+1), n: n}
}

// creator creates the objects of a scale run in its namespaces ns, of the
// OperatorVersion ov, and waits until all are deployed; w watches the
// run's Instances.
type creator func(ctx context.Context, w watch.Interface, ns namespaces, ov string) error

// createInstancesOf creates Instances, as the scale runs do.
func createInstancesOf(c *localcluster.Cluster) creator {
	return func(ctx context.Context, w watch.Interface, ns namespaces, ov string) error {
		return createInstances(ctx, c, w, ns, ov, nil, nil)
	}
}

// scaleRun creates n objects of the package with create in new namespaces
// ns, set up by setup if given, and measures them until all are COMPLETE;
// with a profile path, it profiles the manager and the API server.
func scaleRun(
	ctx context.Context, c *localcluster.Cluster, m *manager, pkg *packages.Package, ns namespaces, profile string,
	setup func(context.Context) error, create creator,
) (*Scale, error) {
	n := ns.n
	ov, w, err := installAndWatch(ctx, c, pkg, ns)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	if setup != nil {
		if err := setup(ctx); err != nil {
			return nil, err
		}
	}
	before, err := m.settled(ctx, runQuiet, time.Minute)
	if err != nil {
		return nil, err
	}
	if err := resetPeakRSS(m.cmd.Process.Pid); err != nil {
		return nil, err
	}
	procBefore, err := m.process()
	if err != nil {
		return nil, err
	}
	plane, err := controlPlaneBefore(c)
	if err != nil {
		return nil, err
	}
	var profiled []func() error
	if profile != "" {
		// A scale run is expected to last about a minute at 1,000.
		profiled = append(profiled, inBackground(func() error { return m.profile(30, profile) }),
			inBackground(func() error { return apiServerProfile(ctx, c, apiServerProfilePath(c, "", n)) }))
	}

	depths := m.sampleQueueDepth(time.Second)
	start := time.Now()
	err = create(ctx, w, ns, ov)
	s := &Scale{Instances: n, Seconds: time.Since(start).Seconds(), QueueDepths: depths()}
	if err != nil {
		return nil, err
	}
	work, err := plane.since(c)
	if err != nil {
		return nil, err
	}
	s.ControlPlaneCPU, s.ServiceCreateMs, s.WebhookCalls = work.cpu, work.serviceCreateMs, work.webhookCalls
	if s.InstanceBytes, err = meanInstanceBytes(ctx, c, ns.of(0)); err != nil {
		return nil, err
	}
	// Requests, CPU and memory are counted once the manager is done, events and all.
	after, err := m.settled(ctx, time.Second, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	procAfter, err := m.process()
	if err != nil {
		return nil, err
	}
	used := spentBetween(before, after)
	s.Requests, s.Calls, s.ObjectWrites = used.Requests, used.Calls, used.ObjectWrites
	s.CPUSeconds, s.PeakRSSMiB = procAfter.CPUSeconds-procBefore.CPUSeconds, procAfter.PeakRSSMiB
	if profile != "" {
		for _, finished := range profiled {
			if err := finished(); err != nil {
				return nil, err
			}
		}
		if s.Profile, err = pprofTop(profile); err != nil {
			return nil, err
		}
		heap := strings.TrimSuffix(profile, ".pprof") + ".heap.pprof"
		if err := m.heapProfile(heap); err != nil {
			return nil, err
		}
		if s.HeapProfile, err = pprofTop(heap, "-sample_index=inuse_space"); err != nil {
			return nil, err
		}
		s.RSSAnonMiB, s.RSSFileMiB = procAfter.RSSAnonMiB, procAfter.RSSFileMiB
	}
	return s, nil
}

// inBackground runs record at once; the function it returns waits for it
// to finish and returns its error.
func inBackground(record func() error) (finished func() error) {
	done := make(chan error, 1)
	go func() { done <- record() }()
	return func() error { return <-done }
}

// pprofTop is the top of a profile, as `go tool pprof -top` prints it.
func pprofTop(profile string, flags ...string) (string, error) {
	out, err := exec.Command("go", append(append([]string{"tool", "pprof", "-top", "-nodecount=12"}, flags...), profile)...).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w", profile, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// installAndWatch installs the package into each of new namespaces ns, and
// watches their Instances from then on; it returns the OperatorVersion's
// name, the same in each.
func installAndWatch(ctx context.Context, c *localcluster.Cluster, pkg *packages.Package, ns namespaces) (string, watch.Interface, error) {
	var ov string
	for _, name := range ns.all() {
		var err error
		if ov, err = installPackage(ctx, c, pkg, name); err != nil {
			return "", nil, err
		}
	}
	w, err := listWatch(ctx, c, &kudov1beta1.InstanceList{}, "")
	if err != nil {
		return "", nil, err
	}
	return ov, ns.only(w), nil
}

// scaleInstanceName names the i-th Instance of a scale run, and of its floor.
func scaleInstanceName(i int) string { return fmt.Sprintf("i-%04d", i) }

// createInstances creates the Instances of namespaces ns with the given
// annotations and, if labelsOf is set, the labels it gives the i-th, 32 at a
// time, and waits until w, a watch of their Instances, has seen all their
// deploy plans COMPLETE.
func createInstances(
	ctx context.Context, c *localcluster.Cluster, w watch.Interface, ns namespaces, ov string, annotations map[string]string,
	labelsOf func(i int) map[string]string,
) error {
	n := ns.n
	// The watch is read while the Instances are created: the API server
	// closes a watch that falls behind.
	complete := make(chan error, 1)
	go func() { complete <- untilComplete(ctx, w, n, runTimeout(n)) }()
	create, cctx := errgroup.WithContext(ctx)
	create.SetLimit(32)
	for i := range n {
		create.Go(func() error {
			inst := newInstance(ns.of(i), scaleInstanceName(i), ov)
			// A map of its own: Create decodes the response into it.
			inst.Annotations = maps.Clone(annotations)
			if labelsOf != nil {
				inst.Labels = labelsOf(i)
			}
			return c.Client.Create(cctx, inst)
		})
	}
	if err := create.Wait(); err != nil {
		return err
	}
	return <-complete
}

// listWatch lists the objects of list's kind in namespace ns (every
// namespace if empty) into list, and watches them from there on.
func listWatch(ctx context.Context, c *localcluster.Cluster, list client.ObjectList, ns string) (watch.Interface, error) {
	kind := list.DeepCopyObject().(client.ObjectList)
	if err := c.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	return resumingWatch(ctx, list.GetResourceVersion(), func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return c.Client.Watch(ctx, kind, client.InNamespace(ns), &client.ListOptions{Raw: &o})
	})
}

// idleRun waits through one resync of the manager's cache, which restartRun
// started with the resync period syncPeriod, with nothing changing, and
// counts what the manager did.
func idleRun(ctx context.Context, m *manager, instances int, syncPeriod time.Duration) (*Idle, error) {
	before, err := m.settled(ctx, time.Second, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	logf("idle: waiting for a resync of %d Instances (sync period %s)", instances, syncPeriod)
	// client-go checks for resyncs on a timer of the same period, which may
	// fire just before one is due: allow two periods and the jitter.
	if err := m.reconciled(ctx, before[instanceReconciles]+float64(instances), 2*syncPeriod+syncPeriod/2); err != nil {
		return nil, err
	}
	after, err := m.settled(ctx, time.Second, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	return &Idle{
		SyncPeriod: syncPeriod.String(),
		Instances:  instances,
		Seconds:    time.Since(start).Seconds(),
		Reconciles: sub(after, before)[instanceReconciles],
		Requests:   sub(requests(after), requests(before)),
	}, nil
}

// scaleFloorRun is the best any controller could do at scale: the objects of
// n Instances of the package applied with server-side apply, 32 Instances at
// a time, each Instance's steps in order, until every Deployment is Current.
func scaleFloorRun(
	ctx context.Context, c *localcluster.Cluster, dyn dynamic.Interface, pkg *packages.Package, n, run int,
) (time.Duration, error) {
	ns := floorNamespace(n, run)
	if err := ns.create(ctx, c); err != nil {
		return 0, err
	}
	all, err := unstructuredWatch(ctx, dyn.Resource(deploymentsResource))
	if err != nil {
		return 0, err
	}
	w := ns.only(all)
	defer w.Stop()
	current := make(chan error, 1)
	go func() { current <- untilDeploymentsCurrent(ctx, w, n, runTimeout(n)) }()
	start := time.Now()
	apply, actx := errgroup.WithContext(ctx)
	apply.SetLimit(32)
	for i := range n {
		apply.Go(func() error {
			steps, err := renderSteps(pkg, scaleInstanceName(i), ns.of(i))
			if err != nil {
				return err
			}
			for _, objs := range steps {
				for _, obj := range objs {
					if err := applyObject(actx, c, dyn, ns.of(i), obj); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	if err := apply.Wait(); err != nil {
		return 0, err
	}
	if err := <-current; err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func untilDeploymentsCurrent(ctx context.Context, w watch.Interface, n int, timeout time.Duration) error {
	return untilDone(ctx, w, n, timeout, "Deployments", func(obj runtime.Object) (string, bool, error) {
		d, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return "", false, nil
		}
		res, err := status.Compute(d)
		return d.GetName(), err == nil && res.Status == status.CurrentStatus, nil
	})
}

// resumingWatch watches from resource version rv on and, when the API server
// closes the watch (it closes one whose reader falls behind, as the bench's
// can on two busy cores), watches again from the last event read.
func resumingWatch(
	ctx context.Context, rv string, watchFrom func(context.Context, metav1.ListOptions) (watch.Interface, error),
) (watch.Interface, error) {
	return watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: watchFrom})
}

var deploymentsResource = appsv1.SchemeGroupVersion.WithResource("deployments")

// unstructuredWatch lists and watches a resource's objects, resuming,
// unstructured as the API server sends them: kstatus needs the kind, which a
// typed object decoded from a watch lacks, and without it calls any object
// Current.
func unstructuredWatch(ctx context.Context, r dynamic.ResourceInterface) (watch.Interface, error) {
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return resumingWatch(ctx, list.GetResourceVersion(), r.Watch)
}

// serviceCreates is the API server's own account of the Services it created
// (server-side apply or create): how many, and the seconds they took.
type serviceCreates struct{ count, seconds float64 }

// apiServerCounts is what the API server's metrics have counted so far: its
// Service creates, and its calls of kudo-ng's Instance webhooks.
type apiServerCounts struct {
	services     serviceCreates
	webhookCalls float64
}

// instanceWebhooks are the names of the Instance webhooks (config/webhook).
var instanceWebhooks = []string{`name="minstance.kudo.dev"`, `name="vinstance.kudo.dev"`}

func readAPIServerCounts(c *localcluster.Cluster) (apiServerCounts, error) {
	out, err := c.Kubectl("get", "--raw", "/metrics")
	if err != nil {
		return apiServerCounts{}, err
	}
	var counts apiServerCounts
	for _, line := range strings.Split(out, "\n") {
		service := (strings.Contains(line, `verb="APPLY"`) || strings.Contains(line, `verb="POST"`)) &&
			strings.Contains(line, `resource="services"`) && strings.Contains(line, `subresource=""`)
		webhook := strings.HasPrefix(line, "apiserver_admission_webhook_admission_duration_seconds_count{") &&
			slices.ContainsFunc(instanceWebhooks, func(name string) bool { return strings.Contains(line, name) })
		if !service && !webhook {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return apiServerCounts{}, fmt.Errorf("API server metric %q: %w", line, err)
		}
		switch {
		case webhook:
			counts.webhookCalls += v
		case strings.HasPrefix(line, "apiserver_request_duration_seconds_sum{"):
			counts.services.seconds += v
		case strings.HasPrefix(line, "apiserver_request_duration_seconds_count{"):
			counts.services.count += v
		}
	}
	return counts, nil
}

// meanMsSince is the mean time of the Service creates since before.
func (before serviceCreates) meanMsSince(now serviceCreates) float64 {
	if now.count == before.count {
		return 0
	}
	return 1000 * (now.seconds - before.seconds) / (now.count - before.count)
}

// processCPU is the CPU seconds used so far by each process of the local
// control plane, by the name of its pid file (hack/cluster/up.sh).
type processCPU map[string]float64

func controlPlaneCPU(c *localcluster.Cluster) (processCPU, error) {
	files, err := filepath.Glob(filepath.Join(c.Dir, "pids", "*.pid"))
	if err != nil {
		return nil, err
	}
	cpu := processCPU{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if cpu[strings.TrimSuffix(filepath.Base(f), ".pid")], err = cpuSeconds(pid); err != nil {
			return nil, err
		}
	}
	return cpu, nil
}

// usedSince is the CPU seconds each process used since before.
func (before processCPU) usedSince(c *localcluster.Cluster) (map[string]float64, error) {
	now, err := controlPlaneCPU(c)
	if err != nil {
		return nil, err
	}
	return sub(now, before), nil
}

// InstanceBytes is the mean size of an Instance, as JSON.
type InstanceBytes struct {
	Whole, Status, ManagedFields float64
}

func meanInstanceBytes(ctx context.Context, c *localcluster.Cluster, ns string) (*InstanceBytes, error) {
	var list kudov1beta1.InstanceList
	if err := c.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no Instances in %s", ns)
	}
	var b InstanceBytes
	for i := range list.Items {
		inst := &list.Items[i]
		for _, part := range []struct {
			total *float64
			value any
		}{{&b.Whole, inst}, {&b.Status, inst.Status}, {&b.ManagedFields, inst.ManagedFields}} {
			data, err := json.Marshal(part.value)
			if err != nil {
				return nil, err
			}
			*part.total += float64(len(data))
		}
	}
	n := float64(len(list.Items))
	return &InstanceBytes{Whole: b.Whole / n, Status: b.Status / n, ManagedFields: b.ManagedFields / n}, nil
}
