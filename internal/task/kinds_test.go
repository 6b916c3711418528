package task

import (
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
)

// TestEveryKindIsRegistered: each kind the API's enum allows has a unit,
// and the registry holds no other.
func TestEveryKindIsRegistered(t *testing.T) {
	src, err := os.ReadFile("../../api/v1beta1/operatorversion_types.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\+kubebuilder:validation:Enum=(\S+)\ntype TaskKind string`).FindSubmatch(src)
	if m == nil {
		t.Fatal("the TaskKind enum marker is not in api/v1beta1/operatorversion_types.go")
	}
	var listed []string
	for _, k := range kudov1beta1.TaskKinds {
		listed = append(listed, string(k))
	}
	if enum := string(m[1]); enum != strings.Join(listed, ";") {
		t.Errorf("the CRD enum is %s but kudov1beta1.TaskKinds is %v", enum, listed)
	}
	for _, k := range kudov1beta1.TaskKinds {
		if _, err := For(k); err != nil {
			t.Errorf("task kind %s has no unit in the registry: %v", k, err)
		}
	}
	if len(kinds) != len(kudov1beta1.TaskKinds) {
		t.Errorf("the registry has %d kinds, the API %d", len(kinds), len(kudov1beta1.TaskKinds))
	}
	if _, err := For("Kustomize"); err == nil || err.Error() != `kind "Kustomize" is not one of Apply, Delete, Toggle, Pipe, KudoOperator, Dummy, Helm` {
		t.Errorf("an unknown kind: %v", err)
	}
}

func TestValidate(t *testing.T) {
	defs := &Definitions{
		Templates:  map[string]string{"cm.yaml": "", "pod.yaml": "", "params.yaml": ""},
		Parameters: map[string]kudov1beta1.ParameterType{"ENABLED": kudov1beta1.BooleanValueType, "UNTYPED": "", "COUNT": kudov1beta1.IntegerValueType},
	}
	resources := func(r ...string) kudov1beta1.TaskSpec {
		return kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: r}}
	}
	toggle := func(param string, r ...string) kudov1beta1.TaskSpec {
		s := resources(r...)
		s.Parameter = param
		return s
	}
	pipe := func(pod string, p ...kudov1beta1.PipeSpec) kudov1beta1.TaskSpec {
		return kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{Pod: pod, Pipe: p}}
	}
	file := kudov1beta1.PipeSpec{File: "/out/f", Kind: "ConfigMap", Key: "f"}
	tests := []struct {
		name string
		kind kudov1beta1.TaskKind
		spec kudov1beta1.TaskSpec
		// want are the errors as admission prints them; required marks
		// the ones admission refuses.
		want     []string
		required int
	}{
		{"an Apply task with its templates is valid", kudov1beta1.ApplyTaskKind, resources("cm.yaml"), nil, 0},
		{"an Apply task without templates cannot run", kudov1beta1.ApplyTaskKind, resources(),
			[]string{"spec.resources: Required value: an Apply task needs the templates it renders"}, 1},
		{"an Apply task naming a missing template", kudov1beta1.ApplyTaskKind, resources("cm.yaml", "gone.yaml"),
			[]string{`spec.resources[1]: Invalid value: "gone.yaml": template "gone.yaml" is not in templates/`}, 0},
		{"a Delete task without templates cannot run", kudov1beta1.DeleteTaskKind, resources(),
			[]string{"spec.resources: Required value: a Delete task needs the templates it renders"}, 1},
		{"a Toggle task with a boolean parameter is valid", kudov1beta1.ToggleTaskKind, toggle("ENABLED", "cm.yaml"), nil, 0},
		{"a Toggle task may switch on an untyped parameter", kudov1beta1.ToggleTaskKind, toggle("UNTYPED", "cm.yaml"), nil, 0},
		{"a Toggle task without its parameter cannot run", kudov1beta1.ToggleTaskKind, toggle("", "cm.yaml"),
			[]string{"spec.parameter: Required value: a Toggle task needs the boolean parameter that switches it"}, 1},
		{"a Toggle task without templates runs, switching nothing", kudov1beta1.ToggleTaskKind, toggle("ENABLED"),
			[]string{"spec.resources: Invalid value: null: a Toggle task needs the templates it switches"}, 0},
		{"a Toggle task on an undefined parameter", kudov1beta1.ToggleTaskKind, toggle("GONE", "cm.yaml"),
			[]string{`spec.parameter: Invalid value: "GONE": parameter "GONE" is not defined`}, 0},
		{"a Toggle task on an integer parameter", kudov1beta1.ToggleTaskKind, toggle("COUNT", "cm.yaml"),
			[]string{`spec.parameter: Invalid value: "COUNT": parameter "COUNT" is of type integer; a Toggle needs a boolean`}, 0},
		{"a Pipe task with a pod and a file is valid", kudov1beta1.PipeTaskKind, pipe("pod.yaml", file), nil, 0},
		{"a Pipe task without a pod cannot run", kudov1beta1.PipeTaskKind, pipe("", file),
			[]string{"spec.pod: Required value: a Pipe task needs a pod template and the files it pipes"}, 1},
		{"a Pipe task without files cannot run", kudov1beta1.PipeTaskKind, pipe("pod.yaml"),
			[]string{"spec.pod: Required value: a Pipe task needs a pod template and the files it pipes"}, 1},
		{"a Pipe file is a file or an envFile, not both", kudov1beta1.PipeTaskKind,
			pipe("pod.yaml", kudov1beta1.PipeSpec{File: "/a", EnvFile: "/b", Kind: "Secret", Key: "k"}), []string{"spec.pipe[0]"}, 0},
		{"a Pipe file goes to a Secret or a ConfigMap", kudov1beta1.PipeTaskKind,
			pipe("pod.yaml", kudov1beta1.PipeSpec{File: "/a", Kind: "Service", Key: "k"}),
			[]string{`spec.pipe[0].kind: Invalid value: "Service": kind "Service" is not Secret or ConfigMap`}, 0},
		{"a Pipe key is a name", kudov1beta1.PipeTaskKind, pipe("pod.yaml", kudov1beta1.PipeSpec{File: "/a", Kind: "Secret", Key: "a.b"}),
			[]string{`spec.pipe[0].key: Invalid value: "a.b": key "a.b" must match [a-zA-Z0-9_-]+`}, 0},
		{"a Pipe file is not a device", kudov1beta1.PipeTaskKind, pipe("pod.yaml", kudov1beta1.PipeSpec{File: "/dev/zero", Kind: "Secret", Key: "k"}),
			[]string{`spec.pipe[0].file: Invalid value: "/dev/zero": pipe file /dev/zero is a device: pipe a regular file the pod writes`}, 0},
		{"a Pipe envFile is not a kernel file", kudov1beta1.PipeTaskKind,
			pipe("pod.yaml", kudov1beta1.PipeSpec{EnvFile: "/proc/../proc/kmsg", Kind: "Secret", Key: "k"}),
			[]string{`spec.pipe[0].envFile: Invalid value: "/proc/../proc/kmsg": pipe file /proc/../proc/kmsg is a kernel file`}, 0},
		{"a Pipe file may be in a memory volume at /dev/shm", kudov1beta1.PipeTaskKind,
			pipe("pod.yaml", kudov1beta1.PipeSpec{File: "/dev/shm/out", Kind: "Secret", Key: "k"}), nil, 0},
		{"a KudoOperator task names its package", kudov1beta1.KudoOperatorTaskKind,
			kudov1beta1.TaskSpec{KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "zookeeper", ParameterFile: "params.yaml"}}, nil, 0},
		{"a KudoOperator task without a package cannot run", kudov1beta1.KudoOperatorTaskKind, kudov1beta1.TaskSpec{},
			[]string{"spec.package: Required value: a KudoOperator task needs the package it installs"}, 1},
		{"a KudoOperator task's parameter file must exist", kudov1beta1.KudoOperatorTaskKind,
			kudov1beta1.TaskSpec{KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "zookeeper", ParameterFile: "gone.yaml"}},
			[]string{`spec.parameterFile: Invalid value: "gone.yaml": template "gone.yaml" is not in templates/`}, 0},
		{"a Dummy task needs nothing", kudov1beta1.DummyTaskKind, kudov1beta1.TaskSpec{}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, err := For(tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			errs := kind.Validate(&tt.spec, defs, field.NewPath("spec"))
			if len(errs) != len(tt.want) {
				t.Fatalf("got %v, want %v", errs, tt.want)
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tt.want[i]) {
					t.Errorf("error %d = %q, want %q", i, e.Error(), tt.want[i])
				}
			}
			if got := len(Required(errs)); got != tt.required {
				t.Errorf("%d errors would refuse the OperatorVersion, want %d", got, tt.required)
			}
		})
	}
}

