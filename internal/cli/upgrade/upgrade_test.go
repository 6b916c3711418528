package upgrade

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/get"
	"github.com/kudo-ng/kudo/internal/cli/install"
	"github.com/kudo-ng/kudo/test/corpus"
)

var hello = filepath.Join(corpus.Examples(), "hello", "operator")

// version writes a copy of hello with another operatorVersion and,
// in operator.yaml, each old of replace (old, new, ...) replaced by its new.
func version(t *testing.T, v string, replace ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"operator.yaml", "params.yaml", "templates/deployment.yaml", "templates/service.yaml"} {
		data, err := os.ReadFile(filepath.Join(hello, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "operator.yaml" {
			replace = append([]string{"operatorVersion: 0.1.0", "operatorVersion: " + v}, replace...)
			for k := 0; k+1 < len(replace); k += 2 {
				if !bytes.Contains(data, []byte(replace[k])) {
					t.Fatalf("operator.yaml has no %q", replace[k])
				}
				data = bytes.Replace(data, []byte(replace[k]), []byte(replace[k+1]), 1)
			}
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestUpgrade(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).Build()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := install.Run(ctx, action.NewConfig(c, "default", streams), &install.Options{Install: action.Install{Package: hello, Instance: "web"}}); err != nil {
		t.Fatal(err)
	}

	err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Upgrade: action.Upgrade{Package: hello, Instance: "web"}})
	if err == nil || err.Error() != "operator version 0.1.0 is not newer than the installed 0.1.0: upgrade only goes forward" {
		t.Errorf("upgrade to the same version: %v", err)
	}
	out.Reset()
	if err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Upgrade: action.Upgrade{Package: version(t, "0.3.0"), Instance: "web", ParameterOptions: action.ParameterOptions{Parameters: []string{"replicas=4"}}}}); err != nil {
		t.Fatal(err)
	}
	if want := "operator.kudo.dev/hello unchanged\noperatorversion.kudo.dev/hello-1.27.0-0.3.0 created\n" +
		"instance.kudo.dev/web upgraded to hello-1.27.0-0.3.0\n"; out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, i); err != nil {
		t.Fatal(err)
	}
	if i.Spec.OperatorVersion.Name != "hello-1.27.0-0.3.0" || i.Spec.Parameters["replicas"] != "4" {
		t.Errorf("Instance spec = %+v", i.Spec)
	}

	out.Reset()
	if err := get.Run(ctx, c, "default", out, "operatorversions", ""); err != nil {
		t.Fatal(err)
	}
	want := "List of current installed operatorversions in namespace \"default\":\n.\n" +
		"├── hello-1.27.0-0.1.0 (hello 0.1.0, app 1.27.0)\n└── hello-1.27.0-0.3.0 (hello 0.3.0, app 1.27.0)\n\n"
	if out.String() != want {
		t.Errorf("get operatorversions:\n%q\nwant\n%q", out, want)
	}
	if err := get.Run(ctx, c, "default", out, "pods", ""); err == nil {
		t.Error("get pods must be refused")
	}
}

// TestUpgradeToAPackageWithoutDeployPlan: as KUDO's, upgrade accepts a
// package whose only plan is upgrade or update; deploy is needed to install.
func TestUpgradeToAPackageWithoutDeployPlan(t *testing.T) {
	for _, plan := range []string{"upgrade", "update"} {
		t.Run("only "+plan, func(t *testing.T) {
			t.Setenv("KUDO_HOME", t.TempDir())
			ctx := context.Background()
			c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).
				WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).Build()
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			if err := install.Run(ctx, action.NewConfig(c, "default", streams), &install.Options{Install: action.Install{Package: hello, Instance: "web"}}); err != nil {
				t.Fatal(err)
			}
			next := version(t, "0.3.0", "  deploy:", "  "+plan+":")
			if err := install.Run(ctx, action.NewConfig(c, "default", streams), &install.Options{Install: action.Install{Package: next, Instance: "other"}}); err == nil ||
				!strings.Contains(err.Error(), "there is no deploy plan") {
				t.Errorf("install without a deploy plan: %v", err)
			}
			if err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Upgrade: action.Upgrade{Package: next, Instance: "web"}}); err != nil {
				t.Fatal(err)
			}
			i := &kudov1beta1.Instance{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, i); err != nil {
				t.Fatal(err)
			}
			if i.Spec.OperatorVersion.Name != "hello-1.27.0-0.3.0" {
				t.Errorf("Instance runs %s", i.Spec.OperatorVersion.Name)
			}
		})
	}
}

