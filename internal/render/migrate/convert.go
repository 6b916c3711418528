package migrate

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const preserveUnknownFields = "x-kubernetes-preserve-unknown-fields"

var (
	extensionsV1beta1 = schema.GroupVersion{Group: "extensions", Version: "v1beta1"}
	appsV1beta1       = schema.GroupVersion{Group: "apps", Version: "v1beta1"}
)

// identical is the mapping for kinds whose successor has the same fields.
func identical(map[string]any, schema.GroupVersionKind) ([]string, error) { return nil, nil }

// podDisruptionBudget refuses an empty selector: policy/v1beta1 matched no
// pods with it, policy/v1 matches every pod in the namespace.
func podDisruptionBudget(obj map[string]any, _ schema.GroupVersionKind) ([]string, error) {
	if selector, ok := nested(obj, "spec")["selector"].(map[string]any); ok && len(selector) == 0 {
		return nil, errors.New("spec.selector is empty, which matched no pods in policy/v1beta1 but matches every pod in policy/v1")
	}
	return nil, nil
}

// workload maps Deployment, StatefulSet, DaemonSet and ReplicaSet to apps/v1,
// writing out the old defaults that apps/v1 changed. The old defaults for
// revisionHistoryLimit, progressDeadlineSeconds and the object's own labels are
// harmless to lose: they change how many old ReplicaSets are kept and when a
// stalled rollout is reported, not how pods are run or replaced.
func workload(obj map[string]any, from schema.GroupVersionKind) ([]string, error) {
	if selector, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "selector"); selector == nil {
		labels := nested(obj, "spec", "template", "metadata", "labels")
		if len(labels) == 0 {
			return nil, errors.New("spec.selector is missing and spec.template.metadata.labels is empty")
		}
		if err := unstructured.SetNestedField(obj, labels, "spec", "selector", "matchLabels"); err != nil {
			return nil, err
		}
	}
	// apps/v1 has neither field.
	unstructured.RemoveNestedField(obj, "spec", "rollbackTo")
	unstructured.RemoveNestedField(obj, "spec", "templateGeneration")

	old := from.GroupVersion()
	switch {
	case from.Kind == "DaemonSet" && (old == extensionsV1beta1 || old == appsV1beta1),
		from.Kind == "StatefulSet" && old == appsV1beta1:
		return nil, setDefault(obj, "OnDelete", "spec", "updateStrategy", "type")
	case from.Kind == "Deployment" && old == extensionsV1beta1:
		// extensions/v1beta1 replaced one pod at a time; apps/v1 replaces 25%.
		if t, _, _ := unstructured.NestedString(obj, "spec", "strategy", "type"); t != "" && t != "RollingUpdate" {
			return nil, nil
		}
		if err := setDefault(obj, int64(1), "spec", "strategy", "rollingUpdate", "maxUnavailable"); err != nil {
			return nil, err
		}
		return nil, setDefault(obj, int64(1), "spec", "strategy", "rollingUpdate", "maxSurge")
	}
	return nil, nil
}

// ingress maps an Ingress to networking.k8s.io/v1: the default backend is
// renamed, service backends are nested, and every path needs a pathType.
func ingress(obj map[string]any, _ schema.GroupVersionKind) ([]string, error) {
	spec := nested(obj, "spec")
	if backend, ok := spec["backend"]; ok {
		delete(spec, "backend")
		spec["defaultBackend"] = backend
	}
	if backend, ok := spec["defaultBackend"].(map[string]any); ok {
		if err := ingressBackend(backend); err != nil {
			return nil, fmt.Errorf("spec.defaultBackend: %w", err)
		}
	}
	for i, rule := range maps(spec["rules"]) {
		for j, path := range maps(nested(rule, "http")["paths"]) {
			if path["pathType"] == nil {
				path["pathType"] = "ImplementationSpecific"
			}
			if backend, ok := path["backend"].(map[string]any); ok {
				if err := ingressBackend(backend); err != nil {
					return nil, fmt.Errorf("spec.rules[%d].http.paths[%d].backend: %w", i, j, err)
				}
			}
		}
	}
	return nil, nil
}

