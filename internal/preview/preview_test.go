package preview

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
)

func TestPlan(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-{{ .StepName }}\n"
	ov := &kudov1beta1.OperatorVersion{}
	ov.Name = "demo-0.1.0"
	ov.Spec = kudov1beta1.OperatorVersionSpec{
		Operator:   corev1.ObjectReference{Name: "demo"},
		Parameters: []kudov1beta1.Parameter{{Name: "ENABLED", Default: ptr.To("false")}},
		Templates: map[string]string{
			"cm.yaml":     cm,
			"pod.yaml":    "apiVersion: v1\nkind: Pod\nspec:\n  initContainers: [{name: init, image: busybox}]\n",
			"params.yaml": "NODE_COUNT: \"{{ .Params.ENABLED }}\"\n",
		},
		Tasks: []kudov1beta1.Task{
			{Name: "app", Kind: kudov1beta1.ApplyTaskKind, Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"cm.yaml"}}}},
			{Name: "maybe", Kind: kudov1beta1.ToggleTaskKind, Spec: kudov1beta1.TaskSpec{
				ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"cm.yaml"}},
				ToggleTaskSpec:   kudov1beta1.ToggleTaskSpec{Parameter: "ENABLED"}}},
			{Name: "gen", Kind: kudov1beta1.PipeTaskKind, Spec: kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{
				Pod: "pod.yaml", Pipe: []kudov1beta1.PipeSpec{{File: "/tmp/f", Kind: "ConfigMap", Key: "File"}}}}},
			{Name: "child", Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{
				Package: "zookeeper", OperatorVersion: "0.3.3", ParameterFile: "params.yaml"}}},
			{Name: "wait", Kind: kudov1beta1.DummyTaskKind},
		},
		Plans: map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{
			{Name: "main", Steps: []kudov1beta1.Step{{Name: "one", Tasks: []string{"app", "maybe"}}, {Name: "two", Tasks: []string{"gen", "child", "wait"}}}},
		}}},
	}
	tasks, err := Plan(&Input{
		OperatorVersion: ov, InstanceName: "demo", Namespace: "ns", PlanName: "deploy",
		Parameters: map[string]string{"ENABLED": "true"},
		Served:     func(schema.GroupVersionKind) bool { return true }, Scope: render.BuiltinScope,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range tasks {
		line := task.Step + "/" + task.Name + " " + string(task.Action)
		for _, o := range task.Objects {
			line += " " + o.GetKind() + ":" + o.GetName()
		}
		if task.Note != "" {
			line += " # " + strings.ReplaceAll(task.Note, "\n", " ")
		}
		got = append(got, line)
	}
	want := []string{
		"one/app apply ConfigMap:demo-one",
		"one/maybe apply ConfigMap:demo-one",
		"two/gen run Pod:demo-deploy-main-two-gen # stores its files as ConfigMap demo.deploy.main.two.gen.file",
		`two/child install # installs package zookeeper version 0.3.3 as Instance demo-zookeeper with parameters: NODE_COUNT: "true" `,
		"two/wait none # does nothing (wantErr false, fatal false, done false)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	ov.Spec.Parameters[0].Default = ptr.To("maybe")
	if _, err := Plan(&Input{OperatorVersion: ov, InstanceName: "demo", PlanName: "deploy", Scope: render.BuiltinScope,
		Served: func(schema.GroupVersionKind) bool { return true }}); err == nil ||
		err.Error() != `plan deploy, phase main, step one, task maybe: toggle parameter ENABLED is "maybe", not a boolean` {
		t.Errorf("a toggle that is not a boolean: %v", err)
	}
}

// TestToggleReadsBooleansAsTheControllerDoes: `package render` switches a
// Toggle as the controller does, with strconv.ParseBool, so -p ENABLED=1
// previews the objects the controller applies.
func TestToggleReadsBooleansAsTheControllerDoes(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{}
	ov.Name = "demo-0.1.0"
	ov.Spec = kudov1beta1.OperatorVersionSpec{
		Operator:   corev1.ObjectReference{Name: "demo"},
		Parameters: []kudov1beta1.Parameter{{Name: "ENABLED", Default: ptr.To("false")}},
		Templates:  map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"},
		Tasks: []kudov1beta1.Task{{Name: "maybe", Kind: kudov1beta1.ToggleTaskKind, Spec: kudov1beta1.TaskSpec{
			ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"cm.yaml"}},
			ToggleTaskSpec:   kudov1beta1.ToggleTaskSpec{Parameter: "ENABLED"}}}},
		Plans: map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{
			{Name: "main", Steps: []kudov1beta1.Step{{Name: "one", Tasks: []string{"maybe"}}}}}}},
	}
	for value, want := range map[string]string{"1": "apply", "t": "apply", "TRUE": "apply", " true ": "apply", "0": "delete", "false": "delete", "": "delete"} {
		tasks, err := Plan(&Input{OperatorVersion: ov, InstanceName: "demo", PlanName: "deploy", Scope: render.BuiltinScope,
			Parameters: map[string]string{"ENABLED": value}, Served: func(schema.GroupVersionKind) bool { return true }})
		if err != nil || len(tasks) != 1 || string(tasks[0].Action) != want {
			t.Errorf("ENABLED=%q: got %+v, %v; want %s", value, tasks, err, want)
		}
	}
}

