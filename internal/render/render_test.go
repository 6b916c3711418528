package render

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
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
		got, err := DefaultLimits.Template("t.yaml", tt.text, vars)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("DefaultLimits.Template(%q) error = %v, want %q", tt.text, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("DefaultLimits.Template(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
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
		got, err := DefaultLimits.Template("t.yaml", tt.text, &Variables{Name: tt.name})
		if err != nil || got != tt.want {
			t.Errorf("DefaultLimits.Template(%q) with Name %s = %q, %v; want %q", tt.text, tt.name, got, err, tt.want)
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
		InstanceName: "i", Namespace: "ns", OperatorName: "op", OperatorVersion: "1.0.0",
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
    kudo.dev/last-plan-execution-uid: plan-uid}
  ownerReferences:
  - {apiVersion: kudo.dev/v1beta1, kind: Instance, name: i, uid: uid-1, controller: true, blockOwnerDeletion: true}
spec:
  template:
    metadata:
      labels: {app: db, heritage: kudo, kudo.dev/operator: op, kudo.dev/instance: i}
      annotations: {kudo.dev/operator-version: 1.0.0}
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
    kudo.dev/last-plan-execution-uid: plan-uid, kudo.dev/owner: ns/i}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
  namespace: ns
  labels: {heritage: kudo, kudo.dev/operator: op, kudo.dev/instance: i}
  annotations: {kudo.dev/plan: deploy, kudo.dev/phase: main, kudo.dev/step: app,
    kudo.dev/last-plan-execution-uid: plan-uid}
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
          annotations: {kudo.dev/operator-version: 1.0.0}
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

// TestEnhanceMarksTheShardOnTheObjectsOnly: an Instance's shard labels
// each object it applies, which its shard's manager caches by it, but no pod
// template (a new shard would restart the pods) nor volumeClaimTemplate
// (which cannot change).
func TestEnhanceMarksTheShardOnTheObjectsOnly(t *testing.T) {
	objs := mustObjects(t, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      containers: [{name: db, image: postgres}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce]}
`)
	md := &Metadata{InstanceName: "i", Namespace: "ns", OperatorName: "op", OperatorVersion: "1.0.0", Shard: "b"}
	if err := Enhance(objs, md, BuiltinScope, nil); err != nil {
		t.Fatal(err)
	}
	sts := objs[0]
	if got := sts.GetLabels()[kudov1beta1.ShardLabel]; got != "b" {
		t.Errorf("the StatefulSet's shard label is %q, want b", got)
	}
	podLabels, _, _ := unstructured.NestedStringMap(sts.Object, "spec", "template", "metadata", "labels")
	if _, found := podLabels[kudov1beta1.ShardLabel]; found || podLabels[kudov1beta1.InstanceLabel] != "i" {
		t.Errorf("pod template labels %v: want KUDO's, without the shard", podLabels)
	}
	claims, _, _ := unstructured.NestedSlice(sts.Object, "spec", "volumeClaimTemplates")
	claimLabels, _, _ := unstructured.NestedStringMap(claims[0].(map[string]any), "metadata", "labels")
	if _, found := claimLabels[kudov1beta1.ShardLabel]; found {
		t.Errorf("volumeClaimTemplate labels %v carry the shard", claimLabels)
	}
}

// TestEnhanceMarksTheOwnerOfObjectsInAnotherCluster: an owner reference to
// an Instance of another cluster would have the garbage collector of the
// objects' cluster delete them at once; the kudo.dev/owner annotation says
// whose they are instead.
func TestEnhanceMarksTheOwnerOfObjectsInAnotherCluster(t *testing.T) {
	objs := mustObjects(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n---\n"+
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n")
	owner := metav1.OwnerReference{APIVersion: "kudo.dev/v1beta1", Kind: "Instance", Name: "i", UID: "uid-1"}
	md := &Metadata{InstanceName: "i", Namespace: "ns", OperatorName: "op", OperatorVersion: "1.0.0", Owner: &owner, Remote: true}
	if err := Enhance(objs, md, BuiltinScope, nil); err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if refs := obj.GetOwnerReferences(); len(refs) > 0 {
			t.Errorf("%s %s has owner references %v", obj.GetKind(), obj.GetName(), refs)
		}
		if got := obj.GetAnnotations()[kudov1beta1.OwnerAnnotation]; got != "ns/i" {
			t.Errorf("%s %s: kudo.dev/owner %q, want ns/i", obj.GetKind(), obj.GetName(), got)
		}
	}
	if objs[0].GetNamespace() != "ns" {
		t.Errorf("the ConfigMap is in namespace %q, want the Instance's", objs[0].GetNamespace())
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

// TestTaskDropsFieldsKubernetesDoesNotDeclare: a rendered object of a
// built-in kind loses the fields its Go type does not declare, as with KUDO,
// which wrote typed objects; server-side apply would refuse them. Each is
// reported as a migration, which the controller and package verify show as
// warnings; other objects are applied exactly as rendered.
func TestTaskDropsFieldsKubernetesDoesNotDeclare(t *testing.T) {
	const spark = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: spark}
spec:
  selector: {matchLabels: {app: spark}}
  template:
    metadata:
      labels: {app: spark}
      initializers: {pending: []}
    spec:
      containers: [{name: spark, image: spark}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: conf}
data: {a: "1"}
immutable: false
`
	res, err := Task(&Request{
		Templates: map[string]string{"spark.yaml": spark}, Resources: []string{"spark.yaml"},
		Served: func(schema.GroupVersionKind) bool { return true }, Scope: BuiltinScope,
	})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for _, m := range res.Migrations {
		warnings = append(warnings, m.String())
	}
	want := []string{`spark.yaml: Deployment "spark": dropped field spec.template.metadata.initializers, ` +
		`which Kubernetes does not declare in apps/v1`}
	if !reflect.DeepEqual(warnings, want) {
		t.Errorf("migrations %q, want %q", warnings, want)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(res.Objects[0].Object, "spec", "template", "metadata", "initializers"); found {
		t.Errorf("spec.template.metadata.initializers is still there")
	}
	if v, found, _ := unstructured.NestedFieldNoCopy(res.Objects[1].Object, "immutable"); !found || v != false {
		t.Errorf("the ConfigMap's declared immutable: false changed: %v, %t", v, found)
	}
}
