package migrate

import "k8s.io/apimachinery/pkg/runtime/schema"

// removal is a set of built-in kinds that Kubernetes stopped serving at one
// group/version.
type removal struct {
	from      string // apiVersion no longer served
	kinds     []string
	removedIn int    // first Kubernetes 1.x minor release that does not serve it
	to        string // apiVersion to use instead; empty when there is none
	// convert rewrites the object for to and says what else it changed that a
	// user may notice; nil when no safe mapping is known.
	convert func(obj map[string]any, from schema.GroupVersionKind) (changes []string, err error)
	why     string // why there is no mapping, or what to do without a successor
}

// Kinds are listed one by one rather than per group/version: several of these
// group/versions were reused for newer beta kinds (admissionregistration
// v1beta1 ValidatingAdmissionPolicy, networking v1beta1 ServiceCIDR, ...).
var removals = []removal{
	{from: "extensions/v1beta1", kinds: []string{"Deployment", "DaemonSet", "ReplicaSet"}, removedIn: 16, to: "apps/v1", convert: workload},
	{from: "extensions/v1beta1", kinds: []string{"NetworkPolicy"}, removedIn: 16, to: "networking.k8s.io/v1"},
	{from: "extensions/v1beta1", kinds: []string{"PodSecurityPolicy"}, removedIn: 16, why: noPSP},
	{from: "apps/v1beta1", kinds: []string{"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}, removedIn: 16, to: "apps/v1",
		convert: workload},
	{from: "apps/v1beta1", kinds: []string{"ControllerRevision"}, removedIn: 16, to: "apps/v1"},
	{from: "apps/v1beta2", kinds: []string{"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}, removedIn: 16, to: "apps/v1",
		convert: workload},
	{from: "apps/v1beta2", kinds: []string{"ControllerRevision"}, removedIn: 16, to: "apps/v1"},

	{from: "extensions/v1beta1", kinds: []string{"Ingress"}, removedIn: 22, to: "networking.k8s.io/v1", convert: ingress},
	{from: "networking.k8s.io/v1beta1", kinds: []string{"Ingress"}, removedIn: 22, to: "networking.k8s.io/v1", convert: ingress},
	{from: "networking.k8s.io/v1beta1", kinds: []string{"IngressClass"}, removedIn: 22, to: "networking.k8s.io/v1", convert: identical},
	{from: "rbac.authorization.k8s.io/v1beta1", kinds: []string{"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}, removedIn: 22,
		to: "rbac.authorization.k8s.io/v1", convert: identical},
	{from: "apiextensions.k8s.io/v1beta1", kinds: []string{"CustomResourceDefinition"}, removedIn: 22, to: "apiextensions.k8s.io/v1",
		convert: customResourceDefinition},
	{from: "admissionregistration.k8s.io/v1beta1", kinds: []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"},
		removedIn: 22, to: "admissionregistration.k8s.io/v1", convert: webhookConfiguration},
	{from: "scheduling.k8s.io/v1beta1", kinds: []string{"PriorityClass"}, removedIn: 22, to: "scheduling.k8s.io/v1", convert: identical},
	{from: "coordination.k8s.io/v1beta1", kinds: []string{"Lease"}, removedIn: 22, to: "coordination.k8s.io/v1", convert: identical},
	{from: "certificates.k8s.io/v1beta1", kinds: []string{"CertificateSigningRequest"}, removedIn: 22, to: "certificates.k8s.io/v1",
		why: "certificates.k8s.io/v1 requires spec.signerName"},
	{from: "storage.k8s.io/v1beta1", kinds: []string{"StorageClass", "VolumeAttachment", "CSIDriver", "CSINode"}, removedIn: 22,
		to: "storage.k8s.io/v1", convert: identical},
	{from: "authentication.k8s.io/v1beta1", kinds: []string{"TokenReview"}, removedIn: 22, to: "authentication.k8s.io/v1", why: review},
	{from: "authorization.k8s.io/v1beta1",
		kinds:     []string{"SubjectAccessReview", "SelfSubjectAccessReview", "LocalSubjectAccessReview", "SelfSubjectRulesReview"},
		removedIn: 22, to: "authorization.k8s.io/v1", why: review},

	{from: "policy/v1beta1", kinds: []string{"PodDisruptionBudget"}, removedIn: 25, to: "policy/v1", convert: podDisruptionBudget},
	{from: "policy/v1beta1", kinds: []string{"PodSecurityPolicy"}, removedIn: 25, why: noPSP},
	{from: "batch/v1beta1", kinds: []string{"CronJob"}, removedIn: 25, to: "batch/v1", convert: identical},
	{from: "discovery.k8s.io/v1beta1", kinds: []string{"EndpointSlice"}, removedIn: 25, to: "discovery.k8s.io/v1",
		why: "endpoint topology became deprecatedTopology"},
	{from: "events.k8s.io/v1beta1", kinds: []string{"Event"}, removedIn: 25, to: "events.k8s.io/v1"},
	{from: "node.k8s.io/v1beta1", kinds: []string{"RuntimeClass"}, removedIn: 25, to: "node.k8s.io/v1"},
	{from: "autoscaling/v2beta1", kinds: []string{"HorizontalPodAutoscaler"}, removedIn: 25, to: "autoscaling/v2", why: hpaMetrics},

	{from: "autoscaling/v2beta2", kinds: []string{"HorizontalPodAutoscaler"}, removedIn: 26, to: "autoscaling/v2", why: hpaMetrics},
	{from: "flowcontrol.apiserver.k8s.io/v1beta1", kinds: flowControl, removedIn: 26, to: "flowcontrol.apiserver.k8s.io/v1", why: shares},
	{from: "storage.k8s.io/v1beta1", kinds: []string{"CSIStorageCapacity"}, removedIn: 27, to: "storage.k8s.io/v1"},
	{from: "flowcontrol.apiserver.k8s.io/v1beta2", kinds: flowControl, removedIn: 29, to: "flowcontrol.apiserver.k8s.io/v1", why: shares},
	{from: "flowcontrol.apiserver.k8s.io/v1beta3", kinds: flowControl, removedIn: 32, to: "flowcontrol.apiserver.k8s.io/v1", why: shares},
}

const (
	noPSP      = "PodSecurityPolicy was removed in Kubernetes 1.25: use Pod Security Admission namespace labels instead"
	review     = "a review is a request to the API server, not an object a package creates"
	hpaMetrics = "the metrics fields changed shape"
	shares     = "the priority level concurrency shares changed name or meaning"
)

var flowControl = []string{"FlowSchema", "PriorityLevelConfiguration"}

// removed indexes removals by kind; builtin holds their group/versions, so
// that an unserved custom resource can be told apart from a removed kind.
var removed, builtin = index(removals)

func index(rs []removal) (map[schema.GroupVersionKind]*removal, map[schema.GroupVersion]bool) {
	byKind := map[schema.GroupVersionKind]*removal{}
	groupVersions := map[schema.GroupVersion]bool{}
	for i := range rs {
		for _, kind := range rs[i].kinds {
			gvk := schema.FromAPIVersionAndKind(rs[i].from, kind)
			byKind[gvk] = &rs[i]
			groupVersions[gvk.GroupVersion()] = true
		}
	}
	return byKind, groupVersions
}
