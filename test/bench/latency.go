package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/preview"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/test/localcluster"
)

const latencyPackage = "test/bench/testdata/latency"

// Latency is Instance creation → deploy COMPLETE, beside the same objects
// applied by the floor program, installed by helm and by the helm-operator.
type Latency struct {
	Runs      int
	Resources int
	Steps     int
	Kudo      Distribution
	// KudoRule is kudo-ng with a health rule (statefulSetRule) judging the
	// StatefulSet in place of kstatus.
	KudoRule     Distribution
	Floor        Distribution
	Helm         Distribution
	HelmOperator Distribution
	// Requests are the manager's API requests per kudo-ng run, by verb;
	// ObjectWrites how many of them wrote the package's objects;
	// InstanceWrites how many wrote the Instance, by resource.
	Requests       map[string]float64
	ObjectWrites   float64
	InstanceWrites map[string]float64 `json:",omitempty"`
	// HelmOperatorRequests are the helm-operator's per release, by verb.
	HelmOperatorRequests map[string]float64 `json:",omitempty"`
}

// Distribution is the median and 95th percentile of a series, in seconds.
type Distribution struct {
	Median, P95 float64
	Samples     []float64
}

func distribution(samples []float64) Distribution {
	sorted := append([]float64(nil), samples...)
	sort.Float64s(sorted)
	return Distribution{
		Median:  sorted[len(sorted)/2],
		P95:     sorted[min(len(sorted)-1, (len(sorted)*95+99)/100-1)],
		Samples: samples,
	}
}

func measureLatency(ctx context.Context, c *localcluster.Cluster, m *manager, cfg *config) (*Latency, error) {
	pkg, err := packages.Read(filepath.Join(c.Root, latencyPackage))
	if err != nil {
		return nil, err
	}
	ruled, err := withStatefulSetRule(filepath.Join(c.Root, latencyPackage))
	if err != nil {
		return nil, err
	}
	steps, err := renderSteps(pkg, "bench", "default")
	if err != nil {
		return nil, err
	}
	chart, err := writeChart(filepath.Join(c.Dir, "chart"), steps)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	l := &Latency{Runs: cfg.runs, Steps: len(steps)}
	for _, s := range steps {
		l.Resources += len(s)
	}
	// One round first, not counted: the manager's first Instance of a kind
	// starts its watches; helm and the floor warm up alike.
	if _, _, err := kudoRun(ctx, c, m, pkg, "kudo-warmup"); err != nil {
		return nil, err
	}
	if _, _, err := kudoRun(ctx, c, m, ruled, "kudo-rule-warmup"); err != nil {
		return nil, err
	}
	if _, err := floorRun(ctx, c, dyn, pkg, "floor-warmup"); err != nil {
		return nil, err
	}
	if _, err := helmRun(ctx, c, cfg.helm, chart, "helm-warmup"); err != nil {
		return nil, err
	}
	// Stopped before the scale runs: it watches the chart's kinds in every
	// namespace.
	h, err := startHelmOperator(ctx, c, cfg.helmOperator, latencyApps, chart)
	if err != nil {
		return nil, err
	}
	defer h.stop()
	if _, _, err := helmOperatorLatencyRun(ctx, c, dyn, h, steps, "helm-operator-warmup"); err != nil {
		return nil, err
	}
	var kudo, kudoRule, floor, helm, helmOperator []float64
	l.Requests, l.HelmOperatorRequests, l.InstanceWrites = map[string]float64{}, map[string]float64{}, map[string]float64{}
	// Interleaved, so that a slower moment of the machine hits all alike.
	for i := range cfg.runs {
		// The run right after another is slower (the control plane still
		// settles the one before): with and without the rule take turns.
		ruledRun := func() error {
			d, _, err := kudoRun(ctx, c, m, ruled, fmt.Sprintf("kudo-rule-%d", i))
			kudoRule = append(kudoRule, d.Seconds())
			return err
		}
		if i%2 == 1 {
			if err := ruledRun(); err != nil {
				return nil, err
			}
		}
		d, spent, err := kudoRun(ctx, c, m, pkg, fmt.Sprintf("kudo-%d", i))
		if err != nil {
			return nil, err
		}
		if i%2 == 0 {
			if err := ruledRun(); err != nil {
				return nil, err
			}
		}
		kudo = append(kudo, d.Seconds())
		for verb, n := range spent.Requests {
			l.Requests[verb] += n / float64(cfg.runs)
		}
		l.ObjectWrites += spent.ObjectWrites / float64(cfg.runs)
		for resource, n := range spent.InstanceWrites {
			l.InstanceWrites[resource] += n / float64(cfg.runs)
		}

		if d, err = floorRun(ctx, c, dyn, pkg, fmt.Sprintf("floor-%d", i)); err != nil {
			return nil, err
		}
		floor = append(floor, d.Seconds())
		if d, err = helmRun(ctx, c, cfg.helm, chart, fmt.Sprintf("helm-%d", i)); err != nil {
			return nil, err
		}
		helm = append(helm, d.Seconds())
		d, requests, err := helmOperatorLatencyRun(ctx, c, dyn, h, steps, fmt.Sprintf("helm-operator-%d", i))
		if err != nil {
			return nil, err
		}
		helmOperator = append(helmOperator, d.Seconds())
		for verb, n := range requests {
			l.HelmOperatorRequests[verb] += n / float64(cfg.runs)
		}
		logf("latency run %d: kudo-ng %.3fs, with a health rule %.3fs, floor %.3fs, helm %.3fs, helm-operator %.3fs",
			i+1, kudo[i], kudoRule[i], floor[i], helm[i], helmOperator[i])
	}
	l.KudoRule = distribution(kudoRule)
	l.Kudo, l.Floor, l.Helm, l.HelmOperator = distribution(kudo), distribution(floor), distribution(helm), distribution(helmOperator)
	return l, nil
}

