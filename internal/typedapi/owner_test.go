package typedapi

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func crdOf(name, group string, labels map[string]string) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"group": group}}}
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func ownedBy(namespace, name string) map[string]string {
	labels := map[string]string{OperatorLabel: name}
	if namespace != "" {
		labels[OperatorNamespaceLabel] = namespace
	}
	return labels
}

// TestAKindAndItsGroupAreOneOperators is issue 62's ninth attack: an author
// naming his Operator as another namespace's re-typed its kind, and any
// group with a dot, another's too, was his to add kinds to.
func TestAKindAndItsGroupAreOneOperators(t *testing.T) {
	hellos := Names{Group: DefaultGroup, Version: "v1", Kind: "Hello", Plural: "hellos"}
	zk := Names{Group: "zk.example.com", Version: "v1", Kind: "Ensemble", Plural: "ensembles"}
	a := types.NamespacedName{Namespace: "a", Name: "hello"}
	for _, tc := range []struct {
		name  string
		names Names
		crds  []unstructured.Unstructured
		want  string
	}{
		{"a new kind", hellos, []unstructured.Unstructured{crdOf("widgets.packages.kudo.dev", DefaultGroup, ownedBy("b", "widget"))}, ""},
		{"its own kind", hellos, []unstructured.Unstructured{crdOf("hellos.packages.kudo.dev", DefaultGroup, ownedBy("a", "hello"))}, ""},
		{"its own kind, served before owners had namespaces", hellos,
			[]unstructured.Unstructured{crdOf("hellos.packages.kudo.dev", DefaultGroup, ownedBy("", "hello"))}, ""},
		{"the kind of an Operator of its name in another namespace", hellos,
			[]unstructured.Unstructured{crdOf("hellos.packages.kudo.dev", DefaultGroup, ownedBy("b", "hello"))},
			"the kind hellos.packages.kudo.dev is Operator b/hello's, which Operator a/hello claims too"},
		{"another Operator's kind", hellos,
			[]unstructured.Unstructured{crdOf("hellos.packages.kudo.dev", DefaultGroup, ownedBy("", "greeter"))},
			"the kind hellos.packages.kudo.dev is Operator greeter's, which Operator a/hello claims too"},
		{"a kind kudo-ng does not serve", hellos, []unstructured.Unstructured{crdOf("hellos.packages.kudo.dev", DefaultGroup, nil)},
			"the kind hellos.packages.kudo.dev is served by another operator than kudo-ng"},
		{"a group another Operator serves a kind in", zk,
			[]unstructured.Unstructured{crdOf("clusters.zk.example.com", "zk.example.com", ownedBy("b", "zookeeper"))},
			"the group zk.example.com (CustomResourceDefinition clusters.zk.example.com) is Operator b/zookeeper's, which Operator a/hello claims too"},
		{"a group of another operator", zk,
			[]unstructured.Unstructured{crdOf("clusters.zk.example.com", "zk.example.com", map[string]string{"app": "zk-operator"})},
			"the group zk.example.com (CustomResourceDefinition clusters.zk.example.com) is served by another operator than kudo-ng"},
		{"the default group, shared by every Operator's kinds", hellos,
			[]unstructured.Unstructured{crdOf("zookeepers.packages.kudo.dev", DefaultGroup, ownedBy("b", "zookeeper"))}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.names.Group == DefaultGroup {
				// The default group is kudo-ng's, each kind an Operator's.
				tc.crds = append(tc.crds, crdOf("others.packages.kudo.dev", DefaultGroup, ownedBy("c", "other")))
			}
			if got := Conflict(tc.names, a, tc.crds, everyoneAlive); got != tc.want {
				t.Errorf("Conflict = %q, want %q", got, tc.want)
			}
		})
	}
}

func everyoneAlive(types.NamespacedName) bool { return true }

