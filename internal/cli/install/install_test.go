package install

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/repoconfig"
	kudocrd "github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/typedapi"
	"github.com/kudo-ng/kudo/test/corpus"
)

var hello = filepath.Join(corpus.Examples(), "hello", "operator")

// Packages of testdata: KUDO's install took each though package verify
// refuses it, but greeting with GREETING empty.
var (
	immutableParam = filepath.Join("testdata", "immutable-param")
	greeting       = filepath.Join("testdata", "greeting")
	parent         = filepath.Join("testdata", "parent")
)

func newClient() client.Client {
	return fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).Build()
}

// kudoObjects counts the Operators, OperatorVersions and Instances of a namespace.
func kudoObjects(t *testing.T, c client.Client, ns string) int {
	t.Helper()
	ops, ovs, is := &kudov1beta1.OperatorList{}, &kudov1beta1.OperatorVersionList{}, &kudov1beta1.InstanceList{}
	for _, l := range []client.ObjectList{ops, ovs, is} {
		if err := c.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	return len(ops.Items) + len(ovs.Items) + len(is.Items)
}

func TestInstall(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	ctx := context.Background()
	c := newClient()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Install: action.Install{Package: hello, Instance: "web", ParameterOptions: action.ParameterOptions{Parameters: []string{"replicas=5"}}}}); err != nil {
		t.Fatal(err)
	}
	want := "operator.kudo.dev/hello created\noperatorversion.kudo.dev/hello-1.27.0-0.1.0 created\ninstance.kudo.dev/web created\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, i); err != nil {
		t.Fatal(err)
	}
	if i.Spec.OperatorVersion.Name != "hello-1.27.0-0.1.0" || i.Spec.Parameters["replicas"] != "5" || i.Labels["kudo.dev/operator"] != "hello" {
		t.Errorf("Instance = %+v", i)
	}

	err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Install: action.Install{Package: hello, Instance: "web"}})
	if err == nil || err.Error() != "instance web already exists in namespace default: change it with kubectl kudo update or upgrade" {
		t.Errorf("second install: %v", err)
	}
	out.Reset()
	if err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Install: action.Install{Package: hello, SkipInstance: true}}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "operator.kudo.dev/hello unchanged\noperatorversion.kudo.dev/hello-1.27.0-0.1.0 unchanged\n" {
		t.Errorf("an installed OperatorVersion must be reused: %s", out)
	}
}

func TestInstallRefusesBeforeWriting(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	// No repository at all: KUDO's community one, the default, removed.
	if err := (&repoconfig.Config{}).Save(); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join("..", "..", "packages", "testdata", "bad", "undefined-task")
	tests := []struct {
		name string
		ns   string
		opts Options
		want string
	}{
		{"an undefined parameter", "default", Options{Install: action.Install{Package: hello, ParameterOptions: action.ParameterOptions{Parameters: []string{"replica=5"}}}},
			"parameter replica is not defined; the parameters are "},
		{"a bad parameter syntax", "default", Options{Install: action.Install{Package: hello, ParameterOptions: action.ParameterOptions{Parameters: []string{"replicas"}}}},
			`parameter "replicas": expected NAME=VALUE`},
		{"a missing namespace", "prod", Options{Install: action.Install{Package: hello}},
			"namespace prod does not exist: create it, or pass --create-namespace"},
		{"an invalid package", "default", Options{Install: action.Install{Package: bad}},
			`package bad is not valid: operator.yaml: plans.deploy.phases[0].steps[0].tasks[1]: task "ghost" is not defined in tasks`},
		{"a package that does not exist", "default", Options{Install: action.Install{Package: "./nowhere"}}, "package ./nowhere: no such directory or file"},
		{"a value its template fails on", "default", Options{Install: action.Install{Package: greeting, ParameterOptions: action.ParameterOptions{Parameters: []string{"GREETING="}}}},
			`package greeting is not valid: templates/cm.yaml: line 1, column 33: executing "cm.yaml" at <fail "GREETING must not be empty">: ` +
				"error calling fail: GREETING must not be empty"},
		{"no value for a required parameter without default", "default", Options{Install: action.Install{Package: immutableParam}},
			"parameter unchangeable is required and has no default: set it with -p unchangeable=VALUE"},
		{"a name without a repository", "default", Options{Install: action.Install{Package: "hello"}},
			"package hello is not a directory or file, and no repository is configured: pass --repo URL"},
		{"an unreachable repository", "default", Options{Install: action.Install{Package: "hello", PackageOptions: action.PackageOptions{Repo: "http://127.0.0.1:1"}}},
			"package hello is not a directory or file, and repository http://127.0.0.1:1 is unreachable: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient()
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			err := Run(context.Background(), action.NewConfig(c, tt.ns, streams), &tt.opts)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one starting %q", err, tt.want)
			}
			if n := kudoObjects(t, c, tt.ns) + kudoObjects(t, c, "default"); n != 0 {
				t.Errorf("%d objects written despite the error", n)
			}
		})
	}
}

