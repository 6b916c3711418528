package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// InstanceSpec says which OperatorVersion an Instance runs, with which
// parameters, and which plan it was asked to run.
type InstanceSpec struct {
	// OperatorVersion references the OperatorVersion: its name and, when it
	// lives in another namespace, its namespace (empty: the Instance's own).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Operator Version"
	OperatorVersion corev1.ObjectReference `json:"operatorVersion,omitempty"`
	// Parameters are the values of the OperatorVersion's parameters, all as strings.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Parameters"
	Parameters map[string]string `json:"parameters,omitempty"`
	// SecretParameters (kudo-ng) take the values of parameters from keys of
	// Secrets in the Instance's namespace, read when a plan renders; the
	// Instance holds the reference, never the value, and the value is masked
	// as a sensitive parameter's. A change of the Secret's data runs the plan
	// the parameter triggers. A parameter is set here or in parameters, not both.
	// +optional
	SecretParameters map[string]SecretKeyReference `json:"secretParameters,omitempty"`
	// ServiceAccountName (kudo-ng) names a ServiceAccount of the Instance's
	// namespace: the manager then applies and deletes the Instance's objects
	// impersonating it, with its permissions only, as Flux's
	// spec.serviceAccountName. Children of KudoOperator tasks inherit it.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// KubeConfig (kudo-ng) makes another cluster the one every task of
	// every plan acts on, as Flux's spec.kubeConfig: only the Instance and
	// its status stay in this one. With serviceAccountName, the manager
	// impersonates that ServiceAccount of the Instance's namespace there.
	// Set when the Instance is made, it cannot change: its objects live in
	// that cluster. Admission refuses adding, dropping or changing it; the
	// CRD refuses changing it (a rule on the field: OLM v1 refuses an
	// upgrade that adds a rule to a field the released CRD has, spec).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="kubeConfig cannot change: the Instance's objects live in its cluster; uninstall it and install it again"
	KubeConfig *KubeConfigReference `json:"kubeConfig,omitempty"`
	// PlanExecution requests a plan: set planName and a fresh uid.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Plan Execution"
	PlanExecution PlanExecution `json:"planExecution,omitempty"`
}

// SecretKeyReference names a key of a Secret in the Instance's namespace.
type SecretKeyReference struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
}

// String is the reference as kubectl kudo writes it: NAME/KEY.
func (r SecretKeyReference) String() string { return r.Name + "/" + r.Key }

// KubeConfigReference names the kubeconfig of the cluster an Instance acts
// on.
type KubeConfigReference struct {
	// SecretRef names a Secret of the Instance's namespace and its key
	// holding a kubeconfig ("value" when not set, as Cluster API writes
	// <cluster>-kubeconfig).
	SecretRef KubeConfigSecretReference `json:"secretRef"`
}

// DefaultKubeConfigKey is the key of a kubeconfig Secret an Instance names
// without one: Cluster API writes a cluster's kubeconfig there.
const DefaultKubeConfigKey = "value"

// String names the kubeconfig as kubectl kudo's --kubeconfig-secret does:
// NAME:KEY.
func (r *KubeConfigReference) String() string {
	key := r.SecretRef.Key
	if key == "" {
		key = DefaultKubeConfigKey
	}
	return r.SecretRef.Name + ":" + key
}

// KubeConfigSecretReference names a key of a Secret in the Instance's
// namespace.
type KubeConfigSecretReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
}

// PlanExecution is a request to run a plan. A new uid resets the plan's status
// tree; the controller clears planExecution when the plan ends. Setting status
// to CANCELLED (kudo-ng) cancels the running plan; to RETRY (kudo-ng), with
// the uid of a failed run, resumes it from its failed steps.
type PlanExecution struct {
	// +optional
	PlanName string `json:"planName,omitempty"`
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// +optional
	Status ExecutionStatus `json:"status,omitempty"`
}

// ExecutionStatus is the state of a plan, phase or step.
type ExecutionStatus string

