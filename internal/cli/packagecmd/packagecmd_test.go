package packagecmd

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/test/corpus"
)

// hello is the project's own first package.
var hello = filepath.Join(corpus.Examples(), "hello", "operator")

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares out with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name, out string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("output (-%s +got):\n%s", path, cmp.Diff(string(want), out))
	}
}

// TestVerifyWritesKUDOsResult: package verify prints KUDO's Warnings and
// Errors sections and "package is valid", or with -o KUDO's result object,
// and fails as KUDO did.
func TestVerifyWritesKUDOsResult(t *testing.T) {
	bad := filepath.Join("..", "..", "packages", "testdata", "bad", "undefined-task")
	for _, tt := range []struct {
		golden string
		opts   VerifyOptions
		err    string
	}{
		{golden: "verify-valid.golden", opts: VerifyOptions{Path: hello}},
		{golden: "verify-param-checks.golden", opts: VerifyOptions{Path: hello, ParamChecks: []string{"hint", "type"}}},
		{golden: "verify-errors.golden", opts: VerifyOptions{Path: bad}, err: "found 1 package verification errors"},
		{golden: "verify-errors.json.golden", opts: VerifyOptions{Path: bad, Output: "json"}, err: "found 1 package verification errors"},
		{golden: "verify-valid.yaml.golden", opts: VerifyOptions{Path: hello, Output: "yaml"}},
		{golden: "verify-param-checks.json.golden", opts: VerifyOptions{Path: hello, Output: "json", ParamChecks: []string{"all"}}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			err := RunVerify(context.Background(), streams, &tt.opts)
			if (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
				t.Errorf("error %v, want %q", err, tt.err)
			}
			golden(t, tt.golden, out.String())
		})
	}

	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	err := RunVerify(context.Background(), streams, &VerifyOptions{Path: hello, Output: "table"})
	if err == nil || err.Error() != "invalid output format, only support 'yaml' or 'json' or empty" {
		t.Errorf("-o table: %v", err)
	}
	err = RunVerify(context.Background(), streams, &VerifyOptions{Path: hello, ParamChecks: []string{"spelling"}})
	if err == nil || err.Error() != "unknown parameter check: spelling, must be one of [display hint desc type hasgroup groups all]" {
		t.Errorf("--param-checks spelling: %v", err)
	}
}

