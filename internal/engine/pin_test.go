package engine

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// storedOperatorVersion uses a field of each kind the spec has.
func storedOperatorVersion() *kudov1beta1.OperatorVersion {
	return &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "hello-0.1.0", UID: "uid-1"},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator: corev1.ObjectReference{Name: "hello", Kind: "Operator"}, Version: "0.1.0", AppVersion: "1.0",
			Templates: map[string]string{"deployment.yaml": "kind: Deployment\nimage: {{ .Params.IMAGE }}\n", "a.yaml": "kind: ConfigMap\n"},
			Tasks: []kudov1beta1.Task{{Name: "app", Kind: "Apply", Spec: kudov1beta1.TaskSpec{
				ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"deployment.yaml", "a.yaml"}}}}},
			Parameters: []kudov1beta1.Parameter{
				{Name: "IMAGE", Default: ptr.To("hello:1"), Trigger: "deploy"},
				{Name: "EMPTY", Default: ptr.To(""), Required: ptr.To(false)},
			},
			Plans: map[string]kudov1beta1.Plan{"deploy": {Strategy: "serial", Timeout: &metav1.Duration{Duration: time.Minute},
				Phases: []kudov1beta1.Phase{{Name: "main", Strategy: "parallel", Steps: []kudov1beta1.Step{{Name: "app", Tasks: []string{"app"}}}}}}},
			UpgradableFrom: []corev1.ObjectReference{{Name: "hello-0.0.9"}},
			HealthChecks:   []kudov1beta1.HealthCheck{{APIVersion: "example.com/v1", Kind: "Widget", Current: "self.status.ok"}},
			TypedAPI:       &kudov1beta1.TypedAPI{Group: "hello.b.packages.kudo.dev", Kind: "Hello", ShortNames: []string{"hi"}},
		},
	}
}

func TestTheDigestOfAStoredOperatorVersionStaysTheSame(t *testing.T) {
	// Every Instance pins this digest of its OperatorVersion: were it to
	// change with the manager (a new field that is not omitempty), every
	// Instance would refuse its OperatorVersion after an upgrade.
	const want = "sha256:f39a5b8f49733ac8a163b55940cdadc5f257f73e2889e4dd0fde32810aa59b3b"
	if got := OperatorVersionDigest(storedOperatorVersion()); got != want {
		t.Errorf("OperatorVersionDigest = %s, want %s: the digest of an unchanged OperatorVersion changed", got, want)
	}
}

func TestAnOperatorVersionMadeAgainWithOtherContentIsAnother(t *testing.T) {
	tests := []struct {
		name         string
		change       func(*kudov1beta1.OperatorVersion)
		wantReplaced bool
	}{
		{"unchanged", func(*kudov1beta1.OperatorVersion) {}, false},
		{"restored: a new uid, the same content", func(ov *kudov1beta1.OperatorVersion) {
			ov.UID, ov.ResourceVersion, ov.Generation = "uid-2", "7", 1
			ov.Annotations = map[string]string{"velero.io/backup-name": "nightly"}
		}, false},
		{"another template", func(ov *kudov1beta1.OperatorVersion) {
			ov.Spec.Templates["deployment.yaml"] = "kind: Deployment\nimage: evil:1\n"
		}, true},
		{"another default", func(ov *kudov1beta1.OperatorVersion) { ov.Spec.Parameters[0].Default = ptr.To("evil:1") }, true},
		{"an empty default gone", func(ov *kudov1beta1.OperatorVersion) { ov.Spec.Parameters[1].Default = nil }, true},
		{"a health rule that is always true", func(ov *kudov1beta1.OperatorVersion) {
			ov.Spec.HealthChecks[0].Current = "true"
		}, true},
		{"another typed API group", func(ov *kudov1beta1.OperatorVersion) {
			ov.Spec.TypedAPI.Group = "hello.a.packages.kudo.dev"
		}, true},
		{"another version it upgrades from", func(ov *kudov1beta1.OperatorVersion) {
			ov.Spec.UpgradableFrom = append(ov.Spec.UpgradableFrom, corev1.ObjectReference{Name: "hello-0.0.8"})
		}, true},
		{"a parameter that triggers another plan", func(ov *kudov1beta1.OperatorVersion) {
			ov.Spec.Parameters[0].Trigger = "cleanup"
		}, true},
		{"another step", func(ov *kudov1beta1.OperatorVersion) {
			plan := ov.Spec.Plans["deploy"]
			plan.Phases[0].Steps = append(plan.Phases[0].Steps, kudov1beta1.Step{Name: "more", Tasks: []string{"app"}})
			ov.Spec.Plans["deploy"] = plan
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := &kudov1beta1.Instance{Status: kudov1beta1.InstanceStatus{PlanStatus: map[string]kudov1beta1.PlanStatus{}}}
			ran := storedOperatorVersion()
			StartPlan(i, ran, "deploy", types.UID("run-1"), time.Now(), nil)

			now := storedOperatorVersion()
			tt.change(now)
			err := OperatorVersionReplaced(i, now)
			if got := err != nil; got != tt.wantReplaced {
				t.Fatalf("OperatorVersionReplaced = %v, want replaced %v", err, tt.wantReplaced)
			}
			if err != nil && !strings.Contains(err.Error(), "OperatorVersion b/hello-0.1.0 is not the one this Instance ran with") {
				t.Errorf("OperatorVersionReplaced = %v: it must name the OperatorVersion", err)
			}
		})
	}
}

