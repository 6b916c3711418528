package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// FailurePolicy is what a Rollout does when an Instance of a wave fails.
// +kubebuilder:validation:Enum=Pause;Rollback
type FailurePolicy string

const (
	// Pause stops the rollout where it is; the failed Instance stays as it
	// failed, for someone to look at.
	Pause FailurePolicy = "Pause"
	// Rollback also rolls the wave's upgraded Instances back to the
	// OperatorVersion and parameters they ran before (kubectl kudo
	// rollback), their history kept.
	Rollback FailurePolicy = "Rollback"
)

// RolloutSpec says which Instances of a package move to which of its
// versions, and how: wave after wave, each gated by the package's own
// health rules.
type RolloutSpec struct {
	// Operator is the package whose Instances, and typed objects, the
	// rollout upgrades.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Operator"
	Operator string `json:"operator"`
	// Selector picks among them by their labels (a typed object's, for the
	// Instance it makes); left out, every one.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Selector"
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// OperatorVersion is the package's version to roll out (0.2.0), with
	// AppVersion when the package has several of it: the OperatorVersion of
	// that version in the namespace of each Instance's current one.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Operator version"
	OperatorVersion string `json:"operatorVersion"`
	// +optional
	// +kubebuilder:validation:MaxLength=128
	AppVersion string `json:"appVersion,omitempty"`
	// Strategy is how the rollout moves.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Strategy"
	Strategy RolloutStrategy `json:"strategy,omitempty"`
	// Paused starts no upgrade while true; those running go on.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// Abort stops the rollout for good and rolls the current wave's
	// upgraded Instances back (kubectl kudo rollout abort).
	// +optional
	Abort bool `json:"abort,omitempty"`
	// Undo rolls every Instance the rollout upgraded back to what it ran
	// before (kubectl kudo rollout undo).
	// +optional
	Undo bool `json:"undo,omitempty"`
}

// RolloutStrategy is how a rollout moves through the fleet.
type RolloutStrategy struct {
	// Waves are the sizes of the waves, in order: a count (1, a canary) or
	// a percentage of the fleet, rounded up; the Instances past the last
	// size form a last wave. Left out, one wave of all.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Waves []intstr.IntOrString `json:"waves,omitempty"`
	// Clusters (kudo-ng) orders the rollout by the clusters the Instances
	// act on: all of the first cluster's Instances, in waves of the sizes
	// above, before any of the second's (staging, then production). A
	// cluster is named by the kubeconfig Secret of its Instances'
	// spec.kubeConfig, and the manager's own cluster "in-cluster", as
	// Argo CD names it. An Instance of a cluster not named stops the
	// rollout before it starts. Left out, the fleet is one group.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	Clusters []string `json:"clusters,omitempty"`
	// MaxParallel is how many Instances of a wave upgrade at once.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxParallel int32 `json:"maxParallel,omitempty"`
	// MaxUnavailable is how many Instances of the fleet may be not Ready at
	// once: an upgrading one counts, one more pauses the rollout.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	MaxUnavailable int32 `json:"maxUnavailable,omitempty"`
	// BakeTime is how long every Instance of a wave must stay Ready, its
	// upgrade plan complete, before the next wave starts.
	// +optional
	BakeTime metav1.Duration `json:"bakeTime,omitempty"`
	// OnFailure is Pause (the default) or Rollback.
	// +optional
	// +kubebuilder:default=Pause
	OnFailure FailurePolicy `json:"onFailure,omitempty"`
}

// LocalCluster names, in spec.strategy.clusters and a wave's status, the
// manager's own cluster: that of the Instances without spec.kubeConfig.
const LocalCluster = "in-cluster"

// RolloutComplete is the condition of a Rollout whose every wave is
// complete, as a Job's: kubectl wait --for=condition=Complete.
const RolloutComplete = "Complete"

// WavePhase is where a wave is.
// +kubebuilder:validation:Enum=Pending;Progressing;Complete;Failed;RolledBack
type WavePhase string

const (
	WavePending     WavePhase = "Pending"
	WaveProgressing WavePhase = "Progressing"
	WaveComplete    WavePhase = "Complete"
	WaveFailed      WavePhase = "Failed"
	WaveRolledBack  WavePhase = "RolledBack"
)

// WaveStatus is one wave: its Instances, as namespace/name, and where it is.
type WaveStatus struct {
	// +listType=atomic
	Instances []string  `json:"instances"`
	Phase     WavePhase `json:"phase"`
	// Cluster is the cluster the wave's Instances act on, when the rollout
	// goes cluster by cluster (spec.strategy.clusters).
	// +optional
	Cluster string `json:"cluster,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// RolloutFailure names the Instance that stopped the rollout, and why.
type RolloutFailure struct {
	Instance string `json:"instance"`
	Reason   string `json:"reason"`
}

// RolloutStatus is where the rollout is.
type RolloutStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready and Complete once every wave is complete,
	// Reconciling while one moves, Stalled when a failure paused it.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Waves are the waves, planned when the rollout starts.
	// +optional
	// +listType=atomic
	Waves []WaveStatus `json:"waves,omitempty"`
	// Current is the index of the wave that moves.
	// +optional
	Current int32 `json:"current,omitempty"`
	// Failure is what paused the rollout, if anything did.
	// +optional
	Failure *RolloutFailure `json:"failure,omitempty"`
	// Previous is the OperatorVersion each Instance ran before the
	// rollout moved it, for undo.
	// +optional
	Previous map[string]string `json:"previous,omitempty"`
	// Updated of Total Instances run the target.
	// +optional
	Updated int32 `json:"updated,omitempty"`
	// +optional
	Total int32 `json:"total,omitempty"`
	// Message says what the current wave waits for.
	// +optional
	Message string `json:"message,omitempty"`
}

// Rollout (kudo-ng) moves the Instances of a package to a new version of it,
// wave after wave, each gated by the package's health rules, and stops by
// itself, rolling the failed wave back if asked, when one fails
// (docs/rollouts.md).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.spec.operator`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.operatorVersion`
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=`.status.updated`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.total`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:categories=kudo
// +operator-sdk:csv:customresourcedefinitions:displayName="Rollout"
// +operator-sdk:csv:customresourcedefinitions:resources={{Instance,v1beta1}}
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RolloutSpec `json:"spec"`
	// +optional
	Status RolloutStatus `json:"status,omitempty"`
}

// GetConditions returns the Rollout's conditions.
func (r *Rollout) GetConditions() []metav1.Condition { return r.Status.Conditions }

// SetConditions sets the Rollout's conditions.
func (r *Rollout) SetConditions(c []metav1.Condition) { r.Status.Conditions = c }

// RolloutList is a list of Rollouts.
// +kubebuilder:object:root=true
type RolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Rollout `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Rollout{}, &RolloutList{})
}
