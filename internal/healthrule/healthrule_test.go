package healthrule

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
)

func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.ToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

// widgetRules are the rules of a package whose Widgets say how they are in
// status.phase, and whose task "app" waits for its Widgets' replicas.
var widgetRules = &kudov1beta1.OperatorVersionSpec{
	HealthChecks: []kudov1beta1.HealthCheck{{
		APIVersion: "example.com/v1", Kind: "Widget",
		InProgress: "has(status.phase) && status.phase == 'Running' && status.ready == false",
		Failed:     "status.phase == 'Failed'",
		Current:    "status.phase == 'Running'",
	}},
	Tasks: []kudov1beta1.Task{{Name: "app", Kind: kudov1beta1.ApplyTaskKind,
		Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{ReadyWhen: []string{"status.readyReplicas >= 2"}}}}},
}

// readyStatefulSet is ready as kstatus judges it, with one replica.
const readyStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s, generation: 1}
spec: {replicas: 1}
status: {observedGeneration: 1, replicas: 1, readyReplicas: 1, currentReplicas: 1, updatedReplicas: 1, availableReplicas: 1,
  currentRevision: s-1, updateRevision: s-1}`

func TestCheckEvaluatesInProgressFailedCurrentInThatOrder(t *testing.T) {
	rules, err := Compile(widgetRules)
	if err != nil {
		t.Fatal(err)
	}
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
	tests := []struct {
		name, obj, task string
		healthy, fatal  bool
		status, rule    string
		message         string
	}{
		{"the current expression holds", widget + "status: {phase: Running, ready: true}", "", true, false,
			health.Current, "healthChecks[0].current: status.phase == 'Running'", ""},
		{"inProgress comes first, though current holds too", widget + "status: {phase: Running, ready: false}", "", false, false,
			health.InProgress, "healthChecks[0].inProgress: has(status.phase) && status.phase == 'Running' && status.ready == false",
			`waiting for Widget w: healthChecks[0].inProgress: has(status.phase) && status.phase == 'Running' && status.ready == false holds ` +
				`(status.phase="Running", status.ready=false)`},
		{"failed is fatal, with the expression and the values it read", widget + "status: {phase: Failed}", "", false, true,
			health.Failed, "healthChecks[0].failed: status.phase == 'Failed'",
			`Widget w has failed: healthChecks[0].failed: status.phase == 'Failed' holds (status.phase="Failed")`},
		{"none holds: in progress, named by current", widget + "status: {phase: Pending}", "", false, false,
			health.InProgress, "healthChecks[0].current: status.phase == 'Running'",
			`waiting for Widget w: healthChecks[0].current: status.phase == 'Running' does not hold yet (status.phase="Pending")`},
		{"a field not there yet is not yet, not an error", widget, "", false, false,
			health.InProgress, "healthChecks[0].current: status.phase == 'Running'",
			`waiting for Widget w: healthChecks[0].current: status.phase == 'Running' does not hold yet (status.phase=<absent>)`},
		{"another version of the kind is kstatus's", "apiVersion: example.com/v2\nkind: Widget\nmetadata: {name: w}\nstatus: {phase: Failed}", "",
			true, false, health.Current, health.RuleKstatus, "Widget w reports no status; counted healthy once applied"},
		{"readyWhen holds besides kstatus", readyStatefulSet, "app",
			false, false, health.InProgress, "tasks[0].spec.readyWhen[0]: status.readyReplicas >= 2",
			"waiting for StatefulSet s: tasks[0].spec.readyWhen[0]: status.readyReplicas >= 2 does not hold yet (status.readyReplicas=1)"},
		{"readyWhen of another task does not apply", readyStatefulSet, "db",
			true, false, health.Current, health.RuleKstatus, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rules.Check(context.Background(), object(t, tt.obj), tt.task)
			if got.Healthy != tt.healthy || got.Fatal != tt.fatal || got.Status != tt.status || got.Rule != tt.rule || got.Message != tt.message {
				t.Errorf("Check =\n%+v\nwant healthy %v fatal %v %s by %q:\n%s", got, tt.healthy, tt.fatal, tt.status, tt.rule, tt.message)
			}
		})
	}
}

func TestCheckWithoutRulesIsKstatus(t *testing.T) {
	var none *Set
	got := none.Check(context.Background(), object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}"), "app")
	if !got.Healthy || got.Rule != health.RuleKstatus {
		t.Errorf("Check = %+v, want kstatus's healthy", got)
	}
	if set, err := Compile(&kudov1beta1.OperatorVersionSpec{}); set != nil || err != nil {
		t.Errorf("Compile of no rules = %v, %v; want nil, nil", set, err)
	}
}

func TestJudgeOfIsTheRulesOfAKindAndATask(t *testing.T) {
	rules, err := Compile(widgetRules)
	if err != nil {
		t.Fatal(err)
	}
	widget := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	statefulSet := schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	if j := rules.JudgeOf(statefulSet, "db"); j != nil {
		t.Errorf("JudgeOf(StatefulSet, db) = %q, want none: kstatus judges it", j.Key)
	}
	var none *Set
	if j := none.JudgeOf(widget, "app"); j != nil {
		t.Errorf("no rules give a judge %q", j.Key)
	}
	app := rules.JudgeOf(statefulSet, "app")
	if app == nil || app.Check(object(t, readyStatefulSet)).Status != health.InProgress {
		t.Fatalf("JudgeOf(StatefulSet, app) = %v, want readyWhen's verdict on a StatefulSet with one ready replica", app)
	}
	db, dbAgain := rules.JudgeOf(widget, "db"), rules.JudgeOf(widget, "db")
	if db == nil || db.Key != dbAgain.Key {
		t.Fatalf("JudgeOf(Widget, db) = %v and %v, want one key", db, dbAgain)
	}
	if widgetApp := rules.JudgeOf(widget, "app"); widgetApp.Key == db.Key {
		t.Errorf("the Widgets of app, which its readyWhen also judges, have the key of those of db: %q", db.Key)
	}
	// The same sources in other places are other rules.
	swapped, err := Compile(&kudov1beta1.OperatorVersionSpec{HealthChecks: []kudov1beta1.HealthCheck{{
		APIVersion: "example.com/v1", Kind: "Widget",
		InProgress: widgetRules.HealthChecks[0].Current, Current: widgetRules.HealthChecks[0].InProgress,
		Failed: widgetRules.HealthChecks[0].Failed,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if j := swapped.JudgeOf(widget, "db"); j.Key == db.Key {
		t.Errorf("rules with inProgress and current swapped have one key: %q", j.Key)
	}
	failed := object(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: {phase: Failed}")
	if got := db.Check(failed).Status; got != health.Failed {
		t.Errorf("Status of a failed Widget = %s, want %s", got, health.Failed)
	}
}

func TestFieldsRead(t *testing.T) {
	tests := []struct {
		expr string
		read []string
	}{
		{"status.phase == 'Ready' && has(status.phase)", []string{"status.phase"}},
		{"status.?readyReplicas.orValue(0) == spec.replicas", []string{"status.readyReplicas", "spec.replicas"}},
		{"metadata.labels['app'] == 'web'", []string{"metadata.labels.app"}},
		{"status.conditions.exists(c, c.type == 'Ready') && status.conditions[0].status == 'True'", []string{"status.conditions"}},
		{"status.a.b == 1 && status.a == {'b': 1}", []string{"status.a.b"}},
		{"size(status) > 0 && status.phase == 'x'", []string{"status.phase"}},
	}
	for _, tt := range tests {
		e, err := NewExpression("f", tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		join := func(paths [][]string) []string {
			out := make([]string, len(paths))
			for n, p := range paths {
				out[n] = strings.Join(p, ".")
			}
			return out
		}
		if got := join(e.shown); !reflect.DeepEqual(got, tt.read) {
			t.Errorf("%s shows %v, want %v", tt.expr, got, tt.read)
		}
	}
}

func TestCompileRefusesWhatCannotRun(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{"a syntax error", "status.phase ==", "healthChecks[0].current: Syntax error: mismatched input '<EOF>'"},
		{"of a type known only when it runs", "status.ready", ""},
		{"a literal of another type", "'Running'", "healthChecks[0].current: the expression gives a string, not a bool"},
		{"an unknown variable", "data.x == 'y'", "undeclared reference to 'data'"},
		{"too long", strings.Repeat("true && ", MaxExpressionBytes/8) + "true", "more than the 4096 a rule may"},
		{"none", "", "healthChecks[0].current: is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(&kudov1beta1.OperatorVersionSpec{HealthChecks: []kudov1beta1.HealthCheck{
				{APIVersion: "example.com/v1", Kind: "Widget", Current: tt.expr}}})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Compile: %v, want it compiled (its type is known only when it runs)", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Compile: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestEvaluationIsBoundedByCostAndTime(t *testing.T) {
	rules, err := Compile(&kudov1beta1.OperatorVersionSpec{HealthChecks: []kudov1beta1.HealthCheck{{
		APIVersion: "example.com/v1", Kind: "Widget", Current: "status.items.all(i, i.lowerAscii() != '')",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	widget := func(items int, item string) *unstructured.Unstructured {
		obj := object(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}")
		list := make([]any, items)
		for n := range list {
			list[n] = item
		}
		obj.Object["status"] = map[string]any{"items": list}
		return obj
	}
	tests := []struct {
		bound   string
		obj     *unstructured.Unstructured
		timeout time.Duration
		want    string
	}{
		// lowerAscii reads an item and builds its runes and the result:
		// 90,000 for an item of 150 KB, past the cost limit at the twelfth.
		{"cost", widget(20, strings.Repeat("A", 150_000)), time.Minute, "operation cancelled: actual cost limit exceeded"},
		{"time", widget(5000, "A"), time.Millisecond, "took longer than 1ms, the longest a rule may"},
	}
	for _, tt := range tests {
		rules.timeout = tt.timeout
		got := rules.Check(context.Background(), tt.obj, "")
		if got.Healthy || got.Fatal || !strings.Contains(got.Message, "cannot be evaluated") || !strings.Contains(got.Message, tt.want) {
			t.Errorf("past its %s: Check = %+v, want waiting, saying %q", tt.bound, got, tt.want)
		}
	}
}

func TestObservedValuesAreBounded(t *testing.T) {
	e, err := NewExpression("f", "status.a == 1 && status.b.c == 2 && spec.x == 'y' && metadata.name == 'w' && status.e == 3 && status.b.c > 0")
	if err != nil {
		t.Fatal(err)
	}
	obj := object(t, "apiVersion: v1\nkind: X\nmetadata: {name: w}\nstatus: {a: 1, b: {c: 2}}\nspec: {x: "+strings.Repeat("y", 500)+"}")
	got := e.observe(obj)
	want := []string{"status.a=1", "status.b.c=2", "spec.x=\"" + strings.Repeat("y", MaxValueBytes-4) + "…", "metadata.name=\"w\""}
	if p := preview(map[string]any{"b": []any{"x", 1.5, nil, true}, "a": map[string]any{}}, 100); p != `{"a":{},"b":["x",1.5,null,true]}` {
		t.Errorf("preview = %s", p)
	}
	if len(got) != len(want) {
		t.Fatalf("observe = %v, want %d fields", got, len(want))
	}
	for n, o := range got {
		if o.Field+"="+o.Value != want[n] {
			t.Errorf("observed %s=%s, want %s", o.Field, o.Value, want[n])
		}
	}
}

// TestRulesForRealKinds evaluates the rules docs/health.md gives for
// cert-manager's Certificates and Argo's Workflows against objects as their
// controllers write them.
func TestRulesForRealKinds(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "real-kinds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cases struct {
		HealthChecks []kudov1beta1.HealthCheck `json:"healthChecks"`
		Objects      []struct {
			Verdict string         `json:"verdict"`
			Object  map[string]any `json:"object"`
		} `json:"objects"`
	}
	if err := sigsyaml.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	rules, err := Compile(&kudov1beta1.OperatorVersionSpec{HealthChecks: cases.HealthChecks})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases.Objects {
		j, _ := json.Marshal(c.Object)
		obj := object(t, string(j))
		if got := rules.Check(context.Background(), obj, ""); got.Status != c.Verdict {
			t.Errorf("%s %s (generation %d): %s (%s), want %s", obj.GetKind(), obj.GetName(), obj.GetGeneration(), got.Status, got.Message, c.Verdict)
		}
	}
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "health.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, hc := range cases.HealthChecks {
		for _, expr := range []string{hc.InProgress, hc.Failed, hc.Current} {
			if !strings.Contains(string(docs), expr) {
				t.Errorf("docs/health.md does not give the rule tested here: %s", expr)
			}
		}
	}
}
