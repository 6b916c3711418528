package webhook

import (
	"bytes"
	"context"
	"os"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/admission"
	apiservercel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

const matchConditionsPatch = "../../config/webhook/patches/instance_match_conditions.yaml"

// instanceWebhooks are the Instance webhooks as config/webhook's patch
// gives their match conditions, each as the API server compiles it.
func instanceWebhooks(t *testing.T) map[string]webhook.WebhookAccessor {
	t.Helper()
	data, err := os.ReadFile(matchConditionsPatch)
	if err != nil {
		t.Fatal(err)
	}
	accessors := map[string]webhook.WebhookAccessor{}
	docs := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := docs.Decode(mutating); err != nil {
		t.Fatal(err)
	}
	if err := docs.Decode(validating); err != nil {
		t.Fatal(err)
	}
	for _, h := range mutating.Webhooks {
		accessors[h.Name] = webhook.NewMutatingWebhookAccessor(h.Name, mutating.Name, &h)
	}
	for _, h := range validating.Webhooks {
		accessors[h.Name] = webhook.NewValidatingWebhookAccessor(h.Name, validating.Name, &h)
	}
	if len(accessors) != 2 {
		t.Fatalf("%s: want the webhooks minstance.kudo.dev and vinstance.kudo.dev, got %d", matchConditionsPatch, len(accessors))
	}
	return accessors
}

// TestInstanceWebhookMatchConditions: the API server sends the Instance
// webhooks every create and every update that changes the spec, but for
// the emptying of spec.planExecution that ends a plan run; metadata-only
// updates pass without them, as KUDO let them.
func TestInstanceWebhookMatchConditions(t *testing.T) {
	running := instance(func(i *kudov1beta1.Instance) {
		i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "deploy", UID: "run-1"}
	})
	ended := func(i *kudov1beta1.Instance) { i.Spec.PlanExecution = kudov1beta1.PlanExecution{} }
	deleted := func(i *kudov1beta1.Instance) { i.DeletionTimestamp = &metav1.Time{} }
	tests := []struct {
		name      string
		old       *kudov1beta1.Instance // nil: a create
		change    func(*kudov1beta1.Instance)
		called    bool
		skippedBy string
	}{
		{name: "create", change: func(*kudov1beta1.Instance) {}, called: true},
		{name: "a label added", old: running, change: func(i *kudov1beta1.Instance) { i.Labels = map[string]string{"team": "a"} },
			skippedBy: "changes-the-spec"},
		{name: "the finalizer of a deleted Instance removed", old: edit(running, deleted),
			change: func(i *kudov1beta1.Instance) { i.Finalizers = nil }, skippedBy: "changes-the-spec"},
		{name: "the service account of a deleted Instance changed", old: edit(running, deleted),
			change: func(i *kudov1beta1.Instance) { i.Spec.ServiceAccountName = "someone" }, called: true},
		{name: "a parameter changed", old: running,
			change: func(i *kudov1beta1.Instance) { i.Spec.Parameters["SIZE"] = "large" }, called: true},
		{name: "the plan run ended", old: running, change: ended, skippedBy: "does-more-than-end-a-plan-run"},
		{name: "the plan run of a deleted Instance ended", old: edit(running, deleted), change: ended,
			skippedBy: "does-more-than-end-a-plan-run"},
		{name: "the plan run ended with a label added", old: running, change: func(i *kudov1beta1.Instance) {
			ended(i)
			i.Labels = map[string]string{"team": "a"}
		}, skippedBy: "does-more-than-end-a-plan-run"},
		{name: "the plan run ended with a parameter changed", old: running, change: func(i *kudov1beta1.Instance) {
			ended(i)
			i.Spec.Parameters["SIZE"] = "large"
		}, called: true},
		{name: "the plan run ended with a service account set", old: running, change: func(i *kudov1beta1.Instance) {
			ended(i)
			i.Spec.ServiceAccountName = "someone"
		}, called: true},
		{name: "the plan run ended with the parameters removed", old: running, change: func(i *kudov1beta1.Instance) {
			ended(i)
			i.Spec.Parameters = nil
		}, called: true},
		{name: "the plan run ended with another OperatorVersion", old: running, change: func(i *kudov1beta1.Instance) {
			ended(i)
			upgraded(i)
		}, called: true},
		{name: "a plan asked for", old: instance(), change: func(i *kudov1beta1.Instance) {
			i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "backup", UID: "run-2"}
		}, called: true},
		{name: "a new plan run in place of the running one", old: running, change: func(i *kudov1beta1.Instance) {
			i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "update", UID: "run-2"}
		}, called: true},
		{name: "the running plan cancelled", old: running, change: func(i *kudov1beta1.Instance) {
			i.Spec.PlanExecution.Status = kudov1beta1.ExecutionCancelled
		}, called: true},
	}
	compiler := apiservercel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true))
	for name, accessor := range instanceWebhooks(t) {
		matcher := accessor.GetCompiledMatcher(compiler)
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				base := tt.old
				if base == nil {
					base = instance()
				}
				got := matcher.Match(context.Background(), attributes(t, tt.old, edit(base, tt.change)), nil, nil)
				if got.Error != nil {
					t.Fatalf("the match conditions failed: %v", got.Error)
				}
				if got.Matches != tt.called || got.FailedConditionName != tt.skippedBy {
					t.Errorf("called %t (skipped by %q), want called %t (skipped by %q)",
						got.Matches, got.FailedConditionName, tt.called, tt.skippedBy)
				}
			})
		}
	}
}

// edit is a changed copy of i.
func edit(i *kudov1beta1.Instance, change func(*kudov1beta1.Instance)) *kudov1beta1.Instance {
	i = i.DeepCopy()
	change(i)
	return i
}

// attributes is the admission request of old becoming i, or of creating i
// when old is nil, with both as the API server hands them to CEL.
func attributes(t *testing.T, old, i *kudov1beta1.Instance) *admission.VersionedAttributes {
	t.Helper()
	unstructuredOf := func(o *kudov1beta1.Instance) runtime.Object {
		if o == nil {
			return nil
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: content}
	}
	operation := admission.Update
	if old == nil {
		operation = admission.Create
	}
	gvk := kudov1beta1.GroupVersion.WithKind("Instance")
	record := admission.NewAttributesRecord(unstructuredOf(i), unstructuredOf(old), gvk, i.Namespace, i.Name,
		kudov1beta1.GroupVersion.WithResource("instances"), "", operation, nil, false, &user.DefaultInfo{Name: "alice"})
	return &admission.VersionedAttributes{Attributes: record, VersionedKind: gvk,
		VersionedObject: unstructuredOf(i), VersionedOldObject: unstructuredOf(old)}
}