// ingressBackend nests serviceName and servicePort; resource backends keep
// their shape.
func ingressBackend(backend map[string]any) error {
	name, hasName := backend["serviceName"]
	port, hasPort := backend["servicePort"]
	if !hasName && !hasPort {
		return nil
	}
	delete(backend, "serviceName")
	delete(backend, "servicePort")
	servicePort, err := ingressPort(port)
	if err != nil {
		return err
	}
	backend["service"] = map[string]any{"name": name, "port": servicePort}
	return nil
}

// ingressPort reads servicePort as an intOrString; a numeric string counts as
// a number because templates often quote the port.
func ingressPort(port any) (map[string]any, error) {
	switch p := port.(type) {
	case int64:
		return map[string]any{"number": p}, nil
	case float64:
		if p == math.Trunc(p) {
			return map[string]any{"number": int64(p)}, nil
		}
	case string:
		if n, err := strconv.ParseInt(p, 10, 32); err == nil {
			return map[string]any{"number": n}, nil
		}
		if p != "" {
			return map[string]any{"name": p}, nil
		}
	}
	return nil, fmt.Errorf("servicePort %v is neither a port number nor a port name", port)
}

// customResourceDefinition maps a CustomResourceDefinition to
// apiextensions.k8s.io/v1, which keeps schema, subresources and printer
// columns per version, requires a schema and a scope, requires schemas to be
// structural, and requires an approval annotation for the groups of
// Kubernetes itself.
func customResourceDefinition(obj map[string]any, _ schema.GroupVersionKind) ([]string, error) {
	spec := nested(obj, "spec")
	if spec == nil {
		return nil, errors.New("spec is missing")
	}
	if spec["versions"] == nil {
		name, _ := spec["version"].(string)
		if name == "" {
			return nil, errors.New("spec.version and spec.versions are both missing")
		}
		spec["versions"] = []any{map[string]any{"name": name, "served": true, "storage": true}}
	}
	// preserveUnknownFields defaulted to true in v1beta1.
	preserveUnknown := spec["preserveUnknownFields"] != false
	shared := map[string]any{
		"schema":                   spec["validation"],
		"subresources":             spec["subresources"],
		"additionalPrinterColumns": spec["additionalPrinterColumns"],
	}
	for _, field := range []string{"version", "validation", "subresources", "additionalPrinterColumns", "preserveUnknownFields"} {
		delete(spec, field)
	}

	var changes []string
	noted := map[string]bool{}
	for _, version := range maps(spec["versions"]) {
		for field, value := range shared {
			if version[field] == nil && value != nil {
				version[field] = runtime.DeepCopyJSONValue(value)
			}
		}
		for _, column := range maps(version["additionalPrinterColumns"]) {
			if path, ok := column["JSONPath"]; ok {
				delete(column, "JSONPath")
				column["jsonPath"] = path
			}
		}
		if nested(version, "schema", "openAPIV3Schema") == nil {
			version["schema"] = map[string]any{"openAPIV3Schema": map[string]any{"type": "object", preserveUnknownFields: true}}
		}
		if preserveUnknown {
			nested(version, "schema", "openAPIV3Schema")[preserveUnknownFields] = true
		}
		// Versions usually share one schema: say each change once.
		for _, change := range structural(nested(version, "schema", "openAPIV3Schema")) {
			if !noted[change] {
				noted[change] = true
				changes = append(changes, change)
			}
		}
	}
	if spec["scope"] == nil {
		spec["scope"] = "Namespaced"
	}
	customResourceConversion(nested(spec, "conversion"))
	if group, _ := spec["group"].(string); protectedGroup(group) {
		if change := approve(obj, group); change != "" {
			changes = append([]string{change}, changes...)
		}
	}
	return changes, nil
}

// APIApprovedAnnotation is required by apiextensions.k8s.io/v1 on the
// CustomResourceDefinitions of the groups of Kubernetes itself.
const APIApprovedAnnotation = "api-approved.kubernetes.io"

// Unapproved is the value the migration gives APIApprovedAnnotation: the API
// server takes a value beginning with "unapproved" as a deliberate bypass.
const Unapproved = "unapproved, migrated from apiextensions.k8s.io/v1beta1 by kudo-ng: https://github.com/kubernetes/enhancements/pull/1111"

