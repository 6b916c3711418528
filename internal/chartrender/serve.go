package chartrender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartv2util "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// exitRenderFailed is the child's exit code when the chart does not render:
// its standard error says why.
const exitRenderFailed = 3

// A binary that links this package renders one chart and exits when it is
// started with ServeArg: the manager, the CLI and every test binary alike,
// so that none can start itself over (a test binary would run its tests)
// for want of a call in its main.
func init() {
	serveIfChild()
}

// serveIfChild renders the chart of the request on standard input, writes
// the result on standard output and exits, when the process was started
// with ServeArg; otherwise it returns at once.
func serveIfChild() {
	if len(os.Args) < 2 || os.Args[1] != ServeArg {
		return
	}
	yieldToTheOOMKiller()
	if limit, err := strconv.ParseInt(os.Getenv(memoryLimitEnv), 10, 64); err == nil && limit > 0 {
		// Go's heap is private anonymous memory, which RLIMIT_DATA counts;
		// the soft limit makes the collector work before it is reached.
		debug.SetMemoryLimit(limit * 3 / 4)
		_ = unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: uint64(limit), Max: uint64(limit)})
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitRenderFailed)
	}
	os.Exit(0)
}

// yieldToTheOOMKiller makes this process the first the kernel stops when
// memory runs out: in a container the manager and its renders share one
// limit, which a chart can fill before its own limit stops it, and then the
// render must go, not the manager. Raising one's own score needs no
// privilege; where there is no such file, nothing changes.
func yieldToTheOOMKiller() {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
}

func serve(in io.Reader, out io.Writer) error {
	req := &Request{}
	if err := json.NewDecoder(in).Decode(req); err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	res, err := render(req)
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(res)
}

// render is Helm's `helm template` of one chart, with the .Capabilities of
// the cluster it goes to: no cluster is read (lookup finds nothing), no
// name resolved (getHostByName is "").
func render(req *Request) (*Result, error) {
	chart, err := loader.LoadArchive(bytes.NewReader(req.Chart))
	if err != nil {
		return nil, fmt.Errorf("loading the chart: %w", err)
	}
	caps := chartcommon.DefaultCapabilities.Copy()
	if req.KubeVersion != "" {
		kube, err := chartcommon.ParseKubeVersion(req.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("the cluster's version %q: %w", req.KubeVersion, err)
		}
		caps.KubeVersion = *kube
		// As helm install checks it; helm template, knowing no cluster, does not.
		if want := chart.Metadata.KubeVersion; want != "" && !chartv2util.IsCompatibleRange(want, caps.KubeVersion.String()) {
			return nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", want, caps.KubeVersion.String())
		}
	}
	if len(req.APIVersions) > 0 {
		caps.APIVersions = chartcommon.VersionSet(req.APIVersions)
	}
	if err := chartv2util.ProcessDependencies(chart, req.Values); err != nil {
		return nil, fmt.Errorf("the chart's dependencies: %w", err)
	}
	values, err := chartutil.ToRenderValues(chart, req.Values, chartcommon.ReleaseOptions{
		Name: req.Release.Name, Namespace: req.Release.Namespace, Revision: req.Release.Revision,
		IsInstall: !req.Release.IsUpgrade, IsUpgrade: req.Release.IsUpgrade,
	}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{}.Render(chart, values)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for name, content := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			if name == chart.Name()+"/templates/NOTES.txt" {
				res.Notes = content
			}
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	for _, crd := range chart.CRDs() {
		res.CRDs = append(res.CRDs, Manifest{Template: crd.Name, Content: string(crd.Data)})
	}
	for _, m := range manifests {
		res.Manifests = append(res.Manifests, Manifest{Template: m.Name, Content: m.Content})
	}
	for _, h := range hooks {
		hook := Hook{Manifest: Manifest{Template: h.Path, Content: h.Manifest}, Kind: h.Kind, Name: h.Name, Weight: h.Weight}
		for _, e := range h.Events {
			hook.Events = append(hook.Events, e.String())
		}
		for _, p := range h.DeletePolicies {
			hook.DeletePolicies = append(hook.DeletePolicies, p.String())
		}
		res.Hooks = append(res.Hooks, hook)
	}
	return res, nil
}