// TestUpgradeOfAnInstanceWhoseOperatorVersionIsInAnotherNamespace: the
// current OperatorVersion is found where spec.operatorVersion.namespace
// says, and the new one is installed next to it.
func TestUpgradeOfAnInstanceWhoseOperatorVersionIsInAnotherNamespace(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}).Build()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := install.Run(ctx, action.NewConfig(c, "shared", streams), &install.Options{Install: action.Install{Package: hello, SkipInstance: true}}); err != nil {
		t.Fatal(err)
	}
	web := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "hello-1.27.0-0.1.0", Namespace: "shared"}},
	}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Run(ctx, action.NewConfig(c, "apps", streams), &Options{Upgrade: action.Upgrade{Package: version(t, "0.3.0"), Instance: "web"}}); err != nil {
		t.Fatal(err)
	}
	if want := "operator.kudo.dev/hello unchanged\noperatorversion.kudo.dev/hello-1.27.0-0.3.0 created\n" +
		"instance.kudo.dev/web upgraded to hello-1.27.0-0.3.0\n"; out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shared", Name: "hello-1.27.0-0.3.0"}, &kudov1beta1.OperatorVersion{}); err != nil {
		t.Errorf("the new OperatorVersion is not next to the old one: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil {
		t.Fatal(err)
	}
	if want := (corev1.ObjectReference{Name: "hello-1.27.0-0.3.0", Namespace: "shared"}); web.Spec.OperatorVersion != want {
		t.Errorf("Instance references %+v, want %+v", web.Spec.OperatorVersion, want)
	}
}

// web returns a package of testdata: web-0.1.0 has replicas; 0.2.0 and
// 0.3.0 add a required parameter without default used as a label; 0.4.0
// has only an upgrade plan, and a parameter triggering deploy; 0.5.0 a
// KudoOperator task installing ../child.
func web(version string) string { return filepath.Join("testdata", "web-"+version) }

// installWeb installs web at a version as the Instance web, with parameters.
func installWeb(t *testing.T, c client.Client, version string, parameters ...string) {
	t.Helper()
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	if err := install.Run(context.Background(), action.NewConfig(c, "default", streams),
		&install.Options{Install: action.Install{Package: web(version), Instance: "web", ParameterOptions: action.ParameterOptions{Parameters: parameters}}}); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeRendersTheTemplatesWithTheParametersTheInstanceKeeps: as in
// KUDO's upgrade suites, the new version's templates render with the
// Instance's parameters and the ones given, not with the defaults, with
// which a required parameter without default renders nothing.
func TestUpgradeRendersTheTemplatesWithTheParametersTheInstanceKeeps(t *testing.T) {
	tests := []struct {
		name       string
		from, to   string
		installed  []string
		parameters []string
	}{
		{"the value given to upgrade", "0.1.0", "0.2.0", nil, []string{"replicas=1", "unchangeable=fixedvalue"}},
		{"the value the Instance has", "0.2.0", "0.3.0", []string{"unchangeable=fixedvalue"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUDO_HOME", t.TempDir())
			ctx := context.Background()
			c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).
				WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).Build()
			installWeb(t, c, tt.from, tt.installed...)
			streams, _, _, errOut := genericiooptions.NewTestIOStreams()
			if err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Upgrade: action.Upgrade{Package: web(tt.to), Instance: "web", ParameterOptions: action.ParameterOptions{Parameters: tt.parameters}}}); err != nil {
				t.Fatal(err)
			}
			if errOut.Len() != 0 {
				t.Errorf("warnings for a package that breaks no rule: %s", errOut)
			}
			i := &kudov1beta1.Instance{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, i); err != nil {
				t.Fatal(err)
			}
			if i.Spec.OperatorVersion.Name != "web-"+tt.to || i.Spec.Parameters["unchangeable"] != "fixedvalue" {
				t.Errorf("Instance spec = %+v", i.Spec)
			}
		})
	}
}

