package render

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestDNSName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"zk.deploy.main.gen.certs.indexHtml", "zk.deploy.main.gen.certs.indexhtml"},
		{"My_Instance-deploy", "my-instance-deploy"},
		{"-edge.", "edge"},
		{strings.Repeat("a", 70), strings.Repeat("a", 63)},
		{strings.Repeat("a", 62) + "-b", strings.Repeat("a", 62)},
	}
	for _, tt := range tests {
		if got := DNSName(tt.in); got != tt.want {
			t.Errorf("DNSName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSite: templates see the Instance, the step and the Pipe objects'
// names, as KUDO names them, and objects record the same site.
func TestSite(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{
		Operator: corev1.ObjectReference{Name: "web"}, AppVersion: "1.2",
		Tasks: []kudov1beta1.Task{
			{Name: "gen", Kind: kudov1beta1.PipeTaskKind, Spec: kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{
				Pipe: []kudov1beta1.PipeSpec{{Key: "indexHtml"}, {Key: "env"}}}}},
			{Name: "app", Kind: kudov1beta1.ApplyTaskKind},
		},
		Plans: map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{
			{Name: "files", Tasks: []string{"gen"}}, {Name: "app", Tasks: []string{"app"}},
		}}}}},
	}}
	const ovName = "web-1.2-0.1.0"
	ov.Name = ovName
	site := &Site{OperatorVersion: ov, Instance: "Site", Namespace: "ns", Plan: "deploy", Phase: "main", Step: "app", PlanUID: "u1",
		Params: map[string]any{"A": "1"}}
	vars := site.Variables()
	if vars.Pipes["indexHtml"] != "site.deploy.main.files.gen.indexhtml" || vars.Pipes["env"] != "site.deploy.main.files.gen.env" || len(vars.Pipes) != 2 {
		t.Errorf("Pipes = %v", vars.Pipes)
	}
	if vars.Name != "Site" || vars.Namespace != "ns" || vars.OperatorName != "web" || vars.OperatorVersion != ovName ||
		vars.AppVersion != "1.2" || vars.PlanName != "deploy" || vars.PhaseName != "main" || vars.StepName != "app" || vars.Params["A"] != "1" {
		t.Errorf("Variables = %+v", vars)
	}
	md := site.Metadata()
	if md.InstanceName != "Site" || md.Namespace != "ns" || md.OperatorName != "web" || md.OperatorVersion != ovName ||
		md.PlanName != "deploy" || md.PhaseName != "main" || md.StepName != "app" || md.PlanUID != "u1" || md.Owner != nil {
		t.Errorf("Metadata = %+v", md)
	}
}
