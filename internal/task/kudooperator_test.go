package task

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
)

const parentPassword = "hunter2@long"

// kudoOperatorEnv is a parent Instance "shop" with a sensitive PASSWORD,
// whose task "db" installs package db with childParams as its parameter
// file; the db OperatorVersion marks API_KEY sensitive.
func kudoOperatorEnv(t *testing.T, childParams string, password string, planUID types.UID) (*Env, client.Client) {
	t.Helper()
	scheme := testScheme(t)
	child := &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "db-0.1.0", Namespace: "ns"},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator: corev1.ObjectReference{Name: "db"}, Version: "0.1.0",
			Parameters: []kudov1beta1.Parameter{
				{Name: "DB_PASSWORD"}, {Name: "URL"}, {Name: "REPLICAS"}, {Name: "API_KEY", Sensitive: ptr.To(true)},
			},
		},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(child).Build()
	ov := &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-0.1.0", Namespace: "ns"},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator:   corev1.ObjectReference{Name: "shop"},
			Parameters: []kudov1beta1.Parameter{{Name: "PASSWORD", Sensitive: ptr.To(true)}, {Name: "REPLICAS"}},
			Templates:  map[string]string{"db-params.yaml": childParams},
			Tasks: []kudov1beta1.Task{{Name: "db", Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{
				KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "db", OperatorVersion: "0.1.0", ParameterFile: "db-params.yaml"}}}},
			Plans: map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{
				{Name: "main", Steps: []kudov1beta1.Step{{Name: "db", Tasks: []string{"db"}}}}}}},
		},
	}
	instance := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "ns", UID: "shop-uid",
		Labels: map[string]string{kudov1beta1.OperatorLabel: "shop"}}}
	owner := OwnerReference(instance)
	values := map[string]string{"PASSWORD": password, "REPLICAS": "3"}
	return &Env{
		Client: c, Objects: objects.NewManager(instance, c, objects.Options{}), Instance: instance,
		Site: render.Site{
			OperatorVersion: ov, Instance: "shop", Namespace: "ns", Plan: "deploy", Phase: "main", Step: "db",
			PlanUID: planUID, Params: map[string]any{"PASSWORD": password, "REPLICAS": "3"}, Owner: &owner,
		},
		Served: func(schema.GroupVersionKind) bool { return true }, Scope: render.BuiltinScope,
		Redactor: params.NewRedactor(values, map[string]bool{"PASSWORD": true}),
	}, c
}

// TestKudoOperatorKeepsSensitiveValuesOutOfTheChildsSpec: a child value that
// shows a sensitive value of the parent's, or that the child's
// OperatorVersion marks sensitive, reaches the child through a Secret its
// spec.secretParameters name, never its spec.parameters.
func TestKudoOperatorKeepsSensitiveValuesOutOfTheChildsSpec(t *testing.T) {
	tests := []struct {
		name, file string
		// plain are the child's spec.parameters; secret the Secret's data.
		plain, secret map[string]string
	}{
		{"the parent's sensitive value", "DB_PASSWORD: {{ .Params.PASSWORD }}\nREPLICAS: \"{{ .Params.REPLICAS }}\"\n",
			map[string]string{"REPLICAS": "3"}, map[string]string{"DB_PASSWORD": parentPassword}},
		{"a value that shows the parent's sensitive value", "URL: postgres://shop:{{ .Params.PASSWORD | urlquery }}@db:5432\n",
			nil, map[string]string{"URL": "postgres://shop:hunter2%40long@db:5432"}},
		{"a value that shows it base64-encoded", "URL: https://db/?auth={{ printf \"shop:%s\" .Params.PASSWORD | b64enc }}\n",
			nil, map[string]string{"URL": "https://db/?auth=c2hvcDpodW50ZXIyQGxvbmc="}},
		{"a parameter the child marks sensitive", "API_KEY: k3y-of-the-package\nREPLICAS: \"2\"\n",
			map[string]string{"REPLICAS": "2"}, map[string]string{"API_KEY": "k3y-of-the-package"}},
		{"no sensitive value: no Secret", "REPLICAS: \"{{ .Params.REPLICAS }}\"\n", map[string]string{"REPLICAS": "3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			env, c := kudoOperatorEnv(t, tt.file, parentPassword, "0f3c2a9e-5b1d-4c7a-9e2f-1a2b3c4d5e6f")
			res, err := Run(ctx, &env.Site.OperatorVersion.Spec.Tasks[0], env)
			if err != nil {
				t.Fatal(err)
			}
			child := &kudov1beta1.Instance{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "shop-db"}, child); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(child.Spec.Parameters, tt.plain) {
				t.Errorf("spec.parameters = %v, want %v", child.Spec.Parameters, tt.plain)
			}
			if len(tt.secret) == 0 {
				if len(child.Spec.SecretParameters) > 0 || len(res.Applied) != 1 {
					t.Errorf("a child without sensitive values got secret parameters %v, applied %d objects",
						child.Spec.SecretParameters, len(res.Applied))
				}
				return
			}
			const secretName = "shop-db-parameters-0f3c2a9e"
			for name := range tt.secret {
				if ref := child.Spec.SecretParameters[name]; ref != (kudov1beta1.SecretKeyReference{Name: secretName, Key: name}) {
					t.Errorf("spec.secretParameters.%s = %v", name, ref)
				}
			}
			if names := slices.Sorted(maps.Keys(child.Spec.SecretParameters)); !slices.Equal(names, slices.Sorted(maps.Keys(tt.secret))) {
				t.Errorf("spec.secretParameters name %v", names)
			}
			secret := &corev1.Secret{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: secretName}, secret); err != nil {
				t.Fatal(err)
			}
			data := map[string]string{}
			for k, v := range secret.Data {
				data[k] = string(v)
			}
			if !maps.Equal(data, tt.secret) {
				t.Errorf("the Secret holds %v, want %v", data, tt.secret)
			}
			// Applied as the parent applies what it renders, before the child,
			// and recorded in its inventory.
			if owner := metav1.GetControllerOf(secret); owner == nil || owner.UID != "shop-uid" {
				t.Errorf("the Secret is not the parent's: %v", secret.OwnerReferences)
			}
			if secret.Labels[kudov1beta1.InstanceLabel] != "shop" || secret.Annotations[kudov1beta1.AppliedHashAnnotation] == "" {
				t.Errorf("the Secret lacks what kudo-ng records on what it applies: %v %v", secret.Labels, secret.Annotations)
			}
			if len(res.Applied) != 2 || res.Applied[0].Object.GetKind() != "Secret" || res.Applied[1].Object.GetKind() != "Instance" {
				t.Errorf("applied %v, want the Secret, then the child", res.Applied)
			}
		})
	}
}