// changedCopy copies a package to a temporary directory, with old replaced
// by new in one of its files.
func changedCopy(t *testing.T, pkg, file, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(pkg, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(pkg, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == file {
			if !bytes.Contains(data, []byte(old)) {
				t.Fatalf("%s has no %q", file, old)
			}
			data = bytes.Replace(data, []byte(old), []byte(new), 1)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestInstallRefusesAnInstalledOperatorVersionWithOtherContentAndReplacesAnUnusedOne(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	ctx := context.Background()
	c := newClient()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Install: action.Install{Package: hello, Instance: "web"}}); err != nil {
		t.Fatal(err)
	}
	// An Instance of another namespace uses it too.
	other := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "hello-1.27.0-0.1.0", Namespace: "default"}},
	}
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	edited := changedCopy(t, hello, "params.yaml", "default: 2", "default: 5")
	installedDefault := func() string {
		t.Helper()
		ov := &kudov1beta1.OperatorVersion{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello-1.27.0-0.1.0"}, ov); err != nil {
			t.Fatal(err)
		}
		for _, p := range ov.Spec.Parameters {
			if p.Name == "replicas" {
				return *p.Default
			}
		}
		t.Fatal("replicas is gone")
		return ""
	}
	differs := "OperatorVersion hello-1.27.0-0.1.0 in namespace default differs from package hello 0.1.0 (in spec.parameters)"

	steps := []struct {
		name    string
		opts    Options
		remove  []*kudov1beta1.Instance
		wantErr string
		wantOut string
		want    string
	}{
		{name: "another Instance of it", opts: Options{Install: action.Install{Package: edited, Instance: "web2"}},
			wantErr: differs + ": bump operatorVersion in the package's operator.yaml, " +
				"or pass --replace-operator-version to replace it (if no Instance uses it)", want: "2"},
		{name: "only the Operator and OperatorVersion", opts: Options{Install: action.Install{Package: edited, SkipInstance: true}},
			wantErr: differs + ": bump operatorVersion", want: "2"},
		{name: "a replacement while Instances use it", opts: Options{Install: action.Install{Package: edited, SkipInstance: true, WriteOptions: action.WriteOptions{ReplaceOperatorVersion: true}}},
			wantErr: differs + ", and Instances apps/web, default/web use it: it cannot be replaced under them; " +
				"bump operatorVersion in the package's operator.yaml and upgrade them with kubectl kudo upgrade", want: "2"},
		{name: "a replacement when no Instance uses it", opts: Options{Install: action.Install{Package: edited, SkipInstance: true, WriteOptions: action.WriteOptions{ReplaceOperatorVersion: true}}},
			remove:  []*kudov1beta1.Instance{other, {ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}},
			wantOut: "operator.kudo.dev/hello unchanged\noperatorversion.kudo.dev/hello-1.27.0-0.1.0 replaced\n", want: "5"},
		{name: "the same content again", opts: Options{Install: action.Install{Package: edited, Instance: "web"}},
			wantOut: "operator.kudo.dev/hello unchanged\noperatorversion.kudo.dev/hello-1.27.0-0.1.0 unchanged\ninstance.kudo.dev/web created\n", want: "5"},
	}
	for _, step := range steps {
		for _, i := range step.remove {
			if err := c.Delete(ctx, i); err != nil {
				t.Fatal(err)
			}
		}
		out.Reset()
		err := Run(ctx, action.NewConfig(c, "default", streams), &step.opts)
		switch {
		case step.wantErr == "" && err != nil:
			t.Errorf("%s: %v", step.name, err)
		case step.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), step.wantErr)):
			t.Errorf("%s: error %v, want one starting %q", step.name, err, step.wantErr)
		case out.String() != step.wantOut:
			t.Errorf("%s: output\n%s\nwant\n%s", step.name, out, step.wantOut)
		}
		if got := installedDefault(); got != step.want {
			t.Errorf("%s: installed replicas default %s, want %s", step.name, got, step.want)
		}
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web2"}, &kudov1beta1.Instance{}); !apierrors.IsNotFound(err) {
		t.Errorf("Instance web2 of a refused install: %v", err)
	}
}

