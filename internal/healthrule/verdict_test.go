package healthrule

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
)

// TestRulesAreListedWhereOperatorYAMLHasThem: verify, the webhook and the
// controller name a rule by its place, and a readyWhen rule by its task's
// index among all the tasks.
func TestRulesAreListedWhereOperatorYAMLHasThem(t *testing.T) {
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	widgetV1 := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	widgetV2 := schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}
	rules, misplaced := Rules([]kudov1beta1.HealthCheck{
		{APIVersion: "apps/v1", Kind: "Deployment", Failed: "f", Current: "c"},
		{APIVersion: "example.com/v1", Kind: "Widget", InProgress: "i", Current: "c1"},
		{APIVersion: "example.com/v2", Kind: "Widget", Current: "c2"},
	}, []kudov1beta1.Task{
		{Name: "wait", Kind: kudov1beta1.DummyTaskKind},
		{Name: "app", Kind: kudov1beta1.ApplyTaskKind,
			Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{ReadyWhen: []string{"r0", "r1"}}}},
	})
	if len(misplaced) > 0 {
		t.Fatalf("Rules refused %v; a kind's two versions are two kinds", misplaced)
	}
	want := []Rule{
		{Field: "healthChecks[0].failed", Source: "f", Check: "failed", Kind: deployment},
		{Field: "healthChecks[0].current", Source: "c", Check: "current", Kind: deployment},
		{Field: "healthChecks[1].inProgress", Source: "i", Check: "inProgress", Kind: widgetV1},
		{Field: "healthChecks[1].current", Source: "c1", Check: "current", Kind: widgetV1},
		{Field: "healthChecks[2].current", Source: "c2", Check: "current", Kind: widgetV2},
		{Field: "tasks[1].spec.readyWhen[0]", Source: "r0", Task: 1},
		{Field: "tasks[1].spec.readyWhen[1]", Source: "r1", Task: 1},
	}
	if diff := cmp.Diff(want, rules); diff != "" {
		t.Errorf("Rules (-want +got):\n%s", diff)
	}
}

// widget is a Widget named w with the status given as YAML.
const widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: "

// widgetCheck is the rules of a package with a health check of Widgets and
// a task "app" whose Widgets must also satisfy readyWhen.
func widgetCheck(inProgress, failed, current string, readyWhen ...string) *kudov1beta1.OperatorVersionSpec {
	return &kudov1beta1.OperatorVersionSpec{
		HealthChecks: []kudov1beta1.HealthCheck{{APIVersion: "example.com/v1", Kind: "Widget",
			InProgress: inProgress, Failed: failed, Current: current}},
		Tasks: []kudov1beta1.Task{{Name: "app", Kind: kudov1beta1.ApplyTaskKind,
			Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{ReadyWhen: readyWhen}}}},
	}
}

