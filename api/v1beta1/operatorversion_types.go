package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorVersionSpec is one version of an operator package: its templates,
// tasks, parameters and plans.
type OperatorVersionSpec struct {
	// Operator references the Operator this is a version of.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Operator"
	Operator corev1.ObjectReference `json:"operator,omitempty"`
	// Version is the package's operatorVersion (semver).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Version"
	Version string `json:"version,omitempty"`
	// AppVersion is the version of the application the package runs.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="App Version"
	AppVersion string `json:"appVersion,omitempty"`
	// Templates maps a template path relative to templates/ to its content.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Templates"
	Templates map[string]string `json:"templates,omitempty"`
	// Charts (kudo-ng) are the Helm charts the package's Helm tasks run, by
	// name: each a gzip tarball of the chart, as `helm package` writes it,
	// from the package's charts/ (a NAME.tgz, or a NAME/ directory).
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	Charts map[string][]byte `json:"charts,omitempty"`
	// Tasks are the units of work plans refer to by name.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Tasks"
	Tasks []Task `json:"tasks,omitempty"`
	// Parameters an Instance may set.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Parameters"
	Parameters []Parameter `json:"parameters,omitempty"`
	// Plans maps a plan name to a plan. deploy is required by KUDO's package
	// rules; update, upgrade and cleanup are reserved names.
	// +optional
	// +nullable
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Plans"
	Plans map[string]Plan `json:"plans,omitempty"`
	// ConnectionString is a template of how to connect to an Instance.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Connection String"
	ConnectionString string `json:"connectionString,omitempty"`
	// UpgradableFrom lists the OperatorVersions that may upgrade to this one.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Upgradable From"
	UpgradableFrom []corev1.ObjectReference `json:"upgradableFrom,omitempty"`
	// HealthChecks (kudo-ng) judge the objects of the kinds they name in
	// place of kstatus, in Flux's format (a Kustomization's healthCheckExprs).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Health Checks"
	HealthChecks []HealthCheck `json:"healthChecks,omitempty"`
	// TypedAPI (kudo-ng) names the kind Instances of this package are also
	// served as (docs/typed-apis.md); unset, the names derive from the
	// Operator's name.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Typed API"
	TypedAPI *TypedAPI `json:"typedAPI,omitempty"`
}

// TypedAPI (kudo-ng) is how a package names its own kind: each field left
// empty derives from the Operator's name, as docs/typed-apis.md says.
type TypedAPI struct {
	// Group of the kind, a DNS subdomain; packages.kudo.dev when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`
	// Version served, a Kubernetes API version (v1, v1beta2, ...).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Version string `json:"version,omitempty"`
	// Kind in UpperCamelCase.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind,omitempty"`
	// Plural resource name, lower case.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Plural string `json:"plural,omitempty"`
	// ShortNames kubectl accepts for the resource.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	ShortNames []string `json:"shortNames,omitempty"`
}

// HealthCheck (kudo-ng) is when an object of one kind is healthy, as CEL
// expressions over the object's fields (metadata, spec, status):
// inProgress, failed and current are evaluated in that order and the first
// that holds decides; none holds: in progress. A field the object does not
// have makes an expression not hold yet.
type HealthCheck struct {
	// APIVersion of the objects judged, group/version as they are applied.
	APIVersion string `json:"apiVersion"`
	// Kind of the objects judged.
	Kind string `json:"kind"`
	// InProgress holds while the object is still becoming ready.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	InProgress string `json:"inProgress,omitempty"`
	// Failed holds when the object failed for good: the step that waits on it
	// fails (FATAL_ERROR).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Failed string `json:"failed,omitempty"`
	// Current holds when the object is ready.
	// +kubebuilder:validation:MaxLength=4096
	Current string `json:"current"`
}

// Ordering is how the children of a plan or phase are run.
// +kubebuilder:validation:Enum=serial;parallel
type Ordering string

const (
	// Serial runs one child after another; the next starts when the previous
	// is COMPLETE. It is the default when no strategy is given.
	Serial Ordering = "serial"
	// Parallel runs all children at once.
	Parallel Ordering = "parallel"
)