// TestVerifyWarnsOfARemovedAPIVersionItMigrates: zookeeper's
// policy/v1beta1 PodDisruptionBudget is a warning, not an error.
func TestVerifyWarnsOfARemovedAPIVersionItMigrates(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := RunVerify(context.Background(), streams, &VerifyOptions{Path: corpus.Package(t, "zookeeper")}); err != nil {
		t.Fatal(err)
	}
	warning := `templates/pdb.yaml: PodDisruptionBudget "zookeeper-instance-pdb": policy/v1beta1 → policy/v1, ` +
		"which Kubernetes 1.34 no longer serves: kudo-ng migrates it when it applies it"
	// KUDO's table pads the heading to the width of the widest line.
	want := fmt.Sprintf("%-*s\n%s\npackage is valid\n", utf8.RuneCountInString(warning), "Warnings", warning)
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

func renderObjects(t *testing.T, opts *RenderOptions) []*unstructured.Unstructured {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := RunRender(context.Background(), streams, opts); err != nil {
		t.Fatal(err)
	}
	objs, err := render.Objects("output", out.String())
	if err != nil {
		t.Fatalf("the output does not parse: %v\n%s", err, out)
	}
	return objs
}

func find(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	return nil
}

func TestRenderZookeeper(t *testing.T) {
	objs := renderObjects(t, &RenderOptions{
		Path: corpus.Package(t, "zookeeper"), Namespace: "default", Plan: "deploy", KubernetesVersion: "1.34", Parameters: []string{"NODE_COUNT=5"},
	})
	sts := find(objs, "StatefulSet")
	if sts == nil {
		t.Fatal("no StatefulSet rendered")
	}
	if replicas, _, _ := unstructured.NestedInt64(sts.Object, "spec", "replicas"); replicas != 5 {
		t.Errorf("replicas = %d, want 5", replicas)
	}
	labels := sts.GetLabels()
	if labels["heritage"] != "kudo" || labels["kudo.dev/instance"] != "zookeeper-instance" || labels["kudo.dev/operator"] != "zookeeper" {
		t.Errorf("KUDO labels missing: %v", labels)
	}
	if sts.GetAnnotations()["kudo.dev/plan"] != "deploy" {
		t.Errorf("plan annotation missing: %v", sts.GetAnnotations())
	}
	pdb := find(objs, "PodDisruptionBudget")
	if pdb == nil || pdb.GetAPIVersion() != "policy/v1" {
		t.Errorf("PodDisruptionBudget = %v, want one of policy/v1", pdb)
	}
}

// TestRenderShowsThePipePodTheControllerRuns: package render prints a Pipe
// task's pod as the controller applies it, named after the task and with the
// container that keeps the files until they are read.
func TestRenderShowsThePipePodTheControllerRuns(t *testing.T) {
	allTasks := filepath.Join(corpus.Examples(), "all-tasks", "operator")
	objs := renderObjects(t, &RenderOptions{Path: allTasks, Namespace: "default", Plan: "deploy", KubernetesVersion: "1.34"})
	pod := find(objs, "Pod")
	if pod == nil {
		t.Fatal("no Pod rendered")
	}
	containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	policy, _, _ := unstructured.NestedString(pod.Object, "spec", "restartPolicy")
	if pod.GetName() != "all-tasks-instance-deploy-setup-secrets-generate" || len(containers) != 1 || policy != "OnFailure" {
		t.Errorf("pipe pod %s with containers %v, restartPolicy %q", pod.GetName(), containers, policy)
	}
}

func TestRenderParameterErrors(t *testing.T) {
	tests := []struct {
		params []string
		want   string
	}{
		{[]string{"replica=5"}, "parameter replica is not defined; the parameters are image, replicas"},
		{[]string{"replicas"}, `parameter "replicas": expected NAME=VALUE`},
	}
	for _, tt := range tests {
		streams, _, _, _ := genericiooptions.NewTestIOStreams()
		err := RunRender(context.Background(), streams, &RenderOptions{
			Path: hello, Namespace: "default", Plan: "deploy", KubernetesVersion: "1.34", Parameters: tt.params,
		})
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: error = %v, want %q", tt.params, err, tt.want)
		}
	}
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	err := RunRender(context.Background(), streams, &RenderOptions{Path: hello, Plan: "scale", KubernetesVersion: "1.34"})
	if err == nil || err.Error() != `plan "scale" is not defined; the plans are deploy` {
		t.Errorf("unknown plan: %v", err)
	}
}

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	opts := &CreateOptions{Path: hello, TarballOptions: TarballOptions{Destination: dir}}
	if err := RunCreate(context.Background(), streams, opts); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "hello-1.27.0_0.1.0.tgz")
	if out.String() != "package is valid\nPackage created: "+target+"\n" {
		t.Errorf("output %q", out)
	}
	if err := RunCreate(context.Background(), streams, opts); err == nil || !strings.Contains(err.Error(), "exists; use --overwrite") {
		t.Errorf("second create: %v", err)
	}
	opts.Overwrite = true
	if err := RunCreate(context.Background(), streams, opts); err != nil {
		t.Errorf("overwrite: %v", err)
	}
	// The tarball verifies and renders like the directory.
	objs := renderObjects(t, &RenderOptions{Path: target, Namespace: "default", Plan: "deploy", KubernetesVersion: "1.34"})
	if d := find(objs, "Deployment"); d == nil || d.GetName() != "hello-instance" {
		t.Errorf("rendering the tarball: %v", objs)
	}
	bad := filepath.Join("..", "..", "packages", "testdata", "bad", "missing-template")
	streams, _, out, _ = genericiooptions.NewTestIOStreams()
	err := RunCreate(context.Background(), streams, &CreateOptions{Path: bad, TarballOptions: TarballOptions{Destination: dir}, Output: "json"})
	if err == nil || err.Error() != "found 1 package verification errors" {
		t.Errorf("creating a bad package: %v", err)
	}
	if !strings.Contains(out.String(), `template \"missing.yaml\" is not in templates/`) || strings.Contains(out.String(), "Package created") {
		t.Errorf("creating a bad package, -o json: %s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a bad package must write nothing: %v", entries)
	}
}