// TestKudoOperatorNewValuesChangeTheChildsSpec: a run of the parent's plan
// with a new value gives the child a Secret of its own, so that its spec
// changes and the parent waits for the child to take the value up.
func TestKudoOperatorNewValuesChangeTheChildsSpec(t *testing.T) {
	ctx := context.Background()
	file := "DB_PASSWORD: {{ .Params.PASSWORD }}\n"
	env, c := kudoOperatorEnv(t, file, parentPassword, "aaaaaaaa-run-1")
	if _, err := Run(ctx, &env.Site.OperatorVersion.Spec.Tasks[0], env); err != nil {
		t.Fatal(err)
	}
	next, _ := kudoOperatorEnv(t, file, "correct-horse", "bbbbbbbb-run-2")
	next.Client, next.Objects = c, objects.NewManager(next.Instance, c, objects.Options{})
	res, err := Run(ctx, &next.Site.OperatorVersion.Spec.Tasks[0], next)
	if err != nil {
		t.Fatal(err)
	}
	child := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "shop-db"}, child); err != nil {
		t.Fatal(err)
	}
	if ref := child.Spec.SecretParameters["DB_PASSWORD"]; ref.Name != "shop-db-parameters-bbbbbbbb" {
		t.Errorf("the child reads %v, not the new run's Secret", ref)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "shop-db-parameters-bbbbbbbb"}, secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["DB_PASSWORD"]) != "correct-horse" {
		t.Errorf("the new Secret holds %q", secret.Data["DB_PASSWORD"])
	}
	if res.Done {
		t.Error("the task is done before the child took up its new spec")
	}
}

// TestKudoOperatorNoteHidesSensitiveValues: what the preview and the plan
// say the child gets shows no sensitive value of the parent's.
func TestKudoOperatorNoteHidesSensitiveValues(t *testing.T) {
	env, _ := kudoOperatorEnv(t, "DB_PASSWORD: {{ .Params.PASSWORD }}\nREPLICAS: \"{{ .Params.REPLICAS }}\"\n", parentPassword, "run-1")
	intent, err := kudoOperator{}.Build(&env.Site.OperatorVersion.Spec.Tasks[0], env.input())
	if err != nil {
		t.Fatal(err)
	}
	want := "installs package db version 0.1.0 as Instance shop-db with parameters:\nDB_PASSWORD: <sensitive PASSWORD>\nREPLICAS: \"3\"\n"
	if intent.Note != want || strings.Contains(intent.Note, parentPassword) {
		t.Errorf("note = %q, want %q", intent.Note, want)
	}
}