func TestAnUpgradeToAnotherVersionMovesThePin(t *testing.T) {
	i := &kudov1beta1.Instance{Status: kudov1beta1.InstanceStatus{PlanStatus: map[string]kudov1beta1.PlanStatus{}}}
	StartPlan(i, storedOperatorVersion(), "deploy", "run-1", time.Now(), nil)
	next := storedOperatorVersion()
	next.Name = "hello-0.2.0"
	next.Spec.Templates["deployment.yaml"] = "kind: Deployment\nimage: hello:2\n"
	if err := OperatorVersionReplaced(i, next); err != nil {
		t.Fatalf("OperatorVersionReplaced = %v for another version: an upgrade must run", err)
	}
	StartPlan(i, next, "deploy", "run-2", time.Now(), nil)
	if got, want := i.Status.AppliedOperatorVersionDigest, OperatorVersionDigest(next); got != want {
		t.Errorf("the pin after the upgrade = %s, want the new version's %s", got, want)
	}
}

func TestAnInstanceWithoutAPinIsPinnedToWhatItRunsNow(t *testing.T) {
	ov := storedOperatorVersion()
	tests := []struct {
		name    string
		applied string
		want    string
	}{
		{"an Instance of an earlier release", ov.Name, OperatorVersionDigest(ov)},
		{"a new Instance: its first plan pins it", "", ""},
		{"an Instance upgrading: its upgrade plan pins it", "hello-0.0.9", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := &kudov1beta1.Instance{Status: kudov1beta1.InstanceStatus{AppliedOperatorVersion: tt.applied}}
			PinOperatorVersion(i, ov)
			if got := i.Status.AppliedOperatorVersionDigest; got != tt.want {
				t.Errorf("pin = %q, want %q", got, tt.want)
			}
			if err := OperatorVersionReplaced(i, ov); err != nil {
				t.Errorf("OperatorVersionReplaced = %v right after the pin", err)
			}
		})
	}
}

func TestAKUDOInstanceIsPinnedToTheOperatorVersionItIsTakenOverWith(t *testing.T) {
	i := &kudov1beta1.Instance{Status: kudov1beta1.InstanceStatus{PlanStatus: map[string]kudov1beta1.PlanStatus{
		"deploy": kudoPlan("deploy", kudov1beta1.ExecutionComplete, 1),
	}}}
	ov := storedOperatorVersion()
	if !RanByKUDO(i) {
		t.Fatal("RanByKUDO = false for an Instance KUDO ran")
	}
	AdoptFromKUDO(i, ov, nil)
	if got, want := i.Status.AppliedOperatorVersionDigest, OperatorVersionDigest(ov); got != want {
		t.Errorf("the pin after the takeover = %q, want %s", got, want)
	}
	replaced := storedOperatorVersion()
	replaced.Spec.Templates["deployment.yaml"] = "kind: Deployment\nimage: evil:1\n"
	if err := OperatorVersionReplaced(i, replaced); err == nil {
		t.Error("OperatorVersionReplaced = nil for other content under the name a KUDO Instance was taken over with")
	}
}