const (
	ExecutionNeverRun   ExecutionStatus = "NEVER_RUN"
	ExecutionPending    ExecutionStatus = "PENDING"
	ExecutionInProgress ExecutionStatus = "IN_PROGRESS"
	ExecutionComplete   ExecutionStatus = "COMPLETE"
	// ExecutionError is transient: the step is retried.
	ExecutionError ExecutionStatus = "ERROR"
	// ExecutionFatalError is terminal: the plan stops.
	ExecutionFatalError ExecutionStatus = "FATAL_ERROR"
	// ExecutionCancelled (kudo-ng) is terminal: the plan was cancelled by
	// setting spec.planExecution.status to it; the next plan may start.
	ExecutionCancelled ExecutionStatus = "CANCELLED"
	// ExecutionRetry (kudo-ng) is only asked for, in spec.planExecution.status
	// with the uid of a run that ended in FATAL_ERROR: the run resumes from
	// its failed steps; the steps it completed do not run again.
	ExecutionRetry ExecutionStatus = "RETRY"
	// ExecutionSuperseded (kudo-ng) is only a revision's: its run had not
	// ended when a newer run started in its place (the plan triggered again,
	// or cleanup on delete), and it never will.
	ExecutionSuperseded ExecutionStatus = "SUPERSEDED"
)

// IsTerminal reports whether a plan in this state has ended.
func (s ExecutionStatus) IsTerminal() bool {
	return s == ExecutionComplete || s == ExecutionFatalError || s == ExecutionCancelled
}

// IsRunning reports whether a plan in this state is still under way.
func (s ExecutionStatus) IsRunning() bool {
	return s == ExecutionPending || s == ExecutionInProgress || s == ExecutionError
}

// Reserved plan names.
const (
	DeployPlanName  = "deploy"
	UpdatePlanName  = "update"
	UpgradePlanName = "upgrade"
	CleanupPlanName = "cleanup"
)

// InstanceStatus is the status tree of every plan that ran, as in KUDO, plus
// conditions.
type InstanceStatus struct {
	// PlanStatus maps a plan name to the status of its last run.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Plan Status"
	PlanStatus map[string]PlanStatus `json:"planStatus,omitempty"`
	// ActivePlan summarises the plan that runs now or, when none does, the
	// plan that ran last (kudo-ng; KUDO's CLI derived it from planStatus).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Active Plan"
	ActivePlan *ActivePlanStatus `json:"activePlan,omitempty"`
	// AppliedOperatorVersion and AppliedParameters are the spec the last
	// plan started from (kudo-ng): a change of the spec against them selects
	// the next plan, as KUDO's last-applied-instance-state annotation did.
	// The values of sensitive and secret parameters are masked: a hash of
	// the value keyed with a key only the manager holds, enough to see that
	// it changed.
	// +optional
	AppliedOperatorVersion string `json:"appliedOperatorVersion,omitempty"`
	// +optional
	AppliedParameters map[string]string `json:"appliedParameters,omitempty"`
	// AppliedOperatorVersionDigest is the digest of the content of the
	// OperatorVersion the last plan started from (kudo-ng): one made again
	// under its name with other content is another package's code, and the
	// Instance runs nothing of it (Stalled, reason OperatorVersionChanged)
	// until it is upgraded to another version. A restore that makes the
	// same content again keeps it.
	// +optional
	AppliedOperatorVersionDigest string `json:"appliedOperatorVersionDigest,omitempty"`
	// AppliedGeneration is the generation of the spec whose values
	// appliedParameters hold (kudo-ng): the one the last plan started from,
	// or a later one that asked for no plan. While it is metadata.generation,
	// a masked value of appliedParameters is the mask of the spec's value,
	// which tells kubectl kudo rollback, which cannot make a mask, whether a
	// revision ran with it.
	// +optional
	AppliedGeneration int64 `json:"appliedGeneration,omitempty"`
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Inventory lists what the plans applied, by the task that applied it
	// last (kudo-ng): what pruning, drift detection, readiness and uninstall
	// work from.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Inventory"
	Inventory []TaskInventory `json:"inventory,omitempty"`
	// Revisions are the last plan runs (kudo-ng), oldest first, at most
	// MaxRevisions: which OperatorVersion and parameters each ran, so that
	// kubectl kudo rollback can return to one.
	// +optional
	Revisions []Revision `json:"revisions,omitempty"`
	// Conditions are Ready, Reconciling and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ActivePlanStatus names a plan and its status.
type ActivePlanStatus struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Status ExecutionStatus `json:"status,omitempty"`
}