// statefulSetRule judges the latency package's StatefulSet as kstatus does
// (docs/health.md): all its replicas ready and updated, for its generation.
var statefulSetRule = kudov1beta1.HealthCheck{
	APIVersion: "apps/v1", Kind: "StatefulSet",
	Current: "status.observedGeneration == metadata.generation && status.?readyReplicas.orValue(0) == spec.replicas && " +
		"status.?updatedReplicas.orValue(0) == spec.replicas",
}

// withStatefulSetRule is the latency package, read from dir, under another
// name, whose StatefulSet a health rule judges.
func withStatefulSetRule(dir string) (*packages.Package, error) {
	pkg, err := packages.Read(dir)
	if err != nil {
		return nil, err
	}
	pkg.Operator.Name += "-rule"
	pkg.Operator.HealthChecks = []kudov1beta1.HealthCheck{statefulSetRule}
	return pkg, nil
}

// renderSteps renders the deploy plan's objects, step by step, as the
// manager renders them for an Instance of this name.
func renderSteps(pkg *packages.Package, instance, namespace string) ([][]*unstructured.Unstructured, error) {
	_, ov, err := pkg.Convert(namespace)
	if err != nil {
		return nil, err
	}
	tasks, err := preview.Plan(&preview.Input{
		OperatorVersion: ov, InstanceName: instance, Namespace: namespace, PlanName: "deploy",
		Served: func(schema.GroupVersionKind) bool { return true }, Scope: render.BuiltinScope,
	})
	if err != nil {
		return nil, err
	}
	var steps [][]*unstructured.Unstructured
	last := ""
	for _, t := range tasks {
		if t.Step != last {
			steps, last = append(steps, nil), t.Step
		}
		for _, obj := range t.Objects {
			// No Instance owns them outside kudo-ng.
			obj.SetOwnerReferences(nil)
			obj.SetNamespace("")
			steps[len(steps)-1] = append(steps[len(steps)-1], obj)
		}
	}
	return steps, nil
}

