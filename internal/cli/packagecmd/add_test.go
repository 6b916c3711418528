package packagecmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
)

// kudoPackage runs kubectl kudo package with args, answering its questions
// with answers, a line each.
func kudoPackage(t *testing.T, answers string, args ...string) (string, error) {
	t.Helper()
	streams, in, out, _ := genericiooptions.NewTestIOStreams()
	in.WriteString(answers)
	cmd := NewCmd(streams)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

// verifyClean verifies the package as package verify does: no error.
func verifyClean(t *testing.T, dir string) *packages.Package {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := RunVerify(context.Background(), streams, &VerifyOptions{Path: dir}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p, err := packages.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNewInteractiveAsksKUDOsQuestions: package new -i asks what KUDO's
// asked, checks the answers, and writes a package that verifies.
func TestNewInteractiveAsksKUDOsQuestions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shop")
	answers := strings.Join([]string{"db", "shop", dir, "one", "1.2.0", "", "", "1.31.0", "https://shop.example", "Ada", "ada", "ada@example.com"}, "\n") + "\n"
	out, err := kudoPackage(t, answers, "new", "-i")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, asked := range []string{"Operator Name [myoperator]: ", "✗ operator name must have more than 3 characters",
		"Operator directory [operator]: ", "✗ \"one\" is not semver", "Application Version [1.0.0]: ",
		"Required KUDO Version: ", "✗ maintainer email must be valid email address", "package shop created in " + dir} {
		if !strings.Contains(out, asked) {
			t.Errorf("no %q in\n%s", asked, out)
		}
	}
	o := verifyClean(t, dir).Operator
	if o.Name != "shop" || o.OperatorVersion != "1.2.0" || o.AppVersion != "1.0.0" || o.KubernetesVersion != "1.31.0" ||
		o.URL != "https://shop.example" || o.Maintainers[0].Email != "ada@example.com" {
		t.Errorf("operator.yaml: %+v", o)
	}
	if _, err := kudoPackage(t, "", "new", "shop", "-d", dir); err == nil {
		t.Error("a second new over the first must be refused")
	}
	if _, err := kudoPackage(t, "", "new", "shop", "-d", dir, "--overwrite"); err != nil {
		t.Errorf("--overwrite: %v", err)
	}
}

// TestAddFromFlags: every generator takes its answers as flags, for
// scripts, and the package verifies after each.
// TestNewWritesOperatorHereAndAddFindsIt: as KUDO's docs show, package new
// NAME writes ./operator/, package add run in the same directory adds to
// it, and package new inside a package is refused.
func TestNewWritesOperatorHereAndAddFindsIt(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := kudoPackage(t, "", "new", "first-operator"); err != nil {
		t.Fatal(err)
	}
	if out, err := kudoPackage(t, "", "add", "maintainer", "Grace Hopper", "grace@example.com"); err != nil {
		t.Fatalf("package add: %v\n%s", err, out)
	}
	if p := verifyClean(t, "operator"); p.Operator.Name != "first-operator" || len(p.Operator.Maintainers) != 2 {
		t.Errorf("operator.yaml: %+v", p.Operator)
	}
	t.Chdir("operator")
	_, err := kudoPackage(t, "", "new", "second-operator", "--overwrite")
	if want := "operator.yaml exists in the current directory: creating an operator in an operator is not supported"; err == nil || err.Error() != want {
		t.Errorf("package new in a package: %v, want %q", err, want)
	}
}

func TestAddFromFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "web")
	if _, err := kudoPackage(t, "", "new", "web", "-d", dir); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"maintainer", "Grace Hopper", "grace@example.com"},
		{"task", "--name", "settings", "--kind", "Apply", "--resource", "settings"},
		{"plan", "--name", "tune", "--step", "main/settings=settings"},
		{"parameter", "--name", "LEVEL", "--default", "info", "--description", "The log level.", "--trigger", "tune"},
		{"task", "--name", "dump", "--kind", "Pipe", "--pod", "dump-pod", "--pipe", "/tmp/dump:ConfigMap:dump"},
	} {
		if out, err := kudoPackage(t, "", append([]string{"add", "-d", dir}, args...)...); err != nil {
			t.Fatalf("package add %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		verifyClean(t, dir)
	}
	p := verifyClean(t, dir)
	if len(p.Operator.Maintainers) != 2 || p.Operator.Plans["tune"].Phases[0].Steps[0].Tasks[0] != "settings" {
		t.Errorf("operator.yaml: %+v", p.Operator)
	}
	level := p.Params.Parameters[len(p.Params.Parameters)-1]
	if level.Name != "LEVEL" || level.Default != "info" || level.Trigger != "tune" {
		t.Errorf("parameter: %+v", level)
	}
	if _, ok := p.Templates["settings.yaml"]; !ok {
		t.Errorf("no templates/settings.yaml: %v", p.Templates)
	}

	for args, want := range map[string]string{
		"parameter --name LEVEL":                          "parameter name must be unique",
		"parameter --name MODE --trigger nightly":         `trigger "nightly" names no plan of operator.yaml: add it with kubectl kudo package add plan`,
		"task --name app":                                 "task name must be unique",
		"plan --name nightly --step main/dump=backup":     "task backup of step main/dump is not defined: add it with kubectl kudo package add task",
		"plan --name tune --step main/settings=settings":  "plan name must be unique",
		"task --name x --kind Pipe --pipe /tmp/x:Map:key": `--pipe "/tmp/x:Map:key": want FILE:KIND:KEY, KIND ConfigMap or Secret`,
		"maintainer Ada":                                  "expecting two arguments - name and email address",
	} {
		if _, err := kudoPackage(t, "", append([]string{"add", "-d", dir}, strings.Fields(args)...)...); err == nil || err.Error() != want {
			t.Errorf("package add %s: %v, want %q", args, err, want)
		}
	}
}

// TestAddInteractive: without the flags, package add asks KUDO's questions,
// in the package found where it runs; a plan's new task is made then.
func TestAddInteractive(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "operator")
	if _, err := kudoPackage(t, "", "new", "web", "-d", dir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	answers := strings.Join([]string{
		// Plan Name, its strategy, phase 1 and its strategy, step 1.
		"backup", "1", "main", "2", "dump",
		// A new task for the step, made now: Apply of one template.
		"snapshot", "y", "1", "snapshot-job", "n",
		// No other task, step or phase.
		"n", "n", "n",
	}, "\n") + "\n"
	out, err := kudoPackage(t, answers, "add", "plan")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, asked := range []string{"Plan Name: ", "Plan strategy for phase:\n  1) serial\n  2) parallel\n", "Phase 1 name: ",
		`Task Name 1 for Step "dump":`, "Create Task Now [y/N]: ", "Task Kind:", "Task Resource: ", "Add another Resource [y/N]: "} {
		if !strings.Contains(out, asked) {
			t.Errorf("no %q in\n%s", asked, out)
		}
	}
	answers = strings.Join([]string{"MODE", "fast", "Mode", "How it runs.", "2", "y", "2"}, "\n") + "\n"
	if out, err := kudoPackage(t, answers, "add", "parameter"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p := verifyClean(t, dir)
	backup := p.Operator.Plans["backup"]
	if backup.Phases[0].Strategy != kudov1beta1.Parallel || !slices.Equal(backup.Phases[0].Steps[0].Tasks, []string{"snapshot"}) {
		t.Errorf("plan backup: %+v", backup)
	}
	mode := p.Params.Parameters[len(p.Params.Parameters)-1]
	if mode.Name != "MODE" || !mode.IsRequired() || mode.Trigger != "deploy" || mode.DisplayName != "Mode" {
		t.Errorf("parameter: %+v", mode)
	}
	if _, err := os.Stat(filepath.Join(dir, "templates", "snapshot-job.yaml")); err != nil {
		t.Error(err)
	}
}
