package render_test

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
	"github.com/kudo-ng/kudo/internal/task"
	"github.com/kudo-ng/kudo/test/corpus"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden (make test-update-golden)")

// use is where a template is first used: its plan, phase and step, and the
// task whose kind renders it.
type use struct {
	plan, phase, step string
	task              *kudov1beta1.Task
}

// firstUse maps each template to the first step (deploy's first) using it.
// A task of several templates is taken apart into one task per template that
// it renders into objects, so that each golden entry is one template's.
func firstUse(t testing.TB, ov *kudov1beta1.OperatorVersion) map[string]use {
	tasks := ov.Spec.TasksByName()
	plans := make([]string, 0, len(ov.Spec.Plans))
	for name := range ov.Spec.Plans {
		plans = append(plans, name)
	}
	sort.Slice(plans, func(i, j int) bool {
		return plans[i] == kudov1beta1.DeployPlanName || (plans[j] != kudov1beta1.DeployPlanName && plans[i] < plans[j])
	})
	uses := map[string]use{}
	for _, plan := range plans {
		for at, s := range ov.Spec.Plans[plan].Steps() {
			for _, name := range s.Tasks {
				def := tasks[name]
				kind, err := task.For(def.Kind)
				if err != nil {
					t.Fatal(err)
				}
				refs := kind.Uses(&def.Spec)
				for _, tmpl := range refs.Objects {
					single := *def
					single.Spec.Resources = []string{tmpl}
					if _, seen := uses[tmpl]; !seen {
						uses[tmpl] = use{plan, at.Phase.Name, s.Name, &single}
					}
				}
				for _, tmpl := range refs.Others {
					if _, seen := uses[tmpl]; !seen {
						uses[tmpl] = use{plan, at.Phase.Name, s.Name, def}
					}
				}
			}
		}
	}
	return uses
}

// renderPackage renders every template of a package with its defaults, in
// the step that first uses it, by the Build of the task's kind that the
// controller runs, on Kubernetes 1.34. A template no task uses is rendered
// into objects. ConfigMaps and Secrets rendered earlier count as existing in
// the cluster.
func renderPackage(t testing.TB, dir string) []byte {
	t.Helper()
	p, err := packages.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, ov, err := p.Convert("default")
	if err != nil {
		t.Fatal(err)
	}
	values, err := params.Values(ov.Spec.Parameters, nil)
	if err != nil {
		t.Fatal(err)
	}
	served, err := migrate.ServedBy("1.34")
	if err != nil {
		t.Fatal(err)
	}
	var cluster []*unstructured.Unstructured
	deps := func(kind, namespace, name string) (*unstructured.Unstructured, bool, error) {
		for _, obj := range cluster {
			if obj.GetKind() == kind && obj.GetNamespace() == namespace && obj.GetName() == name {
				return obj, true, nil
			}
		}
		return nil, false, nil
	}
	uses := firstUse(t, ov)
	names := make([]string, 0, len(p.Templates))
	for name := range p.Templates {
		names = append(names, name)
	}
	sort.Strings(names)

	instance := p.Operator.Name + "-instance"
	var out bytes.Buffer
	for _, name := range names {
		use := uses[name]
		_, _ = fmt.Fprintf(&out, "# Source: templates/%s (plan %s, phase %s, step %s)\n", name, use.plan, use.phase, use.step)
		in := &task.Input{
			Site: render.Site{
				OperatorVersion: ov, Instance: instance, Namespace: "default",
				Plan: use.plan, Phase: use.phase, Step: use.step, PlanUID: "00000000-0000-0000-0000-000000000001", Params: values,
			},
			Served: served, Scope: render.BuiltinScope, Dependencies: deps,
		}
		result, err := build(use.task, name, in)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if result.Note != "" {
			_, _ = fmt.Fprintf(&out, "# %s\n", strings.ReplaceAll(result.Note, "\n", "\n# "))
		}
		for _, m := range result.Migrations {
			_, _ = fmt.Fprintf(&out, "# migrated %s\n", m.Migration)
		}
		for _, obj := range result.Objects {
			b, err := yaml.Marshal(obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = fmt.Fprintf(&out, "---\n%s", b)
		}
		cluster = append(cluster, result.Objects...)
	}
	return out.Bytes()
}

// build renders a template as its task's kind builds it, or, for a template
// no task uses, into objects.
func build(t *kudov1beta1.Task, name string, in *task.Input) (*task.Intent, error) {
	if t == nil {
		t = &kudov1beta1.Task{Kind: kudov1beta1.ApplyTaskKind, Spec: kudov1beta1.TaskSpec{
			ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{name}}}}
	}
	kind, err := task.For(t.Kind)
	if err != nil {
		return nil, err
	}
	return kind.Build(t, in)
}

// TestConformanceGolden renders every template of every package of the
// conformance corpus and compares with testdata/<package>.golden.
func TestConformanceGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(corpus.Require(t), "*", "operator"))
	if err != nil || len(dirs) != 9 {
		t.Fatalf("want the 9 conformance packages in %s, found %d (%v)", corpus.Variable, len(dirs), err)
	}
	for _, dir := range dirs {
		name := filepath.Base(filepath.Dir(dir))
		t.Run(name, func(t *testing.T) { checkGolden(t, dir, filepath.Join("testdata", name+".golden")) })
	}
}

// TestExamplesGolden renders every template of every package in examples/
// and compares with testdata/examples/<path>.golden, the package's path
// below examples/ with its slashes as dashes.
func TestExamplesGolden(t *testing.T) {
	dirs := examplePackages(t)
	if len(dirs) == 0 {
		t.Fatalf("no packages in %s", corpus.Examples())
	}
	for _, dir := range dirs {
		rel, err := filepath.Rel(corpus.Examples(), dir)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ReplaceAll(filepath.ToSlash(rel), "/", "-")
		t.Run(name, func(t *testing.T) { checkGolden(t, dir, filepath.Join("testdata", "examples", name+".golden")) })
	}
}

// examplePackages are the directories of examples/ that hold an operator.yaml.
func examplePackages(t testing.TB) []string {
	var dirs []string
	err := filepath.WalkDir(corpus.Examples(), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == packages.OperatorFileName {
			dirs = append(dirs, filepath.Dir(path))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// checkGolden compares the rendering of the package in dir with the golden
// file, which must parse back as Kubernetes objects.
func checkGolden(t *testing.T, dir, golden string) {
	got := renderPackage(t, dir)
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run make test-update-golden)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rendering of %s differs from %s (run make test-update-golden and review the diff)", dir, golden)
	}
	objs, err := render.Objects(golden, string(want))
	if err != nil {
		t.Fatalf("the golden file does not parse back: %v", err)
	}
	for _, obj := range objs {
		if obj.GetName() == "" && obj.GetKind() != "Pod" {
			t.Errorf("%s: %s without a name", golden, obj.GetKind())
		}
	}
	if len(objs) == 0 {
		t.Errorf("%s holds no objects", golden)
	}
}

// BenchmarkRenderZookeeper renders the largest conformance package (by
// template size): every template, parsed, migrated and enhanced.
func BenchmarkRenderZookeeper(b *testing.B) {
	dir := corpus.Package(b, "zookeeper")
	b.ReportAllocs()
	for b.Loop() {
		renderPackage(b, dir)
	}
}