func newNamespace(ctx context.Context, c *localcluster.Cluster, name string) error {
	return c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// installPackage creates a namespace with the package's Operator and
// OperatorVersion in it, and returns the OperatorVersion's name.
func installPackage(ctx context.Context, c *localcluster.Cluster, pkg *packages.Package, ns string) (string, error) {
	if err := newNamespace(ctx, c, ns); err != nil {
		return "", err
	}
	op, ov, err := pkg.Convert(ns)
	if err != nil {
		return "", err
	}
	if err := c.Client.Create(ctx, op); err != nil {
		return "", err
	}
	return ov.Name, c.Client.Create(ctx, ov)
}

// runQuiet is how long the manager makes no request before the requests of
// one Instance are counted as done.
const runQuiet = 300 * time.Millisecond

// kudoRun times an Instance from its creation to its deploy plan COMPLETE,
// and counts the manager's requests from its creation until the manager is
// quiet again: the package's install before is not counted.
func kudoRun(ctx context.Context, c *localcluster.Cluster, m *manager, pkg *packages.Package, ns string) (time.Duration, spent, error) {
	ov, err := installPackage(ctx, c, pkg, ns)
	if err != nil {
		return 0, spent{}, err
	}
	w, err := c.Client.Watch(ctx, &kudov1beta1.InstanceList{}, client.InNamespace(ns))
	if err != nil {
		return 0, spent{}, err
	}
	defer w.Stop()
	before, err := m.settled(ctx, runQuiet, time.Minute)
	if err != nil {
		return 0, spent{}, err
	}
	start := time.Now()
	if err := c.Client.Create(ctx, newInstance(ns, "bench", ov)); err != nil {
		return 0, spent{}, err
	}
	if err := untilComplete(ctx, w, 1, 2*time.Minute); err != nil {
		return 0, spent{}, err
	}
	took := time.Since(start)
	after, err := m.settled(ctx, runQuiet, time.Minute)
	if err != nil {
		return 0, spent{}, err
	}
	return took, spentBetween(before, after), nil
}

func newInstance(ns, name, ov string) *kudov1beta1.Instance {
	return &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov}},
	}
}

// untilComplete waits until n Instances of a watch have finished deploy.
func untilComplete(ctx context.Context, w watch.Interface, n int, timeout time.Duration) error {
	return untilDone(ctx, w, n, timeout, "Instances", func(obj runtime.Object) (string, bool, error) {
		i, ok := obj.(*kudov1beta1.Instance)
		if !ok {
			return "", false, nil
		}
		switch deploy := i.Status.PlanStatus["deploy"]; deploy.Status {
		case kudov1beta1.ExecutionComplete:
			return i.Name, true, nil
		case kudov1beta1.ExecutionFatalError:
			return "", false, fmt.Errorf("instance %s/%s: deploy failed: %s", i.Namespace, i.Name, deploy.Message)
		}
		return "", false, nil
	})
}

