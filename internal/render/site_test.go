package render

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// version is the OperatorVersion's spec.version in these tests.
const version = "0.1.0"

// TestSite: templates see the Instance, the step and the Pipe objects'
// names, as KUDO names them, and objects record the same site.
func TestSite(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{
		Operator: corev1.ObjectReference{Name: "web"}, AppVersion: "1.2", Version: version,
		Tasks: []kudov1beta1.Task{
			{Name: "gen", Kind: kudov1beta1.PipeTaskKind, Spec: kudov1beta1.TaskSpec{PipeTaskSpec: kudov1beta1.PipeTaskSpec{
				Pipe: []kudov1beta1.PipeSpec{{Key: "indexHtml"}, {Key: "env"}}}}},
			{Name: "app", Kind: kudov1beta1.ApplyTaskKind},
		},
		Plans: map[string]kudov1beta1.Plan{"deploy": {Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{
			{Name: "files", Tasks: []string{"gen"}}, {Name: "app", Tasks: []string{"app"}},
		}}}}},
	}}
	ov.Name = "web-1.2-0.1.0"
	site := &Site{OperatorVersion: ov, Instance: "Site", Namespace: "ns", Plan: "deploy", Phase: "main", Step: "app", PlanUID: "u1",
		Params: map[string]any{"A": "1"}}
	vars := site.Variables()
	if vars.Pipes["indexHtml"] != "site.deploy.main.files.gen.indexhtml" || vars.Pipes["env"] != "site.deploy.main.files.gen.env" || len(vars.Pipes) != 2 {
		t.Errorf("Pipes = %v", vars.Pipes)
	}
	if vars.Name != "Site" || vars.Namespace != "ns" || vars.OperatorName != "web" || vars.OperatorVersion != version ||
		vars.AppVersion != "1.2" || vars.PlanName != "deploy" || vars.PhaseName != "main" || vars.StepName != "app" || vars.Params["A"] != "1" {
		t.Errorf("Variables = %+v", vars)
	}
	md := site.Metadata()
	if md.InstanceName != "Site" || md.Namespace != "ns" || md.OperatorName != "web" || md.OperatorVersion != version ||
		md.PlanName != "deploy" || md.PhaseName != "main" || md.StepName != "app" || md.PlanUID != "u1" || md.Owner != nil {
		t.Errorf("Metadata = %+v", md)
	}
}

// TestOperatorVersionOnPodTemplatesOnly: as KUDO did, pod templates record
// the OperatorVersion's spec.version (not its name) in
// kudo.dev/operator-version, and no object records it at the top, where
// only the plan annotations go.
func TestOperatorVersionOnPodTemplatesOnly(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{
		Operator: corev1.ObjectReference{Name: "web"}, Version: "0.1.0",
		Templates: map[string]string{"app.yaml": `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup}
spec:
  jobTemplate:
    spec:
      template:
        spec: {containers: [{name: b, image: busybox}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: config}
`},
	}}
	ov.Name = "web-0.1.0"
	site := &Site{OperatorVersion: ov, Instance: "web", Namespace: "ns", Plan: "deploy", Phase: "main", Step: "app"}
	res, err := Task(&Request{
		Templates: ov.Spec.Templates, Resources: []string{"app.yaml"}, Variables: site.Variables(), Metadata: site.Metadata(),
		Served: func(schema.GroupVersionKind) bool { return true }, Scope: BuiltinScope,
	})
	if err != nil {
		t.Fatal(err)
	}
	podTemplates := map[string][]string{
		"Deployment": {"spec", "template", "metadata", "annotations"},
		"CronJob":    {"spec", "jobTemplate", "spec", "template", "metadata", "annotations"},
	}
	for _, obj := range res.Objects {
		if v, found := obj.GetAnnotations()[kudov1beta1.OperatorVersionAnnotation]; found {
			t.Errorf("%s: %s %q at the top, want none", obj.GetKind(), kudov1beta1.OperatorVersionAnnotation, v)
		}
		if path, ok := podTemplates[obj.GetKind()]; ok {
			annotations, _, _ := unstructured.NestedStringMap(obj.Object, path...)
			if got := annotations[kudov1beta1.OperatorVersionAnnotation]; got != "0.1.0" {
				t.Errorf("%s: pod template %s = %q, want 0.1.0", obj.GetKind(), kudov1beta1.OperatorVersionAnnotation, got)
			}
		}
	}
	if jobTemplate, _, _ := unstructured.NestedStringMap(res.Objects[1].Object, "spec", "jobTemplate", "metadata", "annotations"); len(jobTemplate) != 0 {
		t.Errorf("CronJob: job template annotations %v, want none", jobTemplate)
	}
}
