package chartrender

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testChart(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "test-chart-1.2.3.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// chartOf is a chart named c whose one template is template.
func chartOf(t *testing.T, template string) []byte {
	t.Helper()
	chart, err := Pack("c", map[string][]byte{
		"Chart.yaml":         []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n"),
		"templates/one.yaml": []byte(template),
	})
	if err != nil {
		t.Fatal(err)
	}
	return chart
}

func request(chart []byte, values map[string]any) *Request {
	return &Request{Chart: chart, Values: values, Release: Release{Name: "web", Namespace: "team-a", Revision: 1},
		KubeVersion: "v1.34.4", APIVersions: []string{"v1", "apps/v1"}}
}

// A chart nobody here wrote (helm-operator-plugins' test chart, as `helm
// package` made it) renders as `helm template` renders it.
func TestARealChartRendersAsHelmRendersIt(t *testing.T) {
	res, err := Render(context.Background(), request(testChart(t), map[string]any{"replicaCount": 3}), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Manifests {
		got = append(got, m.Template)
	}
	want := "test-chart/templates/serviceaccount.yaml test-chart/templates/service.yaml test-chart/templates/deployment.yaml"
	if strings.Join(got, " ") != want {
		t.Errorf("manifests %v, want %s (Helm's install order: ServiceAccount, Service, Deployment)", got, want)
	}
	deployment := res.Manifests[len(res.Manifests)-1].Content
	for _, line := range []string{"name: web-test-chart", "replicas: 3", `image: "nginx:1.16.0"`} {
		if !strings.Contains(deployment, line) {
			t.Errorf("the Deployment has no %q:\n%s", line, deployment)
		}
	}
	if len(res.Hooks) != 1 || res.Hooks[0].Kind != "Pod" || res.Hooks[0].Name != "web-test-chart-test-connection" ||
		strings.Join(res.Hooks[0].Events, ",") != "test" {
		t.Errorf("hooks %+v, want the test-connection Pod, a test hook", res.Hooks)
	}
	if !strings.Contains(res.Notes, "team-a") {
		t.Errorf("notes %q", res.Notes)
	}
}

func TestAChartThatDoesNotRenderSaysWhy(t *testing.T) {
	_, err := Render(context.Background(), request(chartOf(t, `{{ required "a greeting is required" .Values.greeting }}`), nil), DefaultLimits)
	if err == nil || !strings.Contains(err.Error(), "a greeting is required") {
		t.Fatalf("got %v", err)
	}
	_, err = Render(context.Background(), request([]byte("not a tarball"), nil), DefaultLimits)
	if err == nil || !strings.HasPrefix(err.Error(), "loading the chart: ") {
		t.Fatalf("got %v", err)
	}
}

// A chart is a program: one that renders too much, too long or too large
// is stopped, and the manager is not the process that stops.
func TestAChartIsBounded(t *testing.T) {
	limits := Limits{Timeout: 5 * time.Second, MaxOutput: 1 << 20, Memory: 256 << 20}
	for name, tc := range map[string]struct {
		template string
		limits   func(*Limits)
		want     string
	}{
		"too much output": {template: "kind: ConfigMap\napiVersion: v1\nmetadata: {name: big}\ndata:\n" +
			`{{ range until 200 }}  k{{ . }}: {{ repeat 10000 "x" }}` + "\n{{ end }}", want: "renders more than the limit of 1048576 bytes"},
		"too much memory": {template: `{{ $l := until 200000000 }}{{ len $l }}`, want: "more memory than the limit"},
		"too long":        {template: `{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`, limits: func(l *Limits) { l.Timeout = time.Second }, want: "longer than the limit of 1s"},
	} {
		t.Run(name, func(t *testing.T) {
			l := limits
			if tc.limits != nil {
				tc.limits(&l)
			}
			_, err := Render(context.Background(), request(chartOf(t, tc.template), nil), l)
			var limit *LimitError
			if !errors.As(err, &limit) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a limit: %q", err, tc.want)
			}
		})
	}
}

// In a container the manager and its renders share one memory limit, which
// a chart can fill before its own limit stops it: the kernel then stops the
// render, never the manager, and the step says why.
func TestARenderTheKernelStopsIsOverItsMemory(t *testing.T) {
	killedByTheKernel := filepath.Join(t.TempDir(), "render")
	if err := os.WriteFile(killedByTheKernel, []byte("#!/bin/sh\nkill -KILL $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func(e func() (string, error)) { Executable = e }(Executable)
	Executable = func() (string, error) { return killedByTheKernel, nil }
	_, err := Render(context.Background(), request(chartOf(t, "{{ .Values.oom }}"), nil), DefaultLimits)
	var limit *LimitError
	if !errors.As(err, &limit) || !strings.Contains(err.Error(), "more memory than the limit to render: the kernel stopped it") {
		t.Fatalf("got %v, want a memory limit", err)
	}
}

func TestARenderIsTheFirstTheKernelStops(t *testing.T) {
	if os.Getenv("CHARTRENDER_OOM_SCORE") == "report" {
		yieldToTheOOMKiller()
		score, err := os.ReadFile("/proc/self/oom_score_adj")
		if err == nil {
			_, err = os.Stdout.Write(score)
		}
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestARenderIsTheFirstTheKernelStops$")
	cmd.Env = append(os.Environ(), "CHARTRENDER_OOM_SCORE=report")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "1000" {
		t.Fatalf("a render's oom_score_adj = %q, want 1000", got)
	}
}

// A chart's .Capabilities are those of the cluster its objects go to, as
// helm install has them, not Helm's defaults (Kubernetes 1.20): charts pick
// API versions by them, and refuse a cluster their kubeVersion excludes.
func TestAChartSeesTheCapabilitiesOfItsCluster(t *testing.T) {
	chartOfVersion := func(kubeVersion string) []byte {
		chart, err := Pack("c", map[string][]byte{
			"Chart.yaml": []byte("apiVersion: v2\nname: c\nversion: 0.1.0\nkubeVersion: \"" + kubeVersion + "\"\n"),
			"templates/one.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caps}\ndata:\n" +
				"  kube: {{ .Capabilities.KubeVersion.Version }}\n" +
				`  pdb: {{ if .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" }}policy/v1{{ else }}policy/v1beta1{{ end }}` + "\n"),
		})
		if err != nil {
			t.Fatal(err)
		}
		return chart
	}
	req := request(chartOfVersion(">=1.25.0-0"), nil)
	req.APIVersions = []string{"v1", "policy/v1", "policy/v1/PodDisruptionBudget"}
	res, err := Render(context.Background(), req, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Manifests[0].Content; !strings.Contains(got, "kube: v1.34.4") || !strings.HasSuffix(strings.TrimSpace(got), "pdb: policy/v1") {
		t.Errorf("rendered\n%s\nwant the cluster's version and its policy/v1", got)
	}

	req = request(chartOfVersion(">=1.35.0-0"), nil)
	_, err = Render(context.Background(), req, DefaultLimits)
	if want := "chart requires kubeVersion: >=1.35.0-0 which is incompatible with Kubernetes v1.34.4"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	// Offline (package verify, render), no cluster is known: Helm's defaults.
	req.KubeVersion, req.APIVersions = "", nil
	if _, err := Render(context.Background(), req, DefaultLimits); err != nil {
		t.Errorf("offline: %v", err)
	}
}

// A child out of its data limit fails where its runtime next maps memory:
// growing the heap, or making a thread, whose stack it cannot map (seen
// when the machine was busy and the runtime started more threads).
func TestAChildOutOfItsMemorySaysSo(t *testing.T) {
	exit := exec.Command("sh", "-c", "exit 2").Run()
	for _, stderr := range []string{
		"fatal error: out of memory",
		"runtime: cannot allocate memory",
		"runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort",
	} {
		var limit *LimitError
		if err := childError(exit, []byte(stderr)); !errors.As(err, &limit) || !strings.Contains(err.Error(), "more memory than the limit") {
			t.Errorf("%q: got %v, want the memory limit", stderr, err)
		}
	}
}