// TestUpgradeWarnsOfATriggerNamingNoPlan: as in KUDO's
// upgrade-with-dependencies suite, a package whose parameter triggers deploy,
// which it lacks, is upgraded to; the rule it breaks is printed first.
func TestUpgradeWarnsOfATriggerNamingNoPlan(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).Build()
	installWeb(t, c, "0.1.0")
	var output bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &output, ErrOut: &output}
	if err := Run(context.Background(), action.NewConfig(c, "default", streams), &Options{Upgrade: action.Upgrade{Package: web("0.4.0"), Instance: "web"}}); err != nil {
		t.Fatal(err)
	}
	want := `Warning: package web: params.yaml: parameters[1] deploy: trigger "deploy" names no plan of operator.yaml` + "\n" +
		"operator.kudo.dev/web unchanged\noperatorversion.kudo.dev/web-0.4.0 created\ninstance.kudo.dev/web upgraded to web-0.4.0\n"
	if output.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", &output, want)
	}
}

// TestUpgradeInstallsTheDependenciesOfTheNewVersion: as KUDO's upgrade, and
// install, the packages of the new version's KudoOperator tasks are
// installed with it, and its tasks name them as the cluster knows them.
func TestUpgradeInstallsTheDependenciesOfTheNewVersion(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).Build()
	installWeb(t, c, "0.1.0")
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(ctx, action.NewConfig(c, "default", streams), &Options{Upgrade: action.Upgrade{Package: web("0.5.0"), Instance: "web"}}); err != nil {
		t.Fatal(err)
	}
	want := "operator.kudo.dev/child created\noperatorversion.kudo.dev/child-0.1.0 created\n" +
		"operator.kudo.dev/web unchanged\noperatorversion.kudo.dev/web-0.5.0 created\ninstance.kudo.dev/web upgraded to web-0.5.0\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	ov := &kudov1beta1.OperatorVersion{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web-0.5.0"}, ov); err != nil {
		t.Fatal(err)
	}
	if spec := ov.Spec.Tasks[1].Spec.KudoOperatorTaskSpec; spec.Package != "child" || spec.OperatorVersion != "0.1.0" {
		t.Errorf("the KudoOperator task installs %s %s, want child 0.1.0", spec.Package, spec.OperatorVersion)
	}
}

// TestUpgradeAFleetBySelector: -l upgrades each Instance of the package
// whose labels match, one after the other, and no other.
func TestUpgradeAFleetBySelector(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).Build()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cfg := action.NewConfig(c, "default", streams)
	for _, name := range []string{"blue", "green", "other"} {
		if err := install.Run(ctx, cfg, &install.Options{Install: action.Install{Package: hello, Instance: name}}); err != nil {
			t.Fatal(err)
		}
		if name != "other" {
			i := &kudov1beta1.Instance{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, i); err != nil {
				t.Fatal(err)
			}
			i.Labels["fleet"] = "web"
			if err := c.Update(ctx, i); err != nil {
				t.Fatal(err)
			}
		}
	}
	out.Reset()
	next := version(t, "0.2.0")
	if err := Run(ctx, cfg, &Options{Upgrade: action.Upgrade{Package: next}, Selector: "fleet=web", BySelector: true}); err != nil {
		t.Fatal(err)
	}
	if want := "operator.kudo.dev/hello unchanged\noperatorversion.kudo.dev/hello-1.27.0-0.2.0 created\n" +
		"instance.kudo.dev/blue upgraded to hello-1.27.0-0.2.0\noperator.kudo.dev/hello unchanged\n" +
		"operatorversion.kudo.dev/hello-1.27.0-0.2.0 unchanged\ninstance.kudo.dev/green upgraded to hello-1.27.0-0.2.0\n"; out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "other"}, i); err != nil || i.Spec.OperatorVersion.Name != "hello-1.27.0-0.1.0" {
		t.Errorf("other runs %s (%v), want it left at 0.1.0", i.Spec.OperatorVersion.Name, err)
	}
	err := Run(ctx, cfg, &Options{Upgrade: action.Upgrade{Package: next}, Selector: "fleet=none", BySelector: true})
	if err == nil || err.Error() != `no Instance or typed object of the package in namespace default matches "fleet=none"` {
		t.Errorf("an empty fleet: %v", err)
	}
	out.Reset()
	if err := Run(ctx, cfg, &Options{Upgrade: action.Upgrade{Package: version(t, "0.3.0")}, BySelector: true}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"blue", "green", "other"} {
		if want := "instance.kudo.dev/" + name + " upgraded to hello-1.27.0-0.3.0\n"; !strings.Contains(out.String(), want) {
			t.Errorf("-l '' upgrades every Instance of the package: no %q in\n%s", want, out)
		}
	}
}
