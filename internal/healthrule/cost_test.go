package healthrule

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// attack is the second attack of issue 62: eight replacements of a
// character by sixteen, which built 4 GiB for a cost of 8 as CEL counted.
var attack = "'a'" + strings.Repeat(".replace('a', 'aaaaaaaaaaaaaaaa')", 8) + ".size() > 0"

// maxAllocated is what one evaluation may allocate, whatever the rule.
const maxAllocated = 64 << 20

// largeObject has fields as large as a rule's author or an attacker may
// make them, about 2.5 MB in all: a name of 253 bytes (the longest there
// is), a string of 1 MiB, lists of 2,000 and 200,000 items, a pattern of
// 300,000 instructions.
func largeObject() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": strings.Repeat("a", 253)},
		"status": map[string]any{
			"text": strings.Repeat("a", 1<<20), "list": listOf(2000), "items": listOf(200_000),
			"pattern": strings.Repeat("a{1000}", 100),
		},
	}}
}

func listOf(n int) []any {
	l := make([]any, n)
	for n := range l {
		l[n] = "ab"
	}
	return l
}

// unestimated compiles source as NewExpression does but for the estimate
// of its cost: the bounds of its evaluation alone.
func unestimated(t testing.TB, source string) *Expression {
	t.Helper()
	checked, err := compile(dynamicEnv, "f", source)
	if err != nil {
		t.Fatal(err)
	}
	program, err := newProgram(checked)
	if err != nil {
		t.Fatal(err)
	}
	return &Expression{Field: "f", Source: source, program: program}
}

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestGrowingRulesAreBounded(t *testing.T) {
	obj := largeObject()
	text8 := strings.TrimSuffix(strings.Repeat("status.text + ", 8), " + ")
	items8 := strings.TrimSuffix(strings.Repeat("status.items + ", 8), " + ")
	tests := []struct {
		name, rule string
		// compile is what NewExpression says, or "" if it compiles the
		// rule; run what its evaluation, without the estimate and within
		// its cost alone, says.
		compile, run string
	}{
		{"the attack: replace, chained", attack,
			"estimated rule cost exceeds budget by factor of 7.8x (784772718 on an object of 3 MiB, where a rule may cost 100000000)",
			"operation cancelled: actual cost limit exceeded: replace would build 16777216 bytes, a cost of 1782580 by itself"},
		{"replace of a field, chained", "string(metadata.name)" + strings.Repeat(".replace('a', 'aaaaaaaaaaaaaaaa')", 4) + ".size() > 0",
			"by factor of more than 100x", "replace would build 16580608 bytes"},
		{"string concatenation", "(" + text8 + ").size() > 0", "estimated rule cost exceeds budget", "actual cost limit exceeded"},
		{"list concatenation", "(" + items8 + ").join('').size() > 0", "estimated rule cost exceeds budget", "actual cost limit exceeded"},
		{"list concatenation, compared", "(" + items8 + ") == (" + items8 + ")", "estimated rule cost exceeds budget", "actual cost limit exceeded"},
		{"split and join", "metadata.name" + strings.Repeat(".split('').join('aaaaaaaaaaaaaaaa')", 4) + ".size() > 0",
			"by factor of more than 100x", "would build"},
		{"one string, joined many times", "status.list.map(x, status.text).join('') != ''", "by factor of more than 100x", "join would build"},
		{"nested comprehension", "status.list.all(i, status.list.all(j, i + j != ''))", "by factor of more than 100x", "actual cost limit exceeded"},
		{"format with a precision", "'%.999999999f'.format([1.0]) != ''", "", "format would build 400002700 bytes"},
		// The estimate does not know the items of a list in a list.
		{"format of a list", "'%s'.format([status.list.map(x, status.text)]) != ''", "", "format would build"},
		{"a field again and again", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].all(i, status.text.lowerAscii() != '')", "", "actual cost limit exceeded"},
		{"quote", "strings.quote(status.text) != ''", "", "strings.quote would build 12582918 bytes"},
		{"a pattern of the object", "'x'.matches(status.pattern)", "", "matches would build 76918016 bytes"},
		{"a literal pattern", "'x'.matches('" + strings.Repeat("a{1000}", 100) + "')",
			"its pattern would compile to 300301 instructions, a cost of 7691802: more than the 1000000 a rule may cost", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewExpression("healthChecks[0].current", tt.rule)
			switch {
			case tt.compile == "" && err != nil:
				t.Errorf("NewExpression: %v, want it compiled", err)
			case tt.compile != "" && (err == nil || !strings.Contains(err.Error(), "healthChecks[0].current: ") || !strings.Contains(err.Error(), tt.compile)):
				t.Errorf("NewExpression: %v, want an error naming the field, with %q", err, tt.compile)
			}
			if tt.run == "" {
				return
			}
			e := unestimated(t, tt.rule)
			var holds bool
			n := allocated(func() { holds, err = e.eval(context.Background(), obj, time.Minute) })
			if err == nil || !strings.Contains(err.Error(), tt.run) {
				t.Errorf("eval = %v, %v; want an error with %q", holds, err, tt.run)
			}
			if n > maxAllocated {
				t.Errorf("eval allocated %d MiB, more than %d", n>>20, maxAllocated>>20)
			}
		})
	}
}

