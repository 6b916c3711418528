package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrustMode is what a TrustPolicy does with a package it cannot verify.
// +kubebuilder:validation:Enum=Enforce;Audit
type TrustMode string

const (
	// Enforce: an OperatorVersion the policy does not verify is not Ready,
	// its templates are not rendered, and no Instance may use it.
	Enforce TrustMode = "Enforce"
	// Audit: it runs, with its Verified condition False saying why.
	Audit TrustMode = "Audit"
)

// TrustPolicySpec says whose signatures the packages of some registries
// must carry, and what happens to one that carries none of them.
// +kubebuilder:validation:XValidation:rule="!has(self.packages) || size(self.packages) > 0",message="packages: leave it out to cover every package, or list at least one prefix"
type TrustPolicySpec struct {
	// Mode is Enforce (the default) or Audit.
	// +optional
	// +kubebuilder:default=Enforce
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Mode"
	Mode TrustMode `json:"mode,omitempty"`
	// Packages are the packages the policy covers, by the prefix of their
	// reference without oci:// (registry.example.com/team/). Left out, the
	// policy covers every OperatorVersion, those installed from no registry
	// too, which then never verify: a cluster that runs only signed
	// packages.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Packages"
	Packages []PackageMatch `json:"packages,omitempty"`
	// Authorities are who may sign: a package is verified when one of them
	// signed its digest.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Authorities"
	Authorities []Authority `json:"authorities"`
	// Registry is how the manager reaches the registries of these packages.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Registry"
	Registry RegistryAccess `json:"registry,omitempty"`
}

// PackageMatch names packages by a prefix of their reference.
type PackageMatch struct {
	// Prefix of a package's reference without oci://: a registry
	// (registry.example.com/), a repository (registry.example.com/team/zk)
	// or anything between.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('oci://')",message="the prefix of a reference without oci://"
	Prefix string `json:"prefix"`
}

// Authority is one who may sign packages: the holder of a key, or an
// identity certified by a Sigstore trusted root (keyless).
// +kubebuilder:validation:XValidation:rule="has(self.key) != has(self.keyless)",message="an authority is either a key or keyless"
type Authority struct {
	// Name of the authority, which the Verified condition of an
	// OperatorVersion it signed names.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Key is a public key.
	// +optional
	Key *KeyAuthority `json:"key,omitempty"`
	// Keyless is a Sigstore trusted root and the identities it certifies.
	// +optional
	Keyless *KeylessAuthority `json:"keyless,omitempty"`
}

// KeyAuthority is the holder of a key pair.
type KeyAuthority struct {
	// PublicKey in PEM, as cosign generate-key-pair writes cosign.pub.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	PublicKey string `json:"publicKey"`
}

// KeylessAuthority is whom a Sigstore trusted root's certificate
// authority certified, as cosign verify --certificate-identity checks.
type KeylessAuthority struct {
	// TrustedRoot is the Sigstore trusted root, in JSON
	// (trusted_root.json): the certificate authorities, transparency logs
	// and timestamp authorities a signature must be traced to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1048576
	TrustedRoot string `json:"trustedRoot"`
	// Identities are who may sign; one is enough.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Identities []Identity `json:"identities"`
}

// Identity is a signer's certified identity: its OIDC issuer and subject,
// each given exactly or as a regular expression (Go's syntax) that must
// match it whole, as if between ^ and $: unlike cosign's, which match
// anywhere.
// +kubebuilder:validation:XValidation:rule="has(self.issuer) != has(self.issuerRegExp)",message="give issuer or issuerRegExp"
// +kubebuilder:validation:XValidation:rule="has(self.subject) != has(self.subjectRegExp)",message="give subject or subjectRegExp"
type Identity struct {
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Issuer string `json:"issuer,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	IssuerRegExp string `json:"issuerRegExp,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Subject string `json:"subject,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	SubjectRegExp string `json:"subjectRegExp,omitempty"`
}

// RegistryAccess is how the manager reaches registries.
type RegistryAccess struct {
	// CABundle holds the PEM certificates of the authorities a registry's
	// certificate may be signed by, besides the system's.
	// +optional
	// +kubebuilder:validation:MaxLength=1048576
	CABundle string `json:"caBundle,omitempty"`
	// PlainHTTP reaches the registries over HTTP rather than HTTPS.
	// +optional
	PlainHTTP bool `json:"plainHTTP,omitempty"`
	// AllowInternalAddresses lets a policy that names no packages reach
	// registries at loopback, private, link-local and shared (100.64.0.0/10)
	// addresses, where a cluster's pods and services are. Left out, such a
	// policy trusts signatures wherever a package says it comes from, but
	// the manager connects to none of those addresses for it: a package
	// cannot point the manager at the cluster's own services. A policy that
	// names packages reaches the registries of its prefixes, which a
	// cluster admin chose.
	// +optional
	AllowInternalAddresses bool `json:"allowInternalAddresses,omitempty"`
	// Authentication is how the manager logs in to the registries; left
	// out, with the Docker configuration of its --registry-config, or
	// anonymously.
	// +optional
	Authentication *RegistryAuthentication `json:"authentication,omitempty"`
}

// RegistryAuthentication names the credentials of a policy's registries.
type RegistryAuthentication struct {
	// PullSecretRef names a Secret of type kubernetes.io/dockerconfigjson
	// in the manager's namespace, read at each verification.
	PullSecretRef SecretReference `json:"pullSecretRef"`
}

// SecretReference names a Secret of the manager's namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// TrustPolicyStatus says whether the policy can verify anything.
type TrustPolicyStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready, Reconciling and Stalled: Ready when every
	// authority's key or trusted root reads.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TrustPolicy (kudo-ng) is a cluster's rule of whose packages run: the
// manager verifies the signature of every OperatorVersion the policy covers
// before its templates are rendered, as Flux verifies an OCIRepository and
// Crossplane an ImageConfig's packages (docs/oci.md).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=kudo
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Trust Policy"
// +operator-sdk:csv:customresourcedefinitions:resources={{OperatorVersion,v1beta1}}
type TrustPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TrustPolicySpec   `json:"spec,omitempty"`
	Status TrustPolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TrustPolicyList is a list of TrustPolicies.
type TrustPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrustPolicy `json:"items"`
}

// GetConditions returns the TrustPolicy's conditions.
func (p *TrustPolicy) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the TrustPolicy's conditions.
func (p *TrustPolicy) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

func init() {
	SchemeBuilder.Register(&TrustPolicy{}, &TrustPolicyList{})
}