// MaxRevisions bounds the plan runs an Instance remembers.
const MaxRevisions = 10

// MaxRevisionBytes bounds what the revisions keep of parameters besides the
// newest run's: the oldest revisions go first once their changed values
// (names and values) take more, so that large parameters changed often
// cannot make the Instance too large to store.
const MaxRevisionBytes = 64 << 10

// Revision is a plan run and the spec it ran with.
type Revision struct {
	// Number counts the Instance's plan runs, from 1.
	Number int64  `json:"number"`
	Plan   string `json:"plan"`
	// UID is the run's planExecution uid.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// Status is how the run ended, IN_PROGRESS while it runs, or SUPERSEDED.
	// +optional
	Status ExecutionStatus `json:"status,omitempty"`
	// +optional
	// +nullable
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// OperatorVersion is the OperatorVersion the run started from.
	OperatorVersion string `json:"operatorVersion"`
	// Parameters are the values the run started from, sensitive ones masked,
	// as kudo-ng recorded revisions before it kept only their differences:
	// read, no longer written.
	// +optional
	Parameters map[string]string `json:"parameters,omitempty"`
	// ChangedParameters and UnsetParameters are the run's values as they
	// differ from status.appliedParameters (the newest run's): values it ran
	// with, and parameters it did not set. Sensitive values are masked.
	// +optional
	ChangedParameters map[string]string `json:"changedParameters,omitempty"`
	// +optional
	UnsetParameters []string `json:"unsetParameters,omitempty"`
	// SecretParameters are the Secret keys the run took parameters from.
	// +optional
	SecretParameters map[string]SecretKeyReference `json:"secretParameters,omitempty"`
}

// PlanStatus is the status of the last run of a plan.
type PlanStatus struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Status ExecutionStatus `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	// +nullable
	LastUpdatedTimestamp *metav1.Time `json:"lastUpdatedTimestamp,omitempty"`
	// +optional
	Phases []PhaseStatus `json:"phases,omitempty"`
	// UID is the planExecution uid of this run.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// StartedAt (kudo-ng) is when this run started, or was last retried:
	// what the plan's timeout counts from.
	// +optional
	// +nullable
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// Pruned lists what this run deleted once it completed: objects its tasks
	// applied before and no longer render (kudo-ng); the first
	// MaxPrunedListed of them, each also told by a Pruned event.
	// +optional
	Pruned []ObjectRef `json:"pruned,omitempty"`
}

// MaxPrunedListed bounds a plan status's list of pruned objects, which would
// otherwise copy a whole inventory into the status.
const MaxPrunedListed = 100

// TaskInventory is what one task applied, and where in which plan run it
// last ran: drift correction renders the objects again there.
type TaskInventory struct {
	Task  string `json:"task"`
	Plan  string `json:"plan"`
	Phase string `json:"phase"`
	Step  string `json:"step"`
	// PlanUID is the plan run that ran the task last.
	PlanUID types.UID `json:"planUID"`
	// Objects are what that run applied, or applies while it runs.
	// +optional
	Objects []InventoryObject `json:"objects,omitempty"`
	// Stale are objects an earlier run applied and the last one did not:
	// pruned once a run of the task completes its plan.
	// +optional
	Stale []ObjectRef `json:"stale,omitempty"`
}

// ObjectRef names an object. The status holds it as one string, as kubectl
// names objects: "<apiVersion> <kind> <namespace>/<name>", or
// "<apiVersion> <kind> <name>" for a cluster-scoped object (inventory_json.go).
// +kubebuilder:validation:Type=string
type ObjectRef struct {
	APIVersion string
	Kind       string
	// Namespace is empty for a cluster-scoped object.
	Namespace string
	Name      string
}

// InventoryObject is an object a task applied, with what kudo-ng last saw of
// it as applied: its generation or, for kinds without one, a hash of its
// content. Another value in the cluster means someone else changed it. The
// status holds it as one string, its ObjectRef's and then
// " generation=<n>" or " hash=<hex>": every write of the Instance carries
// the whole inventory, and the API server's cost of a write grows with its
// fields (docs/benchmarks.md).
// +kubebuilder:validation:Type=string
type InventoryObject struct {
	ObjectRef
	Generation int64
	Hash       string
}

// PhaseStatus is the status of a phase of a plan run.
type PhaseStatus struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Status ExecutionStatus `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	Steps []StepStatus `json:"steps,omitempty"`
}