func buildInput(params map[string]any) *Input {
	ov := &kudov1beta1.OperatorVersion{}
	ov.Name = "demo-0.1.0"
	ov.Spec = kudov1beta1.OperatorVersionSpec{
		Operator: corev1.ObjectReference{Name: "demo"},
		Templates: map[string]string{
			"cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-{{ .StepName }}\n",
			"pod.yaml":    "apiVersion: v1\nkind: Pod\nspec:\n  initContainers: [{name: init, image: busybox, volumeMounts: [{name: out, mountPath: /out}]}]\n",
			"two.yaml":    "apiVersion: v1\nkind: Pod\nspec:\n  initContainers: [{name: init, image: busybox}]\n  containers: [{name: web, image: nginx}]\n",
			"always.yaml": "apiVersion: v1\nkind: Pod\nspec:\n  restartPolicy: Always\n  initContainers: [{name: init, image: busybox}]\n",
			"params.yaml": "NODE_COUNT: \"{{ .Params.COUNT }}\"\n",
			"list.yaml":   "- a\n- b\n",
		},
		Tasks: []kudov1beta1.Task{{Name: "gen", Kind: kudov1beta1.PipeTaskKind, Spec: kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{
			Pod: "pod.yaml", Pipe: []kudov1beta1.PipeSpec{{File: "/out/f", Kind: "ConfigMap", Key: "f"}}}}}},
		Plans: map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{
			{Name: "main", Steps: []kudov1beta1.Step{{Name: "files", Tasks: []string{"gen"}}}}}}},
	}
	return &Input{
		Site:   render.Site{OperatorVersion: ov, Instance: "demo", Namespace: "ns", Plan: "deploy", Phase: "main", Step: "files", Params: params},
		Served: func(schema.GroupVersionKind) bool { return true }, Scope: render.BuiltinScope,
	}
}