// TestAKindWhoseOperatorIsGoneIsFreeToTake: an owner's namespace deleted
// leaves its CustomResourceDefinition (its objects of other namespaces may
// remain), which the next Operator of the kind serves.
func TestAKindWhoseOperatorIsGoneIsFreeToTake(t *testing.T) {
	hellos := Names{Group: DefaultGroup, Version: "v1", Kind: "Hello", Plural: "hellos"}
	a := types.NamespacedName{Namespace: "a", Name: "hello"}
	crds := []unstructured.Unstructured{crdOf("hellos.packages.kudo.dev", DefaultGroup, ownedBy("b", "hello"))}
	gone := func(types.NamespacedName) bool { return false }
	if got := Conflict(hellos, a, crds, gone); got != "" {
		t.Errorf("Conflict = %q, want the kind free", got)
	}
	legacy := []unstructured.Unstructured{crdOf("hellos.packages.kudo.dev", DefaultGroup, ownedBy("", "greeter"))}
	if got := Conflict(hellos, a, legacy, gone); got == "" {
		t.Error("a kind whose owner has no namespace was taken: who it is cannot be looked up")
	}
}

// TestAKindIsServedOnlyWhereTheWebhookAdmitsIt is issue 62's fifth attack: a
// package's own group was served and not admitted, and its objects named
// Secrets and service accounts their writers may not use.
func TestAKindIsServedOnlyWhereTheWebhookAdmitsIt(t *testing.T) {
	zk := Names{Group: "zk.example.com", Version: "v1", Kind: "Ensemble", Plural: "ensembles"}
	rule := func(groups []string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: groups, APIVersions: []string{"*"}, Resources: []string{"*"}}}
	}
	config := func(name string, rules ...admissionregistrationv1.RuleWithOperations) []admissionregistrationv1.ValidatingWebhookConfiguration {
		return []admissionregistrationv1.ValidatingWebhookConfiguration{{Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: name, Rules: rules}}}}
	}
	both := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	clusterScoped := rule([]string{"zk.example.com"}, both...)
	clusterScoped.Scope = ptr.To(admissionregistrationv1.ClusterScope)
	for _, tc := range []struct {
		name    string
		configs []admissionregistrationv1.ValidatingWebhookConfiguration
		want    bool
	}{
		{"the default rules, packages.kudo.dev only", config(TypedWebhook, rule([]string{DefaultGroup}, both...)), false},
		{"the group added by an admin", config(TypedWebhook, rule([]string{DefaultGroup}, both...), rule([]string{"zk.example.com"}, both...)), true},
		{"every group", config(TypedWebhook, rule([]string{"*"}, admissionregistrationv1.OperationAll)), true},
		{"creates only", config(TypedWebhook, rule([]string{"zk.example.com"}, admissionregistrationv1.Create)), false},
		{"cluster-scoped objects only", config(TypedWebhook, clusterScoped), false},
		{"another webhook", config("other.example.com", rule([]string{"zk.example.com"}, both...)), false},
		{"no webhook", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Admitted(zk, tc.configs); got != tc.want {
				t.Errorf("Admitted = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestOwnerOfIsTheOperatorItsLabelsName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   types.NamespacedName
		kudoNG bool
	}{
		{"an Operator of a namespace", ownedBy("a", "hello"), types.NamespacedName{Namespace: "a", Name: "hello"}, true},
		{"served before owners had namespaces", ownedBy("", "hello"), types.NamespacedName{Name: "hello"}, true},
		{"a namespace alone is no owner", map[string]string{OperatorNamespaceLabel: "a"}, types.NamespacedName{Namespace: "a"}, false},
		{"another operator's", map[string]string{"app.kubernetes.io/managed-by": "helm"}, types.NamespacedName{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crd := crdOf("hellos.packages.kudo.dev", DefaultGroup, tc.labels)
			if got, kudoNG := OwnerOf(&crd); got != tc.want || kudoNG != tc.kudoNG {
				t.Errorf("OwnerOf = %v, %t; want %v, %t", got, kudoNG, tc.want, tc.kudoNG)
			}
		})
	}
}
