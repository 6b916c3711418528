package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorSpec describes an operator package: who made it and what it needs.
type OperatorSpec struct {
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Description"
	Description string `json:"description,omitempty"`
	// KudoVersion is the minimal KUDO version the package was written for.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="KUDO Version"
	KudoVersion string `json:"kudoVersion,omitempty"`
	// KubernetesVersion is the minimal Kubernetes version the package needs.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Kubernetes Version"
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Maintainers"
	Maintainers []*Maintainer `json:"maintainers,omitempty"`
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="URL"
	URL string `json:"url,omitempty"`
	// NamespaceManifest names the template that creates the Instance's namespace.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Namespace Manifest"
	NamespaceManifest string `json:"namespaceManifest,omitempty"`
}

// OperatorVersionSummary names an OperatorVersion and the Instances of its
// namespace using it.
type OperatorVersionSummary struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// +optional
	AppVersion string `json:"appVersion,omitempty"`
	// Instances are the names of the Instances of its namespace using it.
	// +optional
	Instances []string `json:"instances,omitempty"`
	// InstancesElsewhere counts the Instances of other namespaces using it:
	// whoever may read the Operator learns no other namespace's names.
	// +optional
	InstancesElsewhere int32 `json:"instancesElsewhere,omitempty"`
}

// Maintainer is a person responsible for an operator package.
type Maintainer struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Email string `json:"email,omitempty"`
}

// OperatorStatus is the observed state of an Operator. KUDO left it empty;
// kudo-ng reports what is installed: its versions and the Instances of each.
type OperatorStatus struct {
	// Versions are the OperatorVersions of this Operator in its namespace.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Versions"
	Versions []OperatorVersionSummary `json:"versions,omitempty"`
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready, Reconciling and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kudo
// +kubebuilder:printcolumn:name="Versions",type=string,JSONPath=`.status.versions[*].version`
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Operator"
// Its status lists its versions and their Instances.
// +operator-sdk:csv:customresourcedefinitions:resources={{OperatorVersion,v1beta1},{Instance,v1beta1}}

// Operator is an operator package installed in a namespace; its versions are
// OperatorVersions.
type Operator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OperatorSpec `json:"spec,omitempty"`
	// +optional
	Status OperatorStatus `json:"status,omitempty"`
}

// GetConditions returns the Operator's conditions.
func (o *Operator) GetConditions() []metav1.Condition { return o.Status.Conditions }

// SetConditions replaces the Operator's conditions.
func (o *Operator) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }

// +kubebuilder:object:root=true

// OperatorList contains a list of Operator.
type OperatorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Operator `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Operator{}, &OperatorList{})
}