// TestBuild: what each kind would do, as the preview shows it and the
// controller acts on it.
func TestBuild(t *testing.T) {
	tests := []struct {
		name   string
		task   kudov1beta1.Task
		params map[string]any
		// want is the action, the objects as Kind/name, and the note.
		want    string
		wantErr string
	}{
		{"Apply renders its templates at the step", kudov1beta1.Task{Kind: kudov1beta1.ApplyTaskKind,
			Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"cm.yaml"}}}},
			nil, "apply ConfigMap/demo-files", ""},
		{"Delete renders what it deletes", kudov1beta1.Task{Kind: kudov1beta1.DeleteTaskKind,
			Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"cm.yaml"}}}},
			nil, "delete ConfigMap/demo-files", ""},
		{"Toggle applies when its parameter parses as true", toggleTask(), map[string]any{"ENABLED": "1"}, "apply ConfigMap/demo-files", ""},
		{"Toggle deletes when its parameter is false", toggleTask(), map[string]any{"ENABLED": "FALSE"}, "delete ConfigMap/demo-files", ""},
		{"Toggle deletes when its parameter is empty", toggleTask(), map[string]any{"ENABLED": " "}, "delete ConfigMap/demo-files", ""},
		{"Toggle refuses what is not a boolean", toggleTask(), map[string]any{"ENABLED": "yes"}, "", `toggle parameter ENABLED is "yes", not a boolean`},
		{"Toggle refuses an undefined parameter", toggleTask(), map[string]any{}, "", "toggle parameter ENABLED is not defined by the OperatorVersion"},
		{"Pipe runs its pod, named after the task, with the container that reads the files", pipeTask("pod.yaml"), nil,
			"run Pod/demo-deploy-main-files-gen # stores its files as ConfigMap demo.deploy.main.files.gen.f", ""},
		{"Pipe refuses a pod with containers", pipeTask("two.yaml"), nil, "",
			"pipe pod template two.yaml: spec.containers: Forbidden: a Pipe pod must have no containers"},
		{"Pipe refuses a pod that restarts always", pipeTask("always.yaml"), nil, "",
			`pipe pod template always.yaml: spec.restartPolicy: Invalid value: "Always"`},
		{"KudoOperator names its child and renders its parameters", kudoOperatorTask("params.yaml"), map[string]any{"COUNT": "3"},
			"install # installs package zookeeper version 0.3.3 as Instance demo-zookeeper with parameters: NODE_COUNT: \"3\" ", ""},
		{"KudoOperator refuses a parameter file that is not a map", kudoOperatorTask("list.yaml"), nil, "",
			"parameter file list.yaml is not a YAML map of parameters"},
		{"Dummy does nothing", kudov1beta1.Task{Kind: kudov1beta1.DummyTaskKind, Spec: kudov1beta1.TaskSpec{DummyTaskSpec: kudov1beta1.DummyTaskSpec{Done: true}}},
			nil, "none # does nothing (wantErr false, fatal false, done true)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.task.Name = "gen"
			kind, err := For(tt.task.Kind)
			if err != nil {
				t.Fatal(err)
			}
			intent, err := kind.Build(&tt.task, buildInput(tt.params))
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := string(intent.Action)
			for _, o := range intent.Objects {
				got += " " + o.GetKind() + "/" + o.GetName()
			}
			if intent.Note != "" {
				got += " # " + strings.ReplaceAll(intent.Note, "\n", " ")
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func toggleTask() kudov1beta1.Task {
	return kudov1beta1.Task{Kind: kudov1beta1.ToggleTaskKind, Spec: kudov1beta1.TaskSpec{
		ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"cm.yaml"}},
		ToggleTaskSpec:   kudov1beta1.ToggleTaskSpec{Parameter: "ENABLED"}}}
}

func pipeTask(pod string) kudov1beta1.Task {
	return kudov1beta1.Task{Kind: kudov1beta1.PipeTaskKind, Spec: kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{
		Pod: pod, Pipe: []kudov1beta1.PipeSpec{{File: "/out/f", Kind: "ConfigMap", Key: "f"}}}}}
}

func kudoOperatorTask(file string) kudov1beta1.Task {
	return kudov1beta1.Task{Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{
		Package: "zookeeper", OperatorVersion: "0.3.3", ParameterFile: file}}}
}
