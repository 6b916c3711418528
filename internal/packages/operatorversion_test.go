package packages

import (
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
)

// TestDeployPlanIsNeededToInstallNotToUpgrade: a package with only an
// upgrade plan fails verify for install, passes it for upgrade, and its
// installed OperatorVersion is valid (KUDO upgrades to such a package).
func TestDeployPlanIsNeededToInstallNotToUpgrade(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "good"))
	if err != nil {
		t.Fatal(err)
	}
	plans := p.Operator.Plans
	plans[kudov1beta1.UpgradePlanName] = plans[kudov1beta1.DeployPlanName]
	delete(plans, kudov1beta1.DeployPlanName)

	if r := Verify(p, VerifyOptions{}); len(r.Errors) != 1 || r.Errors[0].String() != "operator.yaml: plans: there is no deploy plan; every package needs one" {
		t.Errorf("verify to install: errors %v, want only the missing deploy plan", r.Errors)
	}
	if r := Verify(p, VerifyOptions{SkipDeployPlan: true}); len(r.Errors) != 0 {
		t.Errorf("verify to upgrade: errors %v", r.Errors)
	}
	_, ov, err := p.Convert("ns")
	if err != nil {
		t.Fatal(err)
	}
	if r := VerifyOperatorVersion(ov, render.Limits{}); len(r.Errors) != 0 {
		t.Errorf("installed OperatorVersion: errors %v", r.Errors)
	}
}

// An installed OperatorVersion of a Helm task carries its chart: the rules
// that read the chart find it (admission warned "not in charts/" before).
func TestAnInstalledOperatorVersionKeepsItsCharts(t *testing.T) {
	p, err := Read(filepath.Join("..", "..", "test", "e2e", "testdata", "attacker-chart"))
	if err != nil {
		t.Fatal(err)
	}
	_, ov, err := p.Convert("ns")
	if err != nil {
		t.Fatal(err)
	}
	if r := VerifyOperatorVersion(ov, render.Limits{}); len(r.Errors)+len(r.Warnings) != 0 {
		t.Errorf("installed OperatorVersion: errors %v, warnings %v", r.Errors, r.Warnings)
	}
}

// TestAnInstalledOperatorVersionIsInvalidOnlyForWhatCannotRun: KUDO's
// upgrade suites install OperatorVersions with a trigger naming no plan and
// a template that renders only with the value an Instance must give; they
// run, so they are valid, with warnings.
func TestAnInstalledOperatorVersionIsInvalidOnlyForWhatCannotRun(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "good"))
	if err != nil {
		t.Fatal(err)
	}
	p.Params.Parameters[0].Trigger = "scale"
	p.Params.Parameters = append(p.Params.Parameters, Parameter{Name: "LABEL"})
	p.Templates["web.yaml"] = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, fixed: {{ .Params.LABEL }}}}
    spec: {containers: [{name: web, image: web}]}
`
	p.Operator.Tasks[0].Spec.Resources = append(p.Operator.Tasks[0].Spec.Resources, "web.yaml")
	_, ov, err := p.Convert("ns")
	if err != nil {
		t.Fatal(err)
	}
	r := VerifyOperatorVersion(ov, render.Limits{})
	if len(r.Errors) != 0 {
		t.Errorf("errors %v", r.Errors)
	}
	want := []string{
		`OperatorVersion: spec.parameters[0] GREETING: trigger "scale" names no plan of operator.yaml`,
		`OperatorVersion: spec.templates[web.yaml]: Deployment "web": .spec.template.metadata.labels accessor error: contains non-string value ` +
			`in the map under key "fixed": <nil> is of the type <nil>, expected string (rendered without a value for LABEL, which the Instance must set)`,
	}
	if got := issues(r.Warnings); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings\n  %q\nwant\n  %q", got, want)
	}
}

// TestAnOperatorVersionWithARenderBombIsInvalid: a template that would take
// the manager's memory (the OperatorVersion controller renders every
// template of a new OperatorVersion) is an error naming it and the limit,
// found without allocating what it asks for; the templates after it are not
// rendered, so that verifying takes one render's timeout at most.
func TestAnOperatorVersionWithARenderBombIsInvalid(t *testing.T) {
	tests := []struct {
		name      string
		templates map[string]string
		errors    []string
		warnings  []string
	}{
		{"a function making too much", map[string]string{"bomb.yaml": `{{ repeat 100000000 "x" }}`, "later.yaml": "{{ .Name }}"},
			[]string{`OperatorVersion: spec.templates[bomb.yaml] line 1, column 3: executing "bomb.yaml" at <repeat 100000000 "x">: ` +
				`error calling repeat: the result would be 95.4 MiB, more than the 4 MiB a template may render (--render-max-bytes)`},
			[]string{
				`OperatorVersion: spec.templates[cm.yaml]: not rendered: rendering bomb.yaml passed a limit, and verify renders no more after that`,
				`OperatorVersion: spec.templates[later.yaml]: not rendered: rendering bomb.yaml passed a limit, and verify renders no more after that`,
			}},
		{"a loop writing too much", map[string]string{"out.yaml": `{{ range until 10000 }}{{ repeat 1000000 "x" }}{{ end }}`},
			[]string{`OperatorVersion: spec.templates[out.yaml]: rendering stopped at 4 MiB of output, the most a template may render (--render-max-bytes)`},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Read(filepath.Join("testdata", "good"))
			if err != nil {
				t.Fatal(err)
			}
			for name, text := range tt.templates {
				p.Templates[name] = text
				p.Operator.Tasks[0].Spec.Resources = append(p.Operator.Tasks[0].Spec.Resources, name)
			}
			_, ov, err := p.Convert("ns")
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r := VerifyOperatorVersion(ov, render.Limits{})
			runtime.ReadMemStats(&after)
			if got := issues(r.Errors); !reflect.DeepEqual(got, tt.errors) {
				t.Errorf("errors\n  %q\nwant\n  %q", got, tt.errors)
			}
			if got := issues(r.Warnings); !reflect.DeepEqual(got, tt.warnings) {
				t.Errorf("warnings\n  %q\nwant\n  %q", got, tt.warnings)
			}
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 64<<20 {
				t.Errorf("verify allocated %d MiB", allocated>>20)
			}
		})
	}
}

// TestAnOperatorVersionWithAMisspelledHealthRuleIsInvalid: the manager's
// check of an OperatorVersion type-checks its health rules as package
// verify does, and names the field of its spec.
func TestAnOperatorVersionWithAMisspelledHealthRuleIsInvalid(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "bad", "health-check-misspelled-field"))
	if err != nil {
		t.Fatal(err)
	}
	_, ov, err := p.Convert("ns")
	if err != nil {
		t.Fatal(err)
	}
	want := "OperatorVersion: spec.healthChecks[0].current: undefined field 'phasee' (column 7) " +
		"(checked against the schema of example.kudo.dev/v1 Widget in templates/crd.yaml)"
	if r := VerifyOperatorVersion(ov, render.Limits{}); len(r.Errors) != 1 || r.Errors[0].String() != want {
		t.Errorf("errors %v, want only %s", r.Errors, want)
	}
}