// protectedGroup tells whether v1 requires APIApprovedAnnotation for group.
func protectedGroup(group string) bool {
	return group == "k8s.io" || strings.HasSuffix(group, ".k8s.io") ||
		group == "kubernetes.io" || strings.HasSuffix(group, ".kubernetes.io")
}

// approve sets APIApprovedAnnotation when it is absent (the API server takes
// an empty value as absent) and says so.
func approve(obj map[string]any, group string) string {
	metadata, ok := obj["metadata"].(map[string]any)
	if !ok {
		metadata = map[string]any{}
		obj["metadata"] = metadata
	}
	annotations, ok := metadata["annotations"].(map[string]any)
	if !ok {
		annotations = map[string]any{}
		metadata["annotations"] = annotations
	}
	if value, _ := annotations[APIApprovedAnnotation].(string); value != "" {
		return ""
	}
	annotations[APIApprovedAnnotation] = Unapproved
	return fmt.Sprintf("added annotation %s %q, which apiextensions.k8s.io/v1 requires for group %s", APIApprovedAnnotation, Unapproved, group)
}

// customResourceConversion nests the webhook settings under webhook, keeping
// v1beta1's default review version, which v1 requires to be explicit.
func customResourceConversion(conversion map[string]any) {
	clientConfig, hasClientConfig := conversion["webhookClientConfig"]
	reviewVersions, hasReviewVersions := conversion["conversionReviewVersions"]
	delete(conversion, "webhookClientConfig")
	delete(conversion, "conversionReviewVersions")
	if conversion["strategy"] != "Webhook" {
		return
	}
	if !hasReviewVersions {
		reviewVersions = []any{"v1beta1"}
	}
	webhook := map[string]any{"conversionReviewVersions": reviewVersions}
	if hasClientConfig {
		webhook["clientConfig"] = clientConfig
	}
	conversion["webhook"] = webhook
}

// webhookConfiguration maps a webhook configuration to
// admissionregistration.k8s.io/v1, writing out the v1beta1 defaults that v1
// changed or requires.
func webhookConfiguration(obj map[string]any, from schema.GroupVersionKind) ([]string, error) {
	defaults := map[string]any{
		"admissionReviewVersions": []any{"v1beta1"},
		"failurePolicy":           "Ignore",
		"matchPolicy":             "Exact",
		"timeoutSeconds":          int64(30),
	}
	if from.Kind == "MutatingWebhookConfiguration" {
		defaults["reinvocationPolicy"] = "Never"
	}
	for _, webhook := range maps(obj["webhooks"]) {
		switch sideEffects := webhook["sideEffects"]; sideEffects {
		case "None", "NoneOnDryRun":
		case nil:
			return nil, fmt.Errorf("webhook %q has no sideEffects, which v1beta1 took as Unknown and v1 does not allow: "+
				"set sideEffects to None or NoneOnDryRun", webhook["name"])
		default:
			return nil, fmt.Errorf("webhook %q has sideEffects %v, which v1 does not allow: set sideEffects to None or NoneOnDryRun",
				webhook["name"], sideEffects)
		}
		for field, value := range defaults {
			if webhook[field] == nil {
				webhook[field] = runtime.DeepCopyJSONValue(value)
			}
		}
	}
	return nil, nil
}

// nested returns the map at path, or nil when there is none; reading a nil
// map is safe, so callers need not check.
func nested(obj map[string]any, path ...string) map[string]any {
	for _, field := range path {
		obj, _ = obj[field].(map[string]any)
	}
	return obj
}

// maps returns the elements of a list that are objects.
func maps(list any) []map[string]any {
	items, _ := list.([]any)
	objects := make([]map[string]any, 0, len(items))
	for _, item := range items {
		if object, ok := item.(map[string]any); ok {
			objects = append(objects, object)
		}
	}
	return objects
}

// setDefault sets the field at path to value when it is absent or null.
func setDefault(obj map[string]any, value any, path ...string) error {
	if current, _, _ := unstructured.NestedFieldNoCopy(obj, path...); current != nil {
		return nil
	}
	return unstructured.SetNestedField(obj, value, path...)
}