// TestInstallRendersTheTemplatesWithTheValuesGiven: as in KUDO's
// immutable-parameter suite, a template using a required parameter without
// default, which does not render with the defaults, installs with the value
// given.
func TestInstallRendersTheTemplatesWithTheValuesGiven(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	ctx := context.Background()
	c := newClient()
	streams, _, _, errOut := genericiooptions.NewTestIOStreams()
	opts := &Options{Install: action.Install{Package: immutableParam, Instance: "immutable-param", ParameterOptions: action.ParameterOptions{Parameters: []string{"unchangeable=fixedvalue"}}}}
	if err := Run(ctx, action.NewConfig(c, "default", streams), opts); err != nil {
		t.Fatal(err)
	}
	if errOut.Len() != 0 {
		t.Errorf("warnings for a package that breaks no rule: %s", errOut)
	}
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "immutable-param"}, i); err != nil {
		t.Fatal(err)
	}
	if i.Spec.Parameters["unchangeable"] != "fixedvalue" {
		t.Errorf("Instance parameters %v", i.Spec.Parameters)
	}
}

// TestInstallWarnsOfRulesOfPackagingBeforeWriting: a package that breaks
// only a rule of good packaging (a trigger naming no plan) installs, as with
// KUDO; the rule is printed first, worded as package verify words it.
func TestInstallWarnsOfRulesOfPackagingBeforeWriting(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	var output bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &output, ErrOut: &output}
	if err := Run(context.Background(), action.NewConfig(newClient(), "default", streams), &Options{Install: action.Install{Package: greeting}}); err != nil {
		t.Fatal(err)
	}
	want := `Warning: package greeting: params.yaml: parameters[0] GREETING: trigger "scale" names no plan of operator.yaml` + "\n" +
		"operator.kudo.dev/greeting created\noperatorversion.kudo.dev/greeting-0.1.0 created\ninstance.kudo.dev/greeting-instance created\n"
	if output.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", &output, want)
	}
}

// TestInstallWarnsThatAnotherNamespacesOperatorHoldsTheKind: the manager
// will not serve the package's kind, another namespace's Operator's; the
// install says so, naming it, and its Instance is made all the same.
func TestInstallWarnsThatAnotherNamespacesOperatorHoldsTheKind(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(kudocrd.V1)
	crd.SetName("widgetpackages.packages.kudo.dev")
	crd.SetLabels(map[string]string{typedapi.OperatorLabel: "widget", typedapi.OperatorNamespaceLabel: "team-a"})
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&kudov1beta1.Operator{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "widget"}},
		crd).Build()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	widget := filepath.Join(corpus.Examples(), "widget", "operator")
	if err := Run(context.Background(), action.NewConfig(c, "default", streams), &Options{Install: action.Install{Package: widget, Instance: "w"}}); err != nil {
		t.Fatal(err)
	}
	want := "Warning: package widget: no typed API in namespace default: the kind widgetpackages.packages.kudo.dev is " +
		"Operator team-a/widget's, which Operator default/widget claims too; its Instances run as Instances only\n"
	if errOut.String() != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", errOut, want)
	}
	if !strings.HasSuffix(out.String(), "instance.kudo.dev/w created\n") {
		t.Errorf("output:\n%s", out)
	}
}

// TestInstallWarnsOfADependencyRenderedWithoutTheValueItsParentPasses: a
// KudoOperator task's package renders with its defaults, not with what its
// parent passes, which only the plan knows: a template that needs a value
// the parent passes is a warning.
func TestInstallWarnsOfADependencyRenderedWithoutTheValueItsParentPasses(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if err := Run(context.Background(), action.NewConfig(newClient(), "default", streams), &Options{Install: action.Install{Package: parent}}); err != nil {
		t.Fatal(err)
	}
	want := `Warning: package child: templates/deployment.yaml: Deployment "child-instance": .spec.template.metadata.labels accessor error: ` +
		`contains non-string value in the map under key "fixed": <nil> is of the type <nil>, expected string ` +
		"(rendered without a value for LABEL, which the Instance must set)\n"
	if errOut.String() != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", errOut, want)
	}
	if !strings.HasSuffix(out.String(), "instance.kudo.dev/parent-instance created\n") {
		t.Errorf("output:\n%s", out)
	}
}

// progressing is a cluster where Instance key moves on by one state each
// time it is read, as the manager would run its plan.
func progressing(key client.ObjectKey, states ...func(*kudov1beta1.Instance)) client.Client {
	read := 0
	return fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace}}).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object,
			opts ...client.GetOption) error {
			if i, ok := obj.(*kudov1beta1.Instance); ok && k == key && read < len(states) {
				if err := c.Get(ctx, k, i); err != nil {
					return err
				}
				states[read](i)
				read++
				if err := c.Update(ctx, i); err != nil {
					return err
				}
			}
			return c.Get(ctx, k, obj, opts...)
		}}).Build()
}