func TestTheAttackAllocatesLittle(t *testing.T) {
	e, obj := unestimated(t, attack), largeObject()
	var err error
	// It allocated 4,369 MiB, and took 31 s.
	n := allocated(func() { _, err = e.eval(context.Background(), obj, EvalTimeout) })
	if err == nil {
		t.Error("the attack holds")
	}
	if n > 4<<20 {
		t.Errorf("the attack allocated %d KiB, want the 1 MiB of its fifth replace, and little more", n>>10)
	}
}

// realRules are rules of docs/health.md, of Flux's CEL cheatsheet and of
// the tests, which do a little with each byte of an object.
var realRules = []string{
	"status.phase == 'Running'",
	"status.readyReplicas >= 2 && status.observedGeneration == metadata.generation",
	"status.size == spec.size",
	"status.?readyReplicas.orValue(0) == spec.replicas",
	"status.phase in ['Failed', 'Error']",
	"status.conditions.exists(e, e.type == 'Issuing' && e.status == 'False' && e.reason == 'Failed')",
	"status.conditions.exists(e, e.type == 'Ready' && e.status == 'True' && e.observedGeneration == metadata.generation)",
	"status.conditions.filter(e, e.type == 'Available').all(e, e.status == 'True')",
	"metadata.labels['app'] == 'web' && metadata.annotations.exists(k, k == 'x')",
	"status.conditions.exists(c, c.message.lowerAscii().contains('error'))",
	"status.conditions.exists(c, c.reason.matches('^Fail.*'))",
	"status.message.matches('^ready$') || status.phase.startsWith('Run')",
	"metadata.name.split('-').exists(p, p == 'web')",
	"'%s/%s'.format([metadata.namespace, metadata.name]) == 'default/web'",
	"status.replicas + status.unavailableReplicas == spec.replicas",
	"(metadata.name + '-web').size() < 64",
}

func TestRealRulesAreNotRefused(t *testing.T) {
	for _, rule := range realRules {
		checked, err := compile(dynamicEnv, "f", rule)
		if err != nil {
			t.Fatal(err)
		}
		estimate, err := dynamicEnv.EstimateCost(checked, newEstimator(checked))
		if err != nil || estimate.Max > EstimatedCostLimit/2 {
			t.Errorf("%s: estimated %d, %v; want it under half the limit", rule, estimate.Max, err)
		}
	}
}

func TestTypecheckEstimatesTheCostAsTheManager(t *testing.T) {
	schemas, err := CRDSchemas(object(t, widgetCRD), "templates/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range schemas {
		err := Typecheck("healthChecks[0].current", "status.phase"+strings.Repeat(".replace('a', 'aaaaaaaaaaaaaaaa')", 4)+" == ''", s)
		if err == nil || !strings.Contains(err.Error(), "healthChecks[0].current: estimated rule cost exceeds budget") {
			t.Errorf("Typecheck of a growing rule = %v", err)
		}
	}
}

// FuzzEvaluationIsBounded evaluates rules, without the estimate of their
// cost, on an object of a large string: whatever they do, they allocate
// little.
func FuzzEvaluationIsBounded(f *testing.F) {
	f.Add(attack)
	for _, rule := range realRules {
		f.Add(rule)
	}
	for _, seed := range []string{
		"status.text.replace('a', status.text).size() > 0",
		"status.text.split('a').join(status.text).size() > 0",
		"(status.list + status.list + status.list).map(x, x + status.text).size() > 0",
		"status.list.map(x, [status.list, status.list]).size() > 0",
		"'%x%x%x%x'.format([status.text, status.text, status.text, status.text]) != ''",
		"'%.1000000e'.format([1.5]) != ''",
		"base64.encode(bytes(status.text + status.text)) != ''",
		"string(base64.decode(status.text)) != ''",
		"status.text.indexOf(status.text.substring(1), 1) >= 0",
		"status.text.reverse().upperAscii().charAt(5) == 'A'",
		"status.list.exists(x, status.text.lastIndexOf(x) > 0)",
		"sets.contains(status.list + status.list, status.list)",
		"status.text.matches('(a{1000}){1000}')",
		"status.list.all(x, status.list.exists(y, (x + y).size() == 4))",
	} {
		f.Add(seed)
	}
	// Short lists: CEL takes a second to reach the cost limit in a
	// comprehension within another over 2,000 items, longer than the fuzzer
	// waits (its cost tracker goes through all it noted at each step).
	obj := largeObject()
	obj.Object["status"].(map[string]any)["list"] = listOf(100)
	obj.Object["status"].(map[string]any)["items"] = listOf(1000)
	f.Fuzz(func(t *testing.T, rule string) {
		if len(rule) > MaxExpressionBytes {
			return
		}
		checked, err := compile(dynamicEnv, "f", rule)
		if err != nil {
			return
		}
		program, err := newProgram(checked)
		if err != nil {
			return
		}
		e := &Expression{Field: "f", Source: rule, program: program}
		if n := allocated(func() { _, _ = e.eval(context.Background(), obj, EvalTimeout) }); n > maxAllocated {
			t.Errorf("%s allocated %d MiB, more than %d", rule, n>>20, maxAllocated>>20)
		}
	})
}
