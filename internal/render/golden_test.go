package render_test

import (
	"bytes"
	"flag"
	"fmt"
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
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden (make test-update-golden)")

var conformanceDir = filepath.Join("..", "..", "..", "shared", "conformance")

// step is where a template is first used: its plan, phase and step.
type step struct{ plan, phase, name string }

// firstUse maps each template to the first step (deploy's first) using it.
func firstUse(ov *kudov1beta1.OperatorVersion) map[string]step {
	tasks := map[string]kudov1beta1.Task{}
	for _, t := range ov.Spec.Tasks {
		tasks[t.Name] = t
	}
	plans := make([]string, 0, len(ov.Spec.Plans))
	for name := range ov.Spec.Plans {
		plans = append(plans, name)
	}
	sort.Slice(plans, func(i, j int) bool {
		return plans[i] == kudov1beta1.DeployPlanName || (plans[j] != kudov1beta1.DeployPlanName && plans[i] < plans[j])
	})
	uses := map[string]step{}
	for _, plan := range plans {
		for _, phase := range ov.Spec.Plans[plan].Phases {
			for _, s := range phase.Steps {
				for _, name := range s.Tasks {
					t := tasks[name]
					for _, tmpl := range append(append([]string{}, t.Spec.Resources...), t.Spec.Pod) {
						if _, seen := uses[tmpl]; !seen && tmpl != "" {
							uses[tmpl] = step{plan, phase.Name, s.Name}
						}
					}
				}
			}
		}
	}
	return uses
}

// renderPackage renders every template of a package with its defaults, in
// the step that first uses it, as the controller would on Kubernetes 1.34.
// ConfigMaps and Secrets rendered earlier count as existing in the cluster.
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
	uses := firstUse(ov)
	names := make([]string, 0, len(p.Templates))
	for name := range p.Templates {
		names = append(names, name)
	}
	sort.Strings(names)

	instance := p.Operator.Name + "-instance"
	var out bytes.Buffer
	for _, name := range names {
		use := uses[name]
		_, _ = fmt.Fprintf(&out, "# Source: templates/%s (plan %s, phase %s, step %s)\n", name, use.plan, use.phase, use.name)
		site := &render.Site{
			OperatorVersion: ov, Instance: instance, Namespace: "default",
			Plan: use.plan, Phase: use.phase, Step: use.name, PlanUID: "00000000-0000-0000-0000-000000000001", Params: values,
		}
		vars := site.Variables()
		result, err := render.Task(&render.Request{
			Templates: p.Templates, Resources: []string{name}, Variables: vars, Metadata: site.Metadata(),
			Served: served, Scope: render.BuiltinScope, Dependencies: deps,
		})
		if err != nil && strings.Contains(err.Error(), "has no metadata.name") {
			// A Pipe task's pod, which the task names itself.
			text, terr := render.Template(name, p.Templates[name], &vars)
			if terr != nil {
				t.Fatal(terr)
			}
			_, _ = fmt.Fprintf(&out, "---\n%s", text)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
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

// TestConformanceGolden renders every template of every conformance package
// and compares with testdata/<package>.golden, which must parse back as
// Kubernetes objects.
func TestConformanceGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(conformanceDir, "*", "operator"))
	if err != nil || len(dirs) != 9 {
		t.Fatalf("want the 9 conformance packages in %s, found %d (%v)", conformanceDir, len(dirs), err)
	}
	for _, dir := range dirs {
		name := filepath.Base(filepath.Dir(dir))
		t.Run(name, func(t *testing.T) {
			got := renderPackage(t, dir)
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run make test-update-golden)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("rendering of %s differs from %s (run make test-update-golden and review the diff)", name, golden)
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
		})
	}
}

// BenchmarkRenderZookeeper renders the largest conformance package (by
// template size): every template, parsed, migrated and enhanced.
func BenchmarkRenderZookeeper(b *testing.B) {
	dir := filepath.Join(conformanceDir, "zookeeper", "operator")
	b.ReportAllocs()
	for b.Loop() {
		renderPackage(b, dir)
	}
}