func TestInstallWaitPrintsThePlansProgressAndWhyAStepFailed(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	step := func(status kudov1beta1.ExecutionStatus, message string) func(*kudov1beta1.Instance) {
		return func(i *kudov1beta1.Instance) {
			plan := status
			if status == kudov1beta1.ExecutionError {
				plan = kudov1beta1.ExecutionInProgress
			}
			i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: plan}
			i.Status.PlanStatus = map[string]kudov1beta1.PlanStatus{"deploy": {Name: "deploy", UID: "u1", Status: plan, Message: message,
				Phases: []kudov1beta1.PhaseStatus{{Name: "main", Status: plan, Steps: []kudov1beta1.StepStatus{
					{Name: "everything", Status: status, Message: message}}}}}}
		}
	}
	c := progressing(client.ObjectKey{Namespace: "default", Name: "zk"},
		// As admission does.
		func(i *kudov1beta1.Instance) {
			i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "deploy", UID: "u1"}
		},
		step(kudov1beta1.ExecutionInProgress, "waiting for Deployment zk: Available: 0/2"),
		step(kudov1beta1.ExecutionInProgress, "waiting for Deployment zk: Available: 0/2"),
		step(kudov1beta1.ExecutionError, `task app: Deployment zk: spec.replicas: Invalid value: "abc" (attempt 1; next try in 1s)`),
		step(kudov1beta1.ExecutionFatalError, "step main/everything timed out after 1m0s"),
	)
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	err := Run(context.Background(), action.NewConfig(c, "default", streams), &Options{Install: action.Install{Package: hello, Instance: "zk"}, WaitOptions: action.WaitOptions{Wait: true, WaitTime: time.Minute}})
	if err == nil || err.Error() != "plan deploy failed: step main/everything timed out after 1m0s" {
		t.Errorf("error = %v, want the plan's failure", err)
	}
	want := "operator.kudo.dev/hello created\noperatorversion.kudo.dev/hello-1.27.0-0.1.0 created\ninstance.kudo.dev/zk created\n" +
		"Plan deploy [IN_PROGRESS]\n" +
		"Step main/everything [IN_PROGRESS] (waiting for Deployment zk: Available: 0/2)\n" +
		`Step main/everything [ERROR] (task app: Deployment zk: spec.replicas: Invalid value: "abc" (attempt 1; next try in 1s))` + "\n" +
		"Step main/everything [FATAL_ERROR] (step main/everything timed out after 1m0s)\n" +
		"Plan deploy [FATAL_ERROR]\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

// TestInstallInCluster: as KUDO's install --in-cluster, an Instance of an
// OperatorVersion the namespace holds, the newest unless versions are
// asked for; no package is read.
func TestInstallInCluster(t *testing.T) {
	ctx := context.Background()
	version := func(name, v string) *kudov1beta1.OperatorVersion {
		ov := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: kudov1beta1.OperatorVersionSpec{Version: v, Parameters: []kudov1beta1.Parameter{{Name: "replicas", Default: ptr.To("1")}}}}
		ov.Spec.Operator.Name = "web"
		return ov
	}
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(version("web-0.9.0", "0.9.0"), version("web-0.10.0", "0.10.0")).Build()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Install: action.Install{Package: "web", InCluster: true, ParameterOptions: action.ParameterOptions{Parameters: []string{"replicas=3"}}}}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "instance.kudo.dev/web-instance created\n" {
		t.Errorf("output %q", out)
	}
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web-instance"}, i); err != nil {
		t.Fatal(err)
	}
	if i.Spec.OperatorVersion.Name != "web-0.10.0" || i.Spec.Parameters["replicas"] != "3" {
		t.Errorf("Instance spec %+v", i.Spec)
	}

	if err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Install: action.Install{Package: "web", Instance: "old", InCluster: true, PackageOptions: action.PackageOptions{OperatorVersion: "0.9.0"}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "old"}, i); err != nil || i.Spec.OperatorVersion.Name != "web-0.9.0" {
		t.Errorf("--operator-version 0.9.0: %v %+v", err, i.Spec)
	}
	err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Install: action.Install{Package: "db", InCluster: true}})
	if err == nil || !strings.HasPrefix(err.Error(), "no OperatorVersion of operator db in namespace default") {
		t.Errorf("an operator not installed: %v", err)
	}
}
