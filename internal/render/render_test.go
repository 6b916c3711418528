package render

import (
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func mustObjects(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Objects("t.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestTemplateVariables(t *testing.T) {
	vars := &Variables{
		Params: map[string]any{"COUNT": "3", "LIST": []any{"a", "b"}, "MAP": map[string]any{"k": "v"}, "UNSET": nil},
		Pipes:  map[string]string{"file": "i.deploy.main.gen.pipe.file"},
		Name:   "i", Namespace: "ns", OperatorName: "op", OperatorVersion: "op-1.0.0", AppVersion: "2.0",
		PlanName: "deploy", PhaseName: "main", StepName: "app",
	}
	tests := []struct{ text, want, wantErr string }{
		{text: "{{ .Name }}/{{ .Namespace }}/{{ .OperatorName }}/{{ .OperatorVersion }}/{{ .AppVersion }}", want: "i/ns/op/op-1.0.0/2.0"},
		{text: "{{ .PlanName }}.{{ .PhaseName }}.{{ .StepName }}", want: "deploy.main.app"},
		{text: "{{ .Pipes.file }}", want: "i.deploy.main.gen.pipe.file"},
		{text: "{{ add (int .Params.COUNT) 1 }}", want: "4"},
		{text: "{{ range .Params.LIST }}[{{ . }}]{{ end }}", want: "[a][b]"},
		{text: "{{ toYaml .Params.MAP }}", want: "k: v"},
		{text: "{{ if .Params.UNSET }}set{{ else }}unset{{ end }}", want: "unset"},
		{text: "{{ .Params.NOPE }}", wantErr: `template: t.yaml:1:10: executing "t.yaml" at <.Params.NOPE>: map has no entry for key "NOPE"`},
		{text: "{{ .Pipes.nope }}", wantErr: `template: t.yaml:1:9: executing "t.yaml" at <.Pipes.nope>: map has no entry for key "nope"`},
		{text: "{{ upper .Name | quote }}", want: `"I"`},
	}
	for _, tt := range tests {
		got, err := Template("t.yaml", tt.text, vars)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Template(%q) error = %v, want %q", tt.text, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Template(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
}

// TestTemplateCache: a template parsed once renders the variables of each
// call, and a new text under the same name is parsed anew.
func TestTemplateCache(t *testing.T) {
	for _, tt := range []struct{ text, name, want string }{
		{"a {{ .Name }}", "one", "a one"},
		{"a {{ .Name }}", "two", "a two"},
		{"b {{ .Name }}", "two", "b two"},
		{"a {{ .Name }}", "three", "a three"},
	} {
		got, err := Template("t.yaml", tt.text, &Variables{Name: tt.name})
		if err != nil || got != tt.want {
			t.Errorf("Template(%q) with Name %s = %q, %v; want %q", tt.text, tt.name, got, err, tt.want)
		}
	}
}

// TestSandbox: the sprig functions that read the manager's environment or
// file paths are not available, and the error says why.
func TestSandbox(t *testing.T) {
	for _, fn := range []string{"env", "expandenv", "base", "dir", "clean", "ext", "isAbs"} {
		_, err := Template("t.yaml", `{{ `+fn+` "HOME" }}`, &Variables{})
		want := `template: t.yaml:1: function "` + fn + `" not defined: ` + fn +
			` is not available to templates, which cannot read the manager's environment or files`
		if err == nil || err.Error() != want {
			t.Errorf("%s: error = %v, want %q", fn, err, want)
		}
	}
}

func TestObjects(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string // kind/name of each object
		wantErr    string
	}{
		{name: "one", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", want: []string{"ConfigMap/a"}},
		{name: "several, empty and comment-only documents dropped",
			text: "---\n# a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n---\n",
			want: []string{"ConfigMap/a", "Secret/b"}},
		{name: "a separator with a comment", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n--- # next\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
			want: []string{"ConfigMap/a", "ConfigMap/b"}},
		{name: "a literal block containing ---", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  f: |\n    x\n    ---\n    y\n",
			want: []string{"ConfigMap/a"}},
		{name: "empty", text: "\n\n", want: nil},
		{name: "no kind", text: "---\napiVersion: v1\nmetadata:\n  name: a\n", wantErr: "t.yaml: document 1 has no kind"},
		{name: "no apiVersion", text: "kind: ConfigMap\n", wantErr: "t.yaml: document 1 has no apiVersion"},
		{name: "not YAML", text: "apiVersion: v1\nkind: [\n",
			wantErr: "t.yaml: document 1 is not valid YAML: line 2: did not find expected node content (lines count from the start of the rendered document)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Objects("t.yaml", tt.text)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEnhance(t *testing.T) {
	objs := mustObjects(t, `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  labels: {app: db}
  annotations: {note: kept}
spec:
  template:
    metadata:
      labels: {app: db}
    spec:
      containers: [{name: db, image: postgres}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: b, image: busybox}]
`)
	owner := metav1.OwnerReference{APIVersion: "kudo.dev/v1beta1", Kind: "Instance", Name: "i", UID: "uid-1"}
	md := &Metadata{
		InstanceName: "i", Namespace: "ns", OperatorName: "op", OperatorVersion: "op-1.0.0",
		PlanName: "deploy", PhaseName: "main", StepName: "app", PlanUID: "plan-uid", Owner: &owner,
	}
	if err := Enhance(objs, md, BuiltinScope, nil); err != nil {
		t.Fatal(err)
	}
	want := `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: ns
  labels: {app: db, heritage: kudo, kudo.dev/operator: op, kudo.dev/instance: i}
  annotations: {note: kept, kudo.dev/plan: deploy, kudo.dev/phase: main, kudo.dev/step: app,
    kudo.dev/operator-version: op-1.0.0, kudo.dev/last-plan-execution-uid: plan-uid}
  ownerReferences:
  - {apiVersion: kudo.dev/v1beta1, kind: Instance, name: i, uid: uid-1, controller: true, blockOwnerDeletion: true}
spec:
  template:
    metadata:
      labels: {app: db, heritage: kudo, kudo.dev/operator: op, kudo.dev/instance: i}
    spec:
      containers: [{name: db, image: postgres}]
  volumeClaimTemplates:
  - metadata:
      name: data
      labels: {heritage: kudo, kudo.dev/operator: op, kudo.dev/instance: i}
    spec: {accessModes: [ReadWriteOnce]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
  labels: {heritage: kudo, kudo.dev/operator: op, kudo.dev/instance: i}
  annotations: {kudo.dev/plan: deploy, kudo.dev/phase: main, kudo.dev/step: app,
    kudo.dev/operator-version: op-1.0.0, kudo.dev/last-plan-execution-uid: plan-uid}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
  namespace: ns
  labels: {heritage: kudo, kudo.dev/operator: op, kudo.dev/instance: i}
  annotations: {kudo.dev/plan: deploy, kudo.dev/phase: main, kudo.dev/step: app,
    kudo.dev/operator-version: op-1.0.0, kudo.dev/last-plan-execution-uid: plan-uid}
  ownerReferences:
  - {apiVersion: kudo.dev/v1beta1, kind: Instance, name: i, uid: uid-1, controller: true, blockOwnerDeletion: true}
spec:
  jobTemplate:
    metadata:
      labels: {heritage: kudo, kudo.dev/operator: op, kudo.dev/instance: i}
    spec:
      template:
        metadata:
          labels: {heritage: kudo, kudo.dev/operator: op, kudo.dev/instance: i}
        spec:
          containers: [{name: b, image: busybox}]
`
	wantObjs := mustObjects(t, want)
	for i := range objs {
		if !reflect.DeepEqual(objs[i].Object, wantObjs[i].Object) {
			got, _ := yaml.Marshal(objs[i].Object)
			exp, _ := yaml.Marshal(wantObjs[i].Object)
			t.Errorf("object %d:\n%s\nwant:\n%s", i, got, exp)
		}
	}
}

func TestDependencyHash(t *testing.T) {
	const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      volumes:
      - {name: a, configMap: {name: %s}}
      - {name: b, secret: {secretName: %s}}
      - name: c
        projected: {sources: [{configMap: {name: %s}}, {secret: {name: %s}}]}
      initContainers:
      - name: init
        envFrom: [{configMapRef: {name: %s}}]
      containers:
      - name: main
        envFrom: [{secretRef: {name: %s}}]
        env:
        - {name: X, valueFrom: {configMapKeyRef: {name: %s, key: k}}}
        - {name: Y, valueFrom: {secretKeyRef: {name: %s, key: k}}}
`
	cm := func(name, value string, annotations ...string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": map[string]any{"k": value},
		}}
		if len(annotations) > 0 {
			o.SetAnnotations(map[string]string{annotations[0]: "true"})
		}
		return o
	}
	secret := func(name, value string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name}, "data": map[string]any{"k": value},
		}}
	}
	hash := func(t *testing.T, refs []any, cluster ...*unstructured.Unstructured) string {
		t.Helper()
		objs := mustObjects(t, fmt.Sprintf(deployment, refs...))
		deps := func(kind, namespace, name string) (*unstructured.Unstructured, bool, error) {
			for _, o := range cluster {
				if o.GetKind() == kind && o.GetName() == name {
					return o, true, nil
				}
			}
			return nil, false, nil
		}
		if err := Enhance(objs, &Metadata{Namespace: "ns"}, BuiltinScope, deps); err != nil {
			t.Fatal(err)
		}
		h, _, _ := unstructured.NestedString(objs[0].Object, "spec", "template", "metadata", "annotations", DependenciesHashAnnotation)
		return h
	}
	names := func(n ...string) []any {
		out := make([]any, len(n))
		for i := range n {
			out[i] = n[i]
		}
		return out
	}
	// Each reference in turn points at the one dependency that exists.
	positions := []struct {
		desc string
		kind string
	}{
		{"volume configMap", "ConfigMap"}, {"volume secret", "Secret"}, {"projected configMap", "ConfigMap"},
		{"projected secret", "Secret"}, {"init container envFrom configMapRef", "ConfigMap"}, {"envFrom secretRef", "Secret"},
		{"env configMapKeyRef", "ConfigMap"}, {"env secretKeyRef", "Secret"},
	}
	for i, pos := range positions {
		refs := names("none", "none", "none", "none", "none", "none", "none", "none")
		refs[i] = "dep"
		dep := cm("dep", "v1")
		changed := cm("dep", "v2")
		if pos.kind == "Secret" {
			dep, changed = secret("dep", "djE="), secret("dep", "djI=")
		}
		before, after := hash(t, refs, dep), hash(t, refs, changed)
		if before == "" || before == after {
			t.Errorf("%s: hash %q then %q: want a hash that changes with the data", pos.desc, before, after)
		}
		if again := hash(t, refs, dep); again != before {
			t.Errorf("%s: the same data hashed differently", pos.desc)
		}
	}
	all := names("dep", "none", "none", "none", "none", "none", "none", "none")
	if h := hash(t, all); h != "" {
		t.Errorf("a missing dependency must not be hashed, got %q", h)
	}
	if h := hash(t, all, cm("dep", "v1", SkipHashAnnotation)); h != "" {
		t.Errorf("a dependency annotated %s must not be hashed, got %q", SkipHashAnnotation, h)
	}
}

func TestResourcesRequireNames(t *testing.T) {
	_, err := Task(&Request{
		Templates: map[string]string{"t.yaml": "apiVersion: v1\nkind: ConfigMap\n"}, Resources: []string{"t.yaml"},
		Served: func(schema.GroupVersionKind) bool { return true }, Scope: BuiltinScope,
	})
	if err == nil || err.Error() != "t.yaml: object 1 (ConfigMap) has no metadata.name" {
		t.Fatalf("error = %v", err)
	}
}
