package render

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kudo-ng/kudo/internal/crd"
)

// clusterScoped are Kubernetes' built-in cluster-scoped kinds (and those of
// cert-manager and the Prometheus operator that packages commonly create).
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:        true,
	{Kind: "Node"}:             true,
	{Kind: "PersistentVolume"}: true,
	{Kind: "ComponentStatus"}:  true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
	crd.GroupKind: true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "policy", Kind: "PodSecurityPolicy"}:                                      true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "cert-manager.io", Kind: "ClusterIssuer"}:                                 true,
}

// BuiltinScope is the Scope of a cluster known only by its built-in kinds:
// the offline preview and package verify use it. Custom kinds count as
// namespaced, as most are.
func BuiltinScope(gvk schema.GroupVersionKind) (bool, error) {
	return !clusterScoped[gvk.GroupKind()], nil
}

// MapperScope is the Scope of the cluster mapper maps. A kind the server
// does not know yet, such as the custom resource of a CRD applied in the
// same step, counts as namespaced, as most are.
func MapperScope(mapper meta.RESTMapper) Scope {
	return func(gvk schema.GroupVersionKind) (bool, error) {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
	}
}
