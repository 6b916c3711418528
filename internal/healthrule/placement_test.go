package healthrule

import (
	"strings"
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// TestTheManagerRefusesTheRulesVerifyRefuses: package verify and the
// Instance's controller decide where a rule may be in one place (Rules), so
// an OperatorVersion made without the CLI cannot run a rule verify refuses.
func TestTheManagerRefusesTheRulesVerifyRefuses(t *testing.T) {
	deployment := kudov1beta1.HealthCheck{APIVersion: "apps/v1", Kind: "Deployment", Current: "true"}
	apply := kudov1beta1.Task{Name: "app", Kind: kudov1beta1.ApplyTaskKind,
		Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{ReadyWhen: []string{"true"}}}}
	dummy := kudov1beta1.Task{Name: "wait", Kind: kudov1beta1.DummyTaskKind,
		Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{ReadyWhen: []string{"true"}}}}
	tests := []struct {
		name         string
		healthChecks []kudov1beta1.HealthCheck
		tasks        []kudov1beta1.Task
		// want is the error's field and message, "" for none.
		want      string
		wantRules int
	}{
		{"a health check and a readyWhen", []kudov1beta1.HealthCheck{deployment}, []kudov1beta1.Task{apply}, "", 2},
		{"a kind judged twice", []kudov1beta1.HealthCheck{deployment, deployment}, nil,
			"healthChecks[1]: judges apps/v1 Deployment, as healthChecks[0] does", 1},
		{"no kind", []kudov1beta1.HealthCheck{{Current: "true"}}, nil,
			"healthChecks[0]: apiVersion and kind are required", 0},
		{"an apiVersion that names no group and version", []kudov1beta1.HealthCheck{{APIVersion: "example.com/v1/extra", Kind: "Widget",
			Current: "true"}}, nil, `healthChecks[0].apiVersion: unexpected GroupVersion string: example.com/v1/extra`, 0},
		{"no current", []kudov1beta1.HealthCheck{{APIVersion: "v1", Kind: "Pod", Failed: "false"}}, nil,
			"healthChecks[0].current: is required", 1},
		{"readyWhen on a task that applies nothing", nil, []kudov1beta1.Task{apply, dummy},
			"tasks[1].spec.readyWhen[0]: readyWhen judges what an Apply task applies; task wait is a Dummy task", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, misplaced := Rules(tt.healthChecks, tt.tasks)
			if len(rules) != tt.wantRules {
				t.Errorf("Rules listed %d rules, want %d", len(rules), tt.wantRules)
			}
			_, err := Compile(&kudov1beta1.OperatorVersionSpec{HealthChecks: tt.healthChecks, Tasks: tt.tasks})
			if tt.want == "" {
				if err != nil || len(misplaced) > 0 {
					t.Errorf("Compile = %v, Rules refused %v: want the rules accepted", err, misplaced)
				}
				return
			}
			if len(misplaced) != 1 || !strings.HasPrefix(misplaced[0].Error(), tt.want) {
				t.Errorf("Rules refused %v, want %q", misplaced, tt.want)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compile = %v, want the error %q that verify reports", err, tt.want)
			}
		})
	}
}