// untilDone reads a watch until done has said of n objects that they are done.
func untilDone(ctx context.Context, w watch.Interface, n int, timeout time.Duration, what string,
	done func(runtime.Object) (name string, ok bool, err error)) error {
	finished := map[string]bool{}
	deadline := time.After(timeout)
	for len(finished) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the watch of %s ended", what)
			}
			name, ok, err := done(ev.Object)
			if err != nil {
				return err
			}
			if ok {
				finished[name] = true
			}
		case <-deadline:
			return fmt.Errorf("%d of %d %s done within %s", len(finished), n, what, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// floorRun is the best any controller could do: the same objects, applied
// in the same steps with server-side apply, each step waited for through
// watches until kstatus says every object is Current.
func floorRun(
	ctx context.Context, c *localcluster.Cluster, dyn dynamic.Interface, pkg *packages.Package, ns string,
) (time.Duration, error) {
	if err := newNamespace(ctx, c, ns); err != nil {
		return 0, err
	}
	steps, err := renderSteps(pkg, "bench", ns)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for _, objs := range steps {
		watches, err := watchEach(ctx, c, dyn, ns, objs)
		if err != nil {
			return 0, err
		}
		for _, obj := range objs {
			if err := applyObject(ctx, c, dyn, ns, obj); err != nil {
				return 0, err
			}
		}
		if err := untilAllCurrent(ctx, watches); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// watchEach watches each of objs, by name, in namespace ns.
func watchEach(
	ctx context.Context, c *localcluster.Cluster, dyn dynamic.Interface, ns string, objs []*unstructured.Unstructured,
) ([]watch.Interface, error) {
	var watches []watch.Interface
	for _, obj := range objs {
		gvr, err := resourceOf(c, obj)
		if err == nil {
			var w watch.Interface
			if w, err = dyn.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + obj.GetName()}); err == nil {
				watches = append(watches, w)
				continue
			}
		}
		for _, w := range watches {
			w.Stop()
		}
		return nil, err
	}
	return watches, nil
}

// untilAllCurrent reads each watch until kstatus says its object is
// Current, and stops them all.
func untilAllCurrent(ctx context.Context, watches []watch.Interface) error {
	defer func() {
		for _, w := range watches {
			w.Stop()
		}
	}()
	for _, w := range watches {
		if err := untilCurrent(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// helmOperatorLatencyRun times a LatencyApp from its creation until the
// helm-operator has deployed its release and kstatus says every object of
// it is Current, what kudo-ng's COMPLETE says, and counts the
// helm-operator's requests from its creation until it is quiet again.
func helmOperatorLatencyRun(
	ctx context.Context, c *localcluster.Cluster, dyn dynamic.Interface, h *helmOperator, steps [][]*unstructured.Unstructured, ns string,
) (time.Duration, map[string]float64, error) {
	if err := newNamespace(ctx, c, ns); err != nil {
		return 0, nil, err
	}
	apps, err := unstructuredWatch(ctx, dyn.Resource(latencyApps.GroupVersionResource).Namespace(ns))
	if err != nil {
		return 0, nil, err
	}
	defer apps.Stop()
	watches, err := watchEach(ctx, c, dyn, ns, slices.Concat(steps...))
	if err != nil {
		return 0, nil, err
	}
	before, err := h.settled(ctx, runQuiet, time.Minute)
	if err != nil {
		return 0, nil, err
	}
	start := time.Now()
	app := newApp(latencyApps, ns, "bench")
	if _, err := dyn.Resource(latencyApps.GroupVersionResource).Namespace(ns).Create(ctx, app, metav1.CreateOptions{}); err != nil {
		return 0, nil, err
	}
	if err := untilDone(ctx, apps, 1, 2*time.Minute, "releases", deployed); err != nil {
		return 0, nil, err
	}
	if err := untilAllCurrent(ctx, watches); err != nil {
		return 0, nil, err
	}
	took := time.Since(start)
	after, err := h.settled(ctx, runQuiet, time.Minute)
	if err != nil {
		return 0, nil, err
	}
	return took, sub(after.byVerb(), before.byVerb()), nil
}

func resourceOf(c *localcluster.Cluster, obj *unstructured.Unstructured) (schema.GroupVersionResource, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := c.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return mapping.Resource, nil
}

// applyObject applies obj in namespace ns with server-side apply, as the floor.
func applyObject(ctx context.Context, c *localcluster.Cluster, dyn dynamic.Interface, ns string, obj *unstructured.Unstructured) error {
	gvr, err := resourceOf(c, obj)
	if err != nil {
		return err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = dyn.Resource(gvr).Namespace(ns).Patch(ctx, obj.GetName(), "application/apply-patch+yaml", data,
		metav1.PatchOptions{FieldManager: "floor", Force: ptrTrue()})
	return err
}

func ptrTrue() *bool { t := true; return &t }

func untilCurrent(ctx context.Context, w watch.Interface) error {
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("watch ended")
			}
			obj, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			res, err := status.Compute(obj)
			if err != nil {
				return err
			}
			if res.Status == status.CurrentStatus {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("not Current within 2 minutes")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// writeChart writes the rendered objects as a chart without templating.
func writeChart(dir string, steps [][]*unstructured.Unstructured) (string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		return "", err
	}
	chart := "apiVersion: v2\nname: bench-latency\nversion: 0.1.0\n"
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(chart), 0o644); err != nil {
		return "", err
	}
	n := 0
	for _, objs := range steps {
		for _, obj := range objs {
			data, err := yaml.Marshal(obj.Object)
			if err != nil {
				return "", err
			}
			if err := os.WriteFile(filepath.Join(dir, "templates", fmt.Sprintf("%02d.yaml", n)), data, 0o644); err != nil {
				return "", err
			}
			n++
		}
	}
	return dir, nil
}

// helmRun times `helm install --wait` of the chart into a new namespace.
func helmRun(ctx context.Context, c *localcluster.Cluster, helm, chart, ns string) (time.Duration, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, helm, "install", "bench", chart, "--namespace", ns, "--create-namespace",
		"--wait", "--timeout", "2m", "--kubeconfig", c.Kubeconfig)
	home := filepath.Join(c.Dir, "helm")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("helm install: %w\n%s", err, out)
	}
	return time.Since(start), nil
}
