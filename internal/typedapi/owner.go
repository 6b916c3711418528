package typedapi

import (
	"fmt"
	"net/url"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// OperatorNamespaceLabel names, beside OperatorLabel, the namespace of the
// Operator that serves a CustomResourceDefinition: Operators are
// namespaced, and one of the same name in another namespace is another
// author's.
const OperatorNamespaceLabel = "kudo.dev/operator-namespace"

// TypedWebhook is the name of the admission webhook of typed objects
// (internal/webhook), which every group a typed API is served in must reach.
const TypedWebhook = "vtyped.kudo.dev"

// OwnerOf is the Operator that serves crd, and whether kudo-ng serves it at
// all. A CustomResourceDefinition served before owners had namespaces has
// none: the first Operator of its name to serve it again takes it.
func OwnerOf(crd *unstructured.Unstructured) (types.NamespacedName, bool) {
	labels := crd.GetLabels()
	name, ok := labels[OperatorLabel]
	return types.NamespacedName{Namespace: labels[OperatorNamespaceLabel], Name: name}, ok
}

// Conflict says why Operator owner may not serve names, "" when it may: a
// kind, or a group a package names, is one Operator's. crds are the
// cluster's CustomResourceDefinitions: the one of the kind's name must be
// owner's or absent, and so must every other one of a group the package
// names, so that an author cannot add kinds to another's group (whose RBAC
// its users hold) nor take one of another operator's, kudo-ng's or not.
// DefaultGroup is kudo-ng's, shared by the kinds of every Operator. A
// kind or group whose Operator is gone (alive says whether one is there)
// is free to take: its namespace may have been deleted.
func Conflict(names Names, owner types.NamespacedName, crds []unstructured.Unstructured, alive func(types.NamespacedName) bool) string {
	for i := range crds {
		crd := &crds[i]
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		if crd.GetName() != names.CRDName() && (group != names.Group || group == DefaultGroup) {
			continue
		}
		held, kudoNG := OwnerOf(crd)
		what := "the kind " + names.CRDName()
		if crd.GetName() != names.CRDName() {
			what = fmt.Sprintf("the group %s (CustomResourceDefinition %s)", names.Group, crd.GetName())
		}
		switch {
		case !kudoNG:
			return fmt.Sprintf("%s is served by another operator than kudo-ng", what)
		case held.Name == owner.Name && (held.Namespace == "" || held.Namespace == owner.Namespace):
		case held.Namespace == "" || alive(held):
			return fmt.Sprintf("%s is Operator %s's, which Operator %s claims too", what, describeOwner(held), owner)
		}
	}
	return ""
}

func describeOwner(o types.NamespacedName) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.String()
}

// Admitted says whether the typed objects' webhook of one of configs
// admits the creates and updates of every object of names: a kind served
// without it would be written by whoever may, naming Secrets and service
// accounts they may not use, with no one asking.
func Admitted(names Names, configs []admissionregistrationv1.ValidatingWebhookConfiguration) bool {
	for _, config := range configs {
		for _, hook := range config.Webhooks {
			if hook.Name != TypedWebhook {
				continue
			}
			for _, rule := range hook.Rules {
				if covers(rule, names) {
					return true
				}
			}
		}
	}
	return false
}

func covers(rule admissionregistrationv1.RuleWithOperations, names Names) bool {
	anyOf := func(values []string, want string) bool {
		return slices.Contains(values, "*") || slices.Contains(values, want)
	}
	operations := func(op admissionregistrationv1.OperationType) bool {
		return slices.Contains(rule.Operations, admissionregistrationv1.OperationAll) || slices.Contains(rule.Operations, op)
	}
	scope := rule.Scope == nil || *rule.Scope == admissionregistrationv1.AllScopes || *rule.Scope == admissionregistrationv1.NamespacedScope
	return scope && anyOf(rule.APIGroups, names.Group) && anyOf(rule.APIVersions, names.Version) &&
		anyOf(rule.Resources, names.Plural) && operations(admissionregistrationv1.Create) && operations(admissionregistrationv1.Update)
}

// ConvertPath is where the manager serves the conversion webhook of the
// typed APIs that have more than one version.
const ConvertPath = "/convert-packages-kudo-dev"

// ConversionClient is how the API server reaches the manager's conversion
// webhook: as it reaches the typed objects' admission webhook, of one of
// configs, at ConvertPath — the same Service (or URL) and CA, whichever
// way they were set up (kubectl kudo init, make deploy, OLM, cert-manager).
// Nil when no such webhook is set up, or its CA is not injected yet.
func ConversionClient(configs []admissionregistrationv1.ValidatingWebhookConfiguration) *apiextensionsv1.WebhookClientConfig {
	for _, config := range configs {
		for _, hook := range config.Webhooks {
			if hook.Name != TypedWebhook || len(hook.ClientConfig.CABundle) == 0 {
				continue
			}
			client := &apiextensionsv1.WebhookClientConfig{CABundle: hook.ClientConfig.CABundle}
			switch {
			case hook.ClientConfig.Service != nil:
				s := hook.ClientConfig.Service
				client.Service = &apiextensionsv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Port: s.Port, Path: ptr.To(ConvertPath)}
			case hook.ClientConfig.URL != nil:
				u, err := url.Parse(*hook.ClientConfig.URL)
				if err != nil {
					continue
				}
				u.Path = ConvertPath
				client.URL = ptr.To(u.String())
			default:
				continue
			}
			return client
		}
	}
	return nil
}