// TestTheFirstRuleThatHoldsDecides: inProgress, failed, current, then each
// readyWhen of the task in turn; a rule that cannot be evaluated leaves the
// object waiting, saying why.
func TestTheFirstRuleThatHoldsDecides(t *testing.T) {
	running := "status.phase == 'Running'"
	tests := []struct {
		name   string
		rules  *kudov1beta1.OperatorVersionSpec
		status string
		want   health.Result
	}{
		{"current alone, holding", widgetCheck("", "", running), "{phase: Running}",
			health.Result{Healthy: true, Status: health.Current, Rule: "healthChecks[0].current: " + running}},
		{"failed before current, both holding", widgetCheck("", "has(status.error)", running), "{phase: Running, error: disk}",
			health.Result{Fatal: true, Status: health.Failed, Rule: "healthChecks[0].failed: has(status.error)",
				Message: `Widget w has failed: healthChecks[0].failed: has(status.error) holds (status.error="disk")`}},
		{"inProgress before failed, both holding", widgetCheck("status.busy", "has(status.error)", running), "{busy: true, error: disk}",
			health.Result{Status: health.InProgress, Rule: "healthChecks[0].inProgress: status.busy",
				Message: "waiting for Widget w: healthChecks[0].inProgress: status.busy holds (status.busy=true)"}},
		{"a failed Widget's readyWhen is not asked", widgetCheck("", "has(status.error)", running, "status.ready"), "{error: disk}",
			health.Result{Fatal: true, Status: health.Failed, Rule: "healthChecks[0].failed: has(status.error)",
				Message: `Widget w has failed: healthChecks[0].failed: has(status.error) holds (status.error="disk")`}},
		{"the first readyWhen that does not hold", widgetCheck("", "", running, "status.ready", "status.replicas >= 3"),
			"{phase: Running, ready: true, replicas: 2}",
			health.Result{Status: health.InProgress, Rule: "tasks[0].spec.readyWhen[1]: status.replicas >= 3",
				Message: "waiting for Widget w: tasks[0].spec.readyWhen[1]: status.replicas >= 3 does not hold yet (status.replicas=2)"}},
		{"every readyWhen holding: current's verdict", widgetCheck("", "", running, "status.ready"), "{phase: Running, ready: true}",
			health.Result{Healthy: true, Status: health.Current, Rule: "healthChecks[0].current: " + running}},
		{"an index past the end is not yet", widgetCheck("", "", "status.conditions[0].status == 'True'"), "{conditions: []}",
			health.Result{Status: health.InProgress, Rule: "healthChecks[0].current: status.conditions[0].status == 'True'",
				Message: "waiting for Widget w: healthChecks[0].current: status.conditions[0].status == 'True' does not hold yet " +
					"(status.conditions=[])"}},
		{"a value of another type than the rule's", widgetCheck("", "", "status.phase > 1"), "{phase: Running}",
			health.Result{Status: health.InProgress, Rule: "healthChecks[0].current: status.phase > 1",
				Message: "Widget w: healthChecks[0].current cannot be evaluated: no such overload"}},
		{"a rule that gives no bool", widgetCheck("", "", running, "status.phase"), "{phase: Running}",
			health.Result{Status: health.InProgress, Rule: "tasks[0].spec.readyWhen[0]: status.phase",
				Message: "Widget w: tasks[0].spec.readyWhen[0] cannot be evaluated: gives string, not a bool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := Compile(tt.rules)
			if err != nil {
				t.Fatal(err)
			}
			got := rules.Check(context.Background(), object(t, widget+tt.status), "app")
			got.Observed = nil // the message shows them
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAKindsJudgeIsEveryVersionsRules: the manager keys its judges by the
// rules' sources, so the order healthChecks list a kind's versions in must
// not make another judge, while a rule of another version must.
func TestAKindsJudgeIsEveryVersionsRules(t *testing.T) {
	v1 := kudov1beta1.HealthCheck{APIVersion: "example.com/v1", Kind: "Widget", Current: "status.phase == 'Running'"}
	v2 := kudov1beta1.HealthCheck{APIVersion: "example.com/v2", Kind: "Widget", Failed: "status.broken", Current: "status.ok"}
	widgets := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	judge := func(checks ...kudov1beta1.HealthCheck) *Judge {
		t.Helper()
		rules, err := Compile(&kudov1beta1.OperatorVersionSpec{HealthChecks: checks})
		if err != nil {
			t.Fatal(err)
		}
		return rules.JudgeOf(widgets, "app")
	}
	v1First, v2First := judge(v1, v2), judge(v2, v1)
	if v1First.Key != v2First.Key {
		t.Errorf("one kind's rules in another order have another key:\n%q\n%q", v1First.Key, v2First.Key)
	}
	v2Changed := v2
	v2Changed.Current = "status.ok == true"
	if judge(v1, v2Changed).Key == v1First.Key {
		t.Error("a change of the v2 rule kept the key")
	}
	broken := object(t, "apiVersion: example.com/v2\nkind: Widget\nmetadata: {name: w}\nstatus: {broken: true, phase: Running}")
	if got := v1First.Check(broken); got.Status != health.Failed || got.Rule != "healthChecks[1].failed: status.broken" {
		t.Errorf("a v2 Widget judged %s by %q, want Failed by its version's rule", got.Status, got.Rule)
	}

	readyWhen := &kudov1beta1.OperatorVersionSpec{Tasks: widgetCheck("", "", "").Tasks}
	readyWhen.Tasks[0].Spec.ReadyWhen = []string{"status.a", "status.b"}
	rules, err := Compile(readyWhen)
	if err != nil {
		t.Fatal(err)
	}
	if j := rules.JudgeOf(widgets, "app"); j == nil || j.Key != "status.a\x01status.b" {
		t.Errorf("JudgeOf a kind readyWhen alone judges = %v, want the key of its two rules", j)
	}
}

// TestAPreviewIsCutAtACharacter: a verdict shows a field in at most limit
// bytes of valid UTF-8, whatever the field holds.
func TestAPreviewIsCutAtACharacter(t *testing.T) {
	tests := []struct {
		value any
		want  string
	}{
		{"01234567", `"01234567"`},
		{"0123456789", `"012345…`},
		{strings.Repeat("a", 1<<20), `"aaaaaa…`},
		{"ééééééé", `"ééé…`},
		{"aéééééé", `"aéé…`},
		{[]any{"abc", "def", "ghi"}, `["abc",…`},
		{map[string]any{"z": int64(1), "a": []any{1.5, "x"}}, `{"a":[1…`},
		{map[string]any{}, `{}`},
		{int64(12), `12`},
		{true, `true`},
		{nil, `null`},
	}
	for _, tt := range tests {
		got := preview(tt.value, 10)
		if got != tt.want || len(got) > 10 || !utf8.ValidString(got) {
			t.Errorf("preview of a %T, 10 = %q (%d bytes), want %q", tt.value, got, len(got), tt.want)
		}
	}
}

func TestAVerdictListsTheFieldsItsRuleRead(t *testing.T) {
	if got := inParentheses(nil); got != "" {
		t.Errorf("inParentheses(none) = %q, want nothing", got)
	}
	got := inParentheses([]kudov1beta1.ObservedField{{Field: "status.phase", Value: `"Pending"`}, {Field: "spec.x", Value: "<absent>"}})
	if want := ` (status.phase="Pending", spec.x=<absent>)`; got != want {
		t.Errorf("inParentheses = %q, want %q", got, want)
	}
}

// TestATypeErrorNamesTheRuleAndTheSchema: package verify reports a
// FieldError where the rule is, and only a FieldError.
func TestATypeErrorNamesTheRuleAndTheSchema(t *testing.T) {
	schemas, err := CRDSchemas(object(t, widgetCRD), "templates/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	widgetSchema := schemas[schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}]
	const against = " (checked against the schema of example.com/v1 Widget in templates/crd.yaml)"
	tests := []struct {
		name, source, want string
	}{
		{"a misspelled field, at its column", "status.phasee == 'Running'", "undefined field 'phasee' (column 7)" + against},
		{"a field that is no bool", "status.phase", "the expression gives a string, not a bool" + against},
		{"too long to compile", strings.Repeat("a", MaxExpressionBytes+1), "the expression has 4097 bytes, more than the 4096 a rule may"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Typecheck("healthChecks[0].current", tt.source, widgetSchema)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "healthChecks[0].current" || fe.Message != tt.want {
				t.Errorf("Typecheck = %#v, want a FieldError of healthChecks[0].current: %s", err, tt.want)
			}
		})
	}
	// A rule of unknown type runs without a schema, and waits if it gives
	// no bool: the schema refuses it before.
	if _, err := NewExpression("f", "status.phase"); err != nil {
		t.Errorf("NewExpression(status.phase) = %v, want it compiled", err)
	}
}

// TestEachServedVersionOfACRDHasItsSchema: a rule of one version is checked
// against that version's schema; one with no schema is not typed.
func TestEachServedVersionOfACRDHasItsSchema(t *testing.T) {
	crd := strings.Replace(widgetCRD, "  versions:\n", `  versions:
  - name: v1alpha1
    served: true
    storage: false
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          status: {type: object, properties: {state: {type: string}}}
`, 1)
	schemas, err := CRDSchemas(object(t, crd), "templates/crds/widget.yaml")
	if err != nil {
		t.Fatal(err)
	}
	from := map[string]string{}
	for gvk, s := range schemas {
		from[gvk.Version] = s.From
	}
	want := map[string]string{"v1": "example.com/v1 Widget in templates/crds/widget.yaml", "v2": "example.com/v2 Widget in templates/crds/widget.yaml"}
	if diff := cmp.Diff(want, from); diff != "" {
		t.Fatalf("CRDSchemas (-want +got):\n%s", diff)
	}
	v2 := schemas[schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}]
	if err := Typecheck("f", "status.state == 'Ready'", v2); err != nil {
		t.Errorf("v2's field: %v", err)
	}
	if err := Typecheck("f", "status.phase == 'Ready'", v2); err == nil || !strings.Contains(err.Error(), "undefined field 'phase'") {
		t.Errorf("v1's field in a v2 rule: %v, want it refused", err)
	}

	if _, err := CRDSchemas(object(t, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {versions: 3}"), "x"); err == nil {
		t.Error("CRDSchemas of versions that are no list: no error")
	}
}
