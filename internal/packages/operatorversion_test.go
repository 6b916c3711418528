package packages

import (
	"path/filepath"
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