// Plan is an ordered set of phases.
type Plan struct {
	// +optional
	Strategy Ordering `json:"strategy,omitempty"`
	// +optional
	// +nullable
	Phases []Phase `json:"phases,omitempty"`
	// Timeout (kudo-ng) bounds a run of the plan: past it, the steps still
	// running end in FATAL_ERROR, naming what they waited for. Unset: the
	// manager's --plan-timeout, if any.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// Phase is an ordered set of steps.
type Phase struct {
	Name string `json:"name"`
	// +optional
	Strategy Ordering `json:"strategy,omitempty"`
	// +optional
	Steps []Step `json:"steps,omitempty"`
}

// Step names the tasks that run together.
type Step struct {
	Name string `json:"name"`
	// +optional
	Tasks []string `json:"tasks,omitempty"`
	// Timeout (kudo-ng) bounds how long the step may run: past it, it ends
	// in FATAL_ERROR, naming what it waited for.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// TaskKind is the kind of work a task does.
// +kubebuilder:validation:Enum=Apply;Delete;Toggle;Pipe;KudoOperator;Dummy;Helm
type TaskKind string

const (
	ApplyTaskKind        TaskKind = "Apply"
	DeleteTaskKind       TaskKind = "Delete"
	ToggleTaskKind       TaskKind = "Toggle"
	PipeTaskKind         TaskKind = "Pipe"
	KudoOperatorTaskKind TaskKind = "KudoOperator"
	DummyTaskKind        TaskKind = "Dummy"
	// HelmTaskKind (kudo-ng) renders a Helm chart of the package and applies
	// its objects.
	HelmTaskKind TaskKind = "Helm"
)

// TaskKinds are the kinds the enum above allows, in its order; every one
// has a unit in internal/task, which a test there checks.
var TaskKinds = []TaskKind{ApplyTaskKind, DeleteTaskKind, ToggleTaskKind, PipeTaskKind, KudoOperatorTaskKind, DummyTaskKind, HelmTaskKind}

// Task is a named unit of work of one kind.
type Task struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Kind TaskKind `json:"kind,omitempty"`
	// +optional
	Spec TaskSpec `json:"spec,omitempty"`
}

// TaskSpec is the union of the specs of all task kinds, flat as in KUDO.
type TaskSpec struct {
	ResourceTaskSpec     `json:",inline"`
	DummyTaskSpec        `json:",inline"`
	PipeTaskSpec         `json:",inline"`
	ToggleTaskSpec       `json:",inline"`
	KudoOperatorTaskSpec `json:",inline"`
	HelmTaskSpec         `json:",inline"`
}

// ResourceTaskSpec lists the templates an Apply, Delete or Toggle task renders.
type ResourceTaskSpec struct {
	// +optional
	Resources []string `json:"resources,omitempty"`
	// ReadyWhen (kudo-ng) are CEL expressions over each object an Apply task
	// applies (its metadata, spec, status) that must all hold, besides its
	// kind's health, for the task to be done.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ReadyWhen []string `json:"readyWhen,omitempty"`
}

// DummyTaskSpec makes a Dummy task fail, fail fatally, finish or wait.
type DummyTaskSpec struct {
	// +optional
	WantErr bool `json:"wantErr,omitempty"`
	// +optional
	Fatal bool `json:"fatal,omitempty"`
	// +optional
	Done bool `json:"done,omitempty"`
}

// PipeTaskSpec runs a pod whose files become Secrets or ConfigMaps.
type PipeTaskSpec struct {
	// Pod names the template of the pod that writes the files.
	// +optional
	Pod string `json:"pod,omitempty"`
	// +optional
	Pipe []PipeSpec `json:"pipe,omitempty"`
}

// PipeSpec is one file a Pipe task stores.
type PipeSpec struct {
	// +optional
	File string `json:"file,omitempty"`
	// +optional
	EnvFile string `json:"envFile,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=Secret;ConfigMap
	Kind string `json:"kind,omitempty"`
	// +optional
	Key string `json:"key,omitempty"`
}

// ToggleTaskSpec names the boolean parameter that chooses Apply or Delete.
type ToggleTaskSpec struct {
	// +optional
	Parameter string `json:"parameter,omitempty"`
}

// KudoOperatorTaskSpec installs another operator package as a child Instance.
type KudoOperatorTaskSpec struct {
	// +optional
	Package string `json:"package,omitempty"`
	// +optional
	InstanceName string `json:"instanceName,omitempty"`
	// +optional
	AppVersion string `json:"appVersion,omitempty"`
	// +optional
	OperatorVersion string `json:"operatorVersion,omitempty"`
	// +optional
	ParameterFile string `json:"parameterFile,omitempty"`
}

// HelmTaskSpec (kudo-ng) names the chart a Helm task renders, of the
// package's charts/, and the template of the values it passes it.
type HelmTaskSpec struct {
	// +optional
	Chart string `json:"chart,omitempty"`
	// Values names a template that renders, with the Instance's parameters,
	// the YAML map of values passed to the chart over its own.
	// +optional
	Values string `json:"values,omitempty"`
}

// ParameterType is the type of a parameter's value.
// +kubebuilder:validation:Enum=string;integer;number;boolean;array;map
type ParameterType string

const (
	StringValueType  ParameterType = "string"
	IntegerValueType ParameterType = "integer"
	NumberValueType  ParameterType = "number"
	BooleanValueType ParameterType = "boolean"
	ArrayValueType   ParameterType = "array"
	MapValueType     ParameterType = "map"
)

// Parameter is a value an Instance may set, used by templates.
type Parameter struct {
	// +optional
	DisplayName string `json:"displayName,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// Required parameters must have a default or be set by the Instance.
	// +optional
	Required *bool `json:"required,omitempty"`
	// Default is the value, serialized as a string, when the Instance sets none.
	// +optional
	Default *string `json:"default,omitempty"`
	// Trigger names the plan a change of this parameter runs.
	// +optional
	Trigger string `json:"trigger,omitempty"`
	// +optional
	Type ParameterType `json:"value-type,omitempty"`
	// Immutable parameters cannot change after the Instance is created.
	// +optional
	Immutable *bool `json:"immutable,omitempty"`
	// Enum lists the allowed values.
	// +optional
	Enum *[]string `json:"enum,omitempty"`
	// Sensitive (kudo-ng) parameters are masked wherever kudo-ng shows or
	// records a value: the Instance's status, events, logs and the CLI's
	// output. Templates receive the value.
	// +optional
	Sensitive *bool `json:"sensitive,omitempty"`
	// OldName (kudo-ng; KUDO's KEP-33) is the parameter this one was in the
	// previous API version of the package's typed API: a value set there is
	// carried here, and back.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	OldName string `json:"oldName,omitempty"`
	// Conversion (kudo-ng) says how a value of the previous API version of
	// the typed API becomes this parameter's, and back, beyond a rename.
	// +optional
	Conversion *ParameterConversion `json:"conversion,omitempty"`
}

// ParameterConversion (kudo-ng) converts a typed object's field between the
// previous API version of its kind and this one (docs/typed-apis.md). The
// field of the previous version is the parameter's oldName, else its name.
type ParameterConversion struct {
	// Values maps a value of the previous version's field, as the Instance
	// holds it, to this parameter's; a value not listed is carried as it
	// is. The way back is the inverse, where it is one.
	// +optional
	// +kubebuilder:validation:MaxProperties=256
	Values map[string]string `json:"values,omitempty"`
	// Expression is CEL over the previous version's object (spec,
	// metadata) that gives this parameter's value: for what no rename or
	// value map says.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression,omitempty"`
	// Reverse is CEL over this version's object that gives the previous
	// version's field: Expression's way back.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Reverse string `json:"reverse,omitempty"`
	// Default is this parameter's value, as the Instance holds it, for an
	// object of the previous version that has none to carry.
	// +optional
	Default *string `json:"default,omitempty"`
}

// IsSensitive reports whether the parameter's values are masked.
func (p *Parameter) IsSensitive() bool { return p.Sensitive != nil && *p.Sensitive }

// OperatorVersionStatus is the observed state of an OperatorVersion. KUDO left
// it empty; kudo-ng reports whether the version can run.
type OperatorVersionStatus struct {
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
// +kubebuilder:resource:shortName=ov,categories=kudo
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.spec.operator.name`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="App Version",type=string,JSONPath=`.spec.appVersion`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Verified",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Verified")].status`
// +kubebuilder:printcolumn:name="Message",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +operator-sdk:csv:customresourcedefinitions:displayName="Operator Version"
// +operator-sdk:csv:customresourcedefinitions:resources={{Instance,v1beta1}}

// OperatorVersion is one version of an Operator's package: its templates,
// tasks, parameters and plans.
type OperatorVersion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec OperatorVersionSpec `json:"spec,omitempty"`
	// +optional
	Status OperatorVersionStatus `json:"status,omitempty"`
}

// GetConditions returns the OperatorVersion's conditions.
// TasksByName indexes the tasks by name.
func (s *OperatorVersionSpec) TasksByName() map[string]*Task {
	tasks := make(map[string]*Task, len(s.Tasks))
	for i := range s.Tasks {
		tasks[s.Tasks[i].Name] = &s.Tasks[i]
	}
	return tasks
}

// OperatorVersionName is KUDO's name for an OperatorVersion:
// <operator>-<appVersion>-<version>, or <operator>-<version> without appVersion.
func OperatorVersionName(operator, appVersion, version string) string {
	if appVersion == "" {
		return operator + "-" + version
	}
	return operator + "-" + appVersion + "-" + version
}

func (ov *OperatorVersion) GetConditions() []metav1.Condition { return ov.Status.Conditions }

// SetConditions replaces the OperatorVersion's conditions.
func (ov *OperatorVersion) SetConditions(c []metav1.Condition) { ov.Status.Conditions = c }

// +kubebuilder:object:root=true

// OperatorVersionList contains a list of OperatorVersion.
type OperatorVersionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OperatorVersion `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OperatorVersion{}, &OperatorVersionList{})
}
