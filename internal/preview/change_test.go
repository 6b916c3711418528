package preview

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/task"
)

func object(kind, name string, fields map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		obj.Object[k] = v
	}
	obj.SetAPIVersion("v1")
	obj.SetKind(kind)
	obj.SetNamespace("ns")
	obj.SetName(name)
	return obj
}

// answered is obj as the API server answers a write: what it sets on
// every write, and kudo-ng's bookkeeping of the run.
func answered(obj *unstructured.Unstructured, run string) *unstructured.Unstructured {
	out := obj.DeepCopy()
	out.SetResourceVersion("7" + run)
	out.SetUID("uid-1")
	out.SetGeneration(2)
	out.SetManagedFields(nil)
	_ = unstructured.SetNestedField(out.Object, map[string]any{"phase": run}, "status")
	annotations := map[string]string{
		kudov1beta1.PlanUIDAnnotation: run, kudov1beta1.AppliedHashAnnotation: run, kudov1beta1.PlanAnnotation: "deploy",
	}
	for k, v := range obj.GetAnnotations() {
		annotations[k] = v
	}
	out.SetAnnotations(annotations)
	return out
}

func TestCompare(t *testing.T) {
	settings := func(greeting string) *unstructured.Unstructured {
		return object("ConfigMap", "web", map[string]any{"data": map[string]any{"greeting": greeting}})
	}
	secret := func(password, user string) *unstructured.Unstructured {
		return object("Secret", "creds", map[string]any{"data": map[string]any{"password": password, "user": user}})
	}
	tests := []struct {
		name       string
		live, into *unstructured.Unstructured
		redactor   *params.Redactor
		verb       Verb
		diff       string
	}{{
		name: "a new object is created, every line added",
		into: answered(settings("hi"), "b"),
		verb: Create,
		diff: "--- live/v1.ConfigMap.ns.web\n+++ would/v1.ConfigMap.ns.web\n@@ -0,0 +1,7 @@\n+apiVersion: v1\n+data:\n+  greeting: hi\n" +
			"+kind: ConfigMap\n+metadata:\n+  name: web\n+  namespace: ns\n",
	}, {
		name: "only the run's bookkeeping and the server's fields differ: unchanged",
		live: answered(settings("hi"), "a"), into: answered(settings("hi"), "b"),
		verb: Unchanged,
	}, {
		name: "a changed value shows as a line removed and one added",
		live: answered(settings("hi"), "a"), into: answered(settings("bye"), "b"),
		verb: Configure,
		diff: "--- live/v1.ConfigMap.ns.web\n+++ would/v1.ConfigMap.ns.web\n@@ -1,6 +1,6 @@\n apiVersion: v1\n data:\n" +
			"-  greeting: hi\n+  greeting: bye\n kind: ConfigMap\n metadata:\n   name: web\n",
	}, {
		name: "a Secret's values never show: which keys change does",
		live: answered(secret("b2xk", "YWRtaW4="), "a"), into: answered(secret("bmV3", "YWRtaW4="), "b"),
		verb: Configure,
		diff: "--- live/v1.Secret.ns.creds\n+++ would/v1.Secret.ns.creds\n@@ -1,6 +1,6 @@\n apiVersion: v1\n data:\n" +
			"-  password: '*** (before)'\n+  password: '*** (after)'\n   user: '***'\n kind: Secret\n metadata:\n",
	}, {
		name:     "a sensitive parameter's value is redacted wherever it shows",
		live:     answered(settings("hi"), "a"),
		into:     answered(settings("token-123"), "b"),
		redactor: params.NewRedactor(map[string]string{"TOKEN": "token-123"}, map[string]bool{"TOKEN": true}),
		verb:     Configure,
		diff: "--- live/v1.ConfigMap.ns.web\n+++ would/v1.ConfigMap.ns.web\n@@ -1,6 +1,6 @@\n apiVersion: v1\n data:\n" +
			"-  greeting: hi\n+  greeting: <sensitive TOKEN>\n kind: ConfigMap\n metadata:\n   name: web\n",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compare("app", tc.live, tc.into, tc.redactor)
			if err != nil {
				t.Fatal(err)
			}
			if got.Verb != tc.verb {
				t.Errorf("verb %s, want %s", got.Verb, tc.verb)
			}
			if diff := cmp.Diff(tc.diff, got.Diff); diff != "" {
				t.Errorf("diff (-want +got):\n%s", diff)
			}
			if got.Would["status"] != nil || got.Would["metadata"].(map[string]any)["annotations"] != nil {
				t.Errorf("shown with what the server or the run sets: %v", got.Would)
			}
		})
	}
}

