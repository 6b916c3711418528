package validation

import (
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestOperatorVersion(t *testing.T) {
	apply := func(name string, resources ...string) kudov1beta1.Task {
		return kudov1beta1.Task{Name: name, Kind: kudov1beta1.ApplyTaskKind,
			Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: resources}}}
	}
	plan := func(tasks ...string) kudov1beta1.Plan {
		return kudov1beta1.Plan{Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{{Name: "everything", Tasks: tasks}}}}}
	}
	tests := []struct {
		name string
		spec kudov1beta1.OperatorVersionSpec
		want []string
	}{
		{
			name: "empty deploy plan and no templates, as KUDO accepts",
			spec: kudov1beta1.OperatorVersionSpec{Plans: map[string]kudov1beta1.Plan{"deploy": {}}},
		},
		{
			name: "first-operator",
			spec: kudov1beta1.OperatorVersionSpec{
				Templates: map[string]string{"deployment.yaml": "kind: Deployment"},
				Tasks:     []kudov1beta1.Task{apply("app", "deployment.yaml")},
				Plans:     map[string]kudov1beta1.Plan{"deploy": plan("app")},
			},
		},
		{
			name: "undefined task, missing template, duplicate task, dangling trigger",
			spec: kudov1beta1.OperatorVersionSpec{
				Templates:  map[string]string{"a.yaml": ""},
				Tasks:      []kudov1beta1.Task{apply("app", "a.yaml", "b.yaml"), apply("app")},
				Parameters: []kudov1beta1.Parameter{{Name: "replicas", Trigger: "scale"}},
				Plans:      map[string]kudov1beta1.Plan{"deploy": plan("app", "ghost")},
			},
			want: []string{
				`spec.tasks[0].spec.resources[1]: Not found: "b.yaml"`,
				`spec.tasks[1].name: Duplicate value: "app"`,
				`spec.plans[deploy].phases[0].steps[0].tasks[1]: Not found: "ghost"`,
				`spec.parameters[0].trigger: Not found: "scale"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := OperatorVersion(&tt.spec)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors %v, want %d %v", len(errs), errs, len(tt.want), tt.want)
			}
			for i, err := range errs {
				if err.Error() != tt.want[i] {
					t.Errorf("error %d = %q, want %q", i, err.Error(), tt.want[i])
				}
			}
		})
	}
}
