package packages

import (
	"path/filepath"
	"reflect"
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
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
	if r := VerifyOperatorVersion(ov); len(r.Errors) != 0 {
		t.Errorf("installed OperatorVersion: errors %v", r.Errors)
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
	r := VerifyOperatorVersion(ov)
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