// StepStatus is the status of a step of a plan run.
type StepStatus struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Status ExecutionStatus `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// StartedAt (kudo-ng) is when the step first ran in this run: what its
	// timeout counts from.
	// +optional
	// +nullable
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// Attempts (kudo-ng) counts the tries in a row that failed with an
	// error that may heal (ERROR): each waits twice as long as the one before.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// WaitingOn (kudo-ng) are the objects a running step waits on, the first
	// MaxWaitingOn of them, with what judged each.
	// +optional
	// +listType=atomic
	WaitingOn []ObjectHealth `json:"waitingOn,omitempty"`
	// MoreWaitingOn (kudo-ng) counts the objects the step waits on past
	// those WaitingOn lists.
	// +optional
	MoreWaitingOn int32 `json:"moreWaitingOn,omitempty"`
}

// ObjectHealth (kudo-ng) is the verdict on an object a step waits on.
type ObjectHealth struct {
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// Status is kstatus's word for the verdict: InProgress or Failed.
	// +optional
	Status string `json:"status,omitempty"`
	// Rule is what decided: the package's expression, where it is in
	// operator.yaml (healthChecks[0].current: status.phase == 'Running'),
	// or kstatus.
	// +optional
	Rule string `json:"rule,omitempty"`
	// Message says what is awaited.
	// +optional
	Message string `json:"message,omitempty"`
	// Observed are the fields the rule read, as the object had them.
	// +optional
	// +listType=atomic
	Observed []ObservedField `json:"observed,omitempty"`
	// Since is when the object was first found not ready in this step.
	// +optional
	// +nullable
	Since *metav1.Time `json:"since,omitempty"`
}

// ObservedField (kudo-ng) is a field a health rule read and its value, as
// JSON, shortened; <absent> when the object does not have it.
type ObservedField struct {
	Field string `json:"field"`
	Value string `json:"value"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kudo
// +kubebuilder:printcolumn:name="Operator Version",type=string,JSONPath=`.spec.operatorVersion.name`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.status.activePlan.name`
// +kubebuilder:printcolumn:name="Plan Status",type=string,JSONPath=`.status.activePlan.status`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Instance"
// What its plans make: the objects of its package's templates (these kinds are
// the common ones), Pipe tasks' pods, and KudoOperator tasks' Instances and
// their parameters' Secrets.
// +operator-sdk:csv:customresourcedefinitions:resources={{Deployment,v1},{StatefulSet,v1},{Service,v1},{ConfigMap,v1},{Secret,v1},{Job,v1},{Pod,v1},{Instance,v1beta1}}

// Instance runs an OperatorVersion with a set of parameters, through plans
// (deploy, update, upgrade, cleanup, ...) of phases, steps and tasks.
type Instance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec InstanceSpec `json:"spec,omitempty"`
	// +optional
	Status InstanceStatus `json:"status,omitempty"`
}

// OperatorVersionNamespace is the namespace of the Instance's OperatorVersion:
// spec.operatorVersion.namespace, or the Instance's own when that is empty,
// as in KUDO. Every lookup of the OperatorVersion goes through it.
func (i *Instance) OperatorVersionNamespace() string {
	if i.Spec.OperatorVersion.Namespace == "" {
		return i.Namespace
	}
	return i.Spec.OperatorVersion.Namespace
}

// OperatorVersionKey is the namespace and name of the Instance's OperatorVersion.
func (i *Instance) OperatorVersionKey() types.NamespacedName {
	return types.NamespacedName{Namespace: i.OperatorVersionNamespace(), Name: i.Spec.OperatorVersion.Name}
}

// GetConditions returns the Instance's conditions.
func (i *Instance) GetConditions() []metav1.Condition { return i.Status.Conditions }

// SetConditions replaces the Instance's conditions.
func (i *Instance) SetConditions(c []metav1.Condition) { i.Status.Conditions = c }

// +kubebuilder:object:root=true

// InstanceList contains a list of Instance.
type InstanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Instance `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Instance{}, &InstanceList{})
}