func TestCompareMasksWhatTheCallerHoldsToo(t *testing.T) {
	live := object("Secret", "creds", map[string]any{"stringData": map[string]any{"password": "plain"}})
	got, err := Compare("app", live, live.DeepCopy(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.Diff, "plain") || got.Live["stringData"].(map[string]any)["password"] != masked {
		t.Errorf("a Secret's value shows: %+v", got)
	}
	if live.Object["stringData"].(map[string]any)["password"] != "plain" {
		t.Error("masking changed the caller's object")
	}
}

func TestRemoved(t *testing.T) {
	got, err := Removed("app", Prune, answered(object("Secret", "old", map[string]any{"data": map[string]any{"k": "dg=="}}), "a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "--- live/v1.Secret.ns.old\n+++ would/v1.Secret.ns.old\n@@ -1,7 +0,0 @@\n-apiVersion: v1\n-data:\n-  k: '*** (before)'\n" +
		"-kind: Secret\n-metadata:\n-  name: old\n-  namespace: ns\n"
	if diff := cmp.Diff(want, got.Diff); diff != "" || got.Verb != Prune {
		t.Errorf("verb %s, diff (-want +got):\n%s", got.Verb, diff)
	}
}

func ref(name string) kudov1beta1.ObjectRef {
	return kudov1beta1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: name}
}

func TestStale(t *testing.T) {
	inv := []kudov1beta1.TaskInventory{
		{Task: "app", Objects: []kudov1beta1.InventoryObject{{ObjectRef: ref("kept")}, {ObjectRef: ref("dropped")}, {ObjectRef: ref("moved")}},
			Stale: []kudov1beta1.ObjectRef{ref("failed-before")}},
		{Task: "other", Objects: []kudov1beta1.InventoryObject{{ObjectRef: ref("not-in-plan")}}},
		{Task: "toggled", Objects: []kudov1beta1.InventoryObject{{ObjectRef: ref("switched-off")}}},
	}
	tasks := []Task{
		{Name: "app", Action: task.ActionApply, Objects: []*unstructured.Unstructured{object("ConfigMap", "kept", nil)}},
		{Name: "new", Action: task.ActionApply, Objects: []*unstructured.Unstructured{object("ConfigMap", "moved", nil)}},
		{Name: "toggled", Action: task.ActionDelete, Objects: []*unstructured.Unstructured{object("ConfigMap", "switched-off", nil)}},
	}
	want := []StaleObject{{Task: "app", Ref: ref("failed-before")}, {Task: "app", Ref: ref("dropped")}}
	if diff := cmp.Diff(want, Stale(inv, tasks)); diff != "" {
		t.Errorf("stale (-want +got):\n%s", diff)
	}
}

func TestReportChangesAndPrint(t *testing.T) {
	unchanged := Object{Task: "app", APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "a", Verb: Unchanged}
	kept := Object{Task: "app", APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "b", Verb: Keep, Note: "kept (annotated)"}
	tests := []struct {
		name    string
		report  Report
		changes bool
	}{
		{"nothing but unchanged and kept objects", Report{Plan: "deploy", Objects: []Object{unchanged, kept}}, false},
		{"no plan", Report{}, false},
		{"a refusal", Report{Refusal: "no"}, true},
		{"a pod a Pipe task runs", Report{Plan: "deploy", Runs: []string{"task gen (Pipe): runs a pod"}}, true},
		{"a child's change", Report{Plan: "deploy", Children: []*Report{{Objects: []Object{{Verb: Create}}}}}, true},
		{"a refused object", Report{Plan: "deploy", Objects: []Object{unchanged, {Verb: Refuse}}}, true},
	}
	for _, tc := range tests {
		if got := tc.report.Changes(); got != tc.changes {
			t.Errorf("%s: changes %t, want %t", tc.name, got, tc.changes)
		}
	}

	r := &Report{Instance: "web", Namespace: "ns", OperatorVersion: "web-0.2.0", Action: "upgrade", Plan: "upgrade",
		Steps: StepsOf([]Task{{Phase: "main", Step: "app", Name: "app", Kind: kudov1beta1.ApplyTaskKind},
			{Phase: "main", Step: "app", Name: "app", Kind: kudov1beta1.ApplyTaskKind},
			{Phase: "main", Step: "app", Name: "wait", Kind: kudov1beta1.DummyTaskKind}}),
		Objects: []Object{unchanged, kept, {Task: "app", APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c",
			Verb: Configure, Diff: "--- live\n+++ would\n"}},
		Children: []*Report{{Instance: "web-child", Namespace: "ns", OperatorVersion: "child-0.1.0", Action: "install",
			Refusal: "no OperatorVersion of package child is installed in namespace ns"}},
	}
	var out bytes.Buffer
	if err := r.Print(&out, true); err != nil {
		t.Fatal(err)
	}
	want := `Instance ns/web: upgrade (OperatorVersion web-0.2.0) runs plan upgrade
  phase main, step app: app (Apply), wait (Dummy)
ConfigMap ns/a: unchanged (task app)
ConfigMap ns/b: keep (task app): kept (annotated)
ConfigMap ns/c: configure (task app)
--- live
+++ would
Instance ns/web: 0 to create, 1 to configure, 0 to delete (0 pruned), 1 kept, 0 refused, 1 unchanged
Instance ns/web-child: install (OperatorVersion child-0.1.0) is refused: no OperatorVersion of package child is installed in namespace ns
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("printed (-want +got):\n%s", diff)
	}
}

func TestADiffOfAHugeObjectIsNotComputed(t *testing.T) {
	data := map[string]any{}
	for n := range MaxDiffLines {
		data[fmt.Sprintf("k%05d", n)] = "v"
	}
	live := object("ConfigMap", "big", map[string]any{"data": data})
	would := live.DeepCopy()
	_ = unstructured.SetNestedField(would.Object, "w", "data", "k00000")
	got, err := Compare("app", live, would, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("--- live/v1.ConfigMap.ns.big (%d lines)\n+++ would/v1.ConfigMap.ns.big (%d lines)\n"+
		"(no diff: an object of more than %d lines; -o yaml shows both)\n", MaxDiffLines+6, MaxDiffLines+6, MaxDiffLines)
	if got.Verb != Configure || got.Diff != want {
		t.Errorf("verb %s, diff %q", got.Verb, got.Diff)
	}
}