// TestListInKUDOsShape: package list parameters|plans|tasks print KUDO's
// columns and trees, and say more at the end of a row or below a task.
func TestListInKUDOsShape(t *testing.T) {
	allTasks := filepath.Join(corpus.Examples(), "all-tasks", "operator")
	for _, tt := range []struct {
		golden string
		opts   ListOptions
	}{
		{"list-parameters.golden", ListOptions{What: "parameters", Package: allTasks}},
		{"list-parameters-descriptions.golden", ListOptions{What: "parameters", Package: hello, Descriptions: true}},
		{"list-parameters-names.golden", ListOptions{What: "parameters", Package: allTasks, Names: true}},
		{"list-parameters-required.golden", ListOptions{What: "parameters", Package: hello, Required: true}},
		{"list-plans.golden", ListOptions{What: "plans", Package: allTasks}},
		{"list-plans-with-tasks.golden", ListOptions{What: "plans", Package: allTasks, WithTasks: true}},
		{"list-tasks.golden", ListOptions{What: "tasks", Package: allTasks}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			if err := RunList(context.Background(), streams, &tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, out.String())
		})
	}
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	err := RunList(context.Background(), streams, &ListOptions{What: "parameters", Package: hello, Names: true, Required: true})
	if err == nil || err.Error() != "only one of the flags 'required', 'names', 'descriptions' can be set" {
		t.Errorf("--names --required: %v", err)
	}
}

func TestNew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "web")
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := RunNew(context.Background(), streams, &NewOptions{Name: "web", Directory: dir}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "package web created in "+dir+"\n" {
		t.Errorf("output %q", out)
	}
	out.Reset()
	if err := RunVerify(context.Background(), streams, &VerifyOptions{Path: dir}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "package is valid\n" {
		t.Errorf("a new package must verify clean: %q", out)
	}
	if err := RunNew(context.Background(), streams, &NewOptions{Name: "web", Directory: dir}); err == nil {
		t.Error("a second new over the first must be refused")
	}
}

// TestRenderHidesSensitiveValues: package render prints no value of a
// sensitive parameter, and no data of a Secret of a package that has one;
// a Secret's key cannot be read without a cluster.
func TestRenderHidesSensitiveValues(t *testing.T) {
	secretParams := filepath.Join("..", "..", "..", "test", "e2e", "testdata", "secret-params")
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := RunRender(context.Background(), streams, &RenderOptions{
		Path: secretParams, Namespace: "default", Plan: "deploy", KubernetesVersion: "1.34", Parameters: []string{"PASSWORD=hunter2-s3cr3t"},
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "s3cr3t") {
		t.Errorf("the output holds the sensitive value:\n%s", out)
	}
	objs, err := render.Objects("output", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if password, _, _ := unstructured.NestedString(find(objs, "Secret").Object, "stringData", "password"); password != "<sensitive>" {
		t.Errorf("the Secret's password is %q, want it masked", password)
	}
	if length, _, _ := unstructured.NestedString(find(objs, "ConfigMap").Object, "data", "password-length"); length != "14" {
		t.Errorf("the template received a password of length %q, want 14", length)
	}

	err = RunRender(context.Background(), streams, &RenderOptions{
		Path: secretParams, Namespace: "default", Plan: "deploy", KubernetesVersion: "1.34", Parameters: []string{"PASSWORD=@secret:db/password"},
	})
	if want := "parameter PASSWORD: package render reads no cluster, so no Secret: give the value itself"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// TestVerifyRefusesWhatBreaksAPreviousVersionsTypedAPI: examples/ensemble's
// 0.2.0 converts all of 0.1.0 by its rules; 0.3.0 drops size, which no rule
// carries.
func TestVerifyRefusesWhatBreaksAPreviousVersionsTypedAPI(t *testing.T) {
	ensemble := func(v string) string { return filepath.Join(corpus.Examples(), "ensemble", v, "operator") }
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	opts := &VerifyOptions{Path: ensemble("0.2.0"), Previous: []string{ensemble("0.1.0")}}
	if err := RunVerify(context.Background(), streams, opts); err != nil {
		t.Errorf("0.2.0 after 0.1.0: %v\n%s", err, out)
	}
	out.Reset()
	opts = &VerifyOptions{Path: ensemble("0.3.0"), Previous: []string{ensemble("0.1.0"), ensemble("0.2.0")}, Output: "json"}
	err := RunVerify(context.Background(), streams, opts)
	want := "params.yaml: typed API: v2 → v3: spec.size: removed in v3, and no rule carries its value (oldName, or conversion.expression) " +
		"(removed): install and upgrade refuse it where objects hold a value it breaks"
	if err == nil || !strings.Contains(out.String(), strconv.Quote(want)) {
		t.Errorf("0.3.0 after 0.2.0: %v\n%s\nwant the error %s", err, out, want)
	}
}