// TestByTemplate: with ByTemplate, a task of several templates is built one
// template at a time, each Task naming its template; a KudoOperator task's
// Task holds its child.
func TestByTemplate(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{}
	ov.Spec = kudov1beta1.OperatorVersionSpec{
		Operator:   corev1.ObjectReference{Name: "demo"},
		Parameters: []kudov1beta1.Parameter{{Name: "REPLICAS", Default: ptr.To("3")}},
		Templates: map[string]string{
			"a.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n",
			"b.yaml":      "apiVersion: v1\nkind: Service\nmetadata:\n  name: b\n",
			"params.yaml": "replicas: {{ .Params.REPLICAS }}\n",
		},
		Tasks: []kudov1beta1.Task{
			{Name: "app", Kind: kudov1beta1.ApplyTaskKind, Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{
				Resources: []string{"a.yaml", "b.yaml"}}}},
			{Name: "child", Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{
				Package: "zookeeper", ParameterFile: "params.yaml"}}},
		},
		Plans: map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{
			{Name: "main", Steps: []kudov1beta1.Step{{Name: "one", Tasks: []string{"app", "child"}}}}}}},
	}
	tasks, err := Plan(&Input{OperatorVersion: ov, InstanceName: "demo", Namespace: "ns", PlanName: "deploy", ByTemplate: true,
		Served: func(schema.GroupVersionKind) bool { return true }, Scope: render.BuiltinScope})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range tasks {
		line := task.Name + " " + task.Template + ":"
		for _, o := range task.Objects {
			line += " " + o.GetKind() + "/" + o.GetName()
		}
		if task.Child != nil {
			line += fmt.Sprintf(" child %s %v", task.Child.Name, task.Child.Parameters)
		}
		got = append(got, line)
	}
	want := []string{"app a.yaml: ConfigMap/a Secret/a", "app b.yaml: Service/b", "child : child demo-zookeeper map[replicas:3]"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestKudoOperatorChildOfSensitiveValues: the preview shows no sensitive
// value of the parent's in what it says of a child, and its child knows
// which of its values go to its Secret.
func TestKudoOperatorChildOfSensitiveValues(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{}
	ov.Spec = kudov1beta1.OperatorVersionSpec{
		Operator:   corev1.ObjectReference{Name: "demo"},
		Parameters: []kudov1beta1.Parameter{{Name: "TOKEN", Default: ptr.To("s3cr3t-token"), Sensitive: ptr.To(true)}},
		Templates:  map[string]string{"params.yaml": "token: {{ .Params.TOKEN }}\nreplicas: 3\n"},
		Tasks: []kudov1beta1.Task{{Name: "child", Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{
			KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "zookeeper", ParameterFile: "params.yaml"}}}},
		Plans: map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{
			{Name: "main", Steps: []kudov1beta1.Step{{Name: "one", Tasks: []string{"child"}}}}}}},
	}
	tasks, err := Plan(&Input{OperatorVersion: ov, InstanceName: "demo", Namespace: "ns", PlanName: "deploy",
		Served: func(schema.GroupVersionKind) bool { return true }, Scope: render.BuiltinScope})
	if err != nil {
		t.Fatal(err)
	}
	if want := "installs package zookeeper as Instance demo-zookeeper with parameters:\ntoken: <sensitive TOKEN>\nreplicas: 3\n"; tasks[0].Note != want {
		t.Errorf("note = %q, want %q", tasks[0].Note, want)
	}
	child := &kudov1beta1.OperatorVersion{}
	child.Spec.Parameters = []kudov1beta1.Parameter{{Name: "token"}, {Name: "replicas"}}
	values, err := tasks[0].Child.Values(child)
	if err != nil {
		t.Fatal(err)
	}
	if got := tasks[0].Child.Sensitive(values, child); len(got) != 1 || got["token"] != "s3cr3t-token" {
		t.Errorf("the child's sensitive values are %v, want its token", got)
	}
}
