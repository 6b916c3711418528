package v1beta1

// The names users and their tools see on kudo-ng's objects and on the
// objects packages apply: labels, annotations, the finalizer, condition
// types and reasons. The values are KUDO v0.19's where KUDO had them, so
// that selectors, scripts and tests written for KUDO keep working.

// Labels KUDO puts on the objects it applies.
const (
	HeritageLabel = "heritage"
	OperatorLabel = "kudo.dev/operator"
	InstanceLabel = "kudo.dev/instance"
	// ShardLabel on an Instance names the manager shard that reconciles it
	// (kudo-ng, as Flux's sharding.fluxcd.io/key): the manager started with
	// --shard KEY reconciles the Instances labelled KEY, the one without
	// --shard those without the label. Children of KudoOperator tasks
	// inherit it; relabelling an Instance hands it to another shard.
	ShardLabel = "sharding.kudo.dev/key"
)

// Annotations KUDO puts on the objects it applies.
const (
	PlanAnnotation             = "kudo.dev/plan"
	PhaseAnnotation            = "kudo.dev/phase"
	StepAnnotation             = "kudo.dev/step"
	OperatorVersionAnnotation  = "kudo.dev/operator-version"
	PlanUIDAnnotation          = "kudo.dev/last-plan-execution-uid"
	DependenciesHashAnnotation = "kudo.dev/dependencies-hash"
	// LastAppliedAnnotation is where KUDO kept the object it last applied;
	// objects it applied still carry it.
	LastAppliedAnnotation = "kudo.dev/last-applied-configuration"
	// AppliedHashAnnotation records the hash of what kudo-ng last applied,
	// so that an unchanged object is not applied again on every pass of a
	// plan (kudo-ng).
	AppliedHashAnnotation = "kudo.dev/applied-hash"
)

// Annotations package authors and users put on objects.
const (
	// SkipHashAnnotation on a ConfigMap or Secret keeps it out of the
	// dependency hash, so changing it does not restart the pods that mount it.
	SkipHashAnnotation = "kudo.dev/skip-hash-calculation"
	// NamespaceAnnotation on a namespaced object of a template keeps it in
	// the namespace it names instead of the Instance's (kudo-ng: KUDO put
	// every object in the Instance's namespace, and ignores it). Owner
	// references cannot cross namespaces: the inventory deletes such objects
	// on uninstall.
	NamespaceAnnotation = "kudo.dev/namespace"
	// OwnerAnnotation names, as NAMESPACE/NAME, the Instance that applied
	// an object no owner reference can name it on: a cluster-scoped one, or
	// one in another namespace (kudo-ng). Pruning, uninstall and adoption
	// take only what names theirs, so two Instances whose packages render
	// the same cluster-scoped name cannot delete each other's.
	OwnerAnnotation = "kudo.dev/owner"
	// AdoptAnnotation, NAMESPACE/NAME, set on an existing object by someone
	// who may write it, hands it to that Instance: its plans may then apply
	// over it and delete it (kudo-ng). An Instance takes over nothing else
	// that it did not make.
	AdoptAnnotation = "kudo.dev/adopt"
	// ReconcileAnnotation "disabled" on an applied object: its drift is
	// neither reported nor corrected (kudo-ng, as Flux's).
	ReconcileAnnotation = "kudo.dev/reconcile"
	// PruneAnnotation "disabled" on an applied object: it is not pruned, nor
	// deleted on uninstall unless owner references delete it (kudo-ng, as
	// Flux's).
	PruneAnnotation = "kudo.dev/prune"
	// Disabled is the value of ReconcileAnnotation and PruneAnnotation that
	// keeps kudo-ng's hands off an object.
	Disabled = "disabled"
	// DriftCorrectionAnnotation on an Instance turns drift correction on
	// ("true") or off ("false") for it, whatever the manager's
	// --drift-correction default (kudo-ng): objects its plans applied and
	// someone else changed or deleted are applied again as the plan
	// rendered them.
	DriftCorrectionAnnotation = "kudo.dev/drift-correction"

	// PackageDigestAnnotation (kudo-ng) on an OperatorVersion is the
	// package it was installed from, when from an OCI registry: the
	// reference by digest its tag resolved to when it was installed
	// (oci://REGISTRY/REPOSITORY@sha256:…).
	PackageDigestAnnotation = "kudo.dev/package-digest"

	// TypedGenerationAnnotation (kudo-ng) on the Instance of a typed
	// object is the generation of the object its spec was applied from:
	// the object's status observes that generation once the Instance's
	// does (docs/typed-apis.md).
	TypedGenerationAnnotation = "kudo.dev/typed-generation"
)

// InstanceCleanupFinalizer holds a deleted Instance until its cleanup plan
// has run.
const InstanceCleanupFinalizer = "kudo.dev.instance.cleanup"

// Condition types shared by the three kinds. Ready, Reconciling and Stalled
// follow kstatus, so `kubectl wait --for=condition=Ready` and kstatus-based
// tools understand them.
const (
	ReadyCondition       = "Ready"
	ReconcilingCondition = "Reconciling"
	StalledCondition     = "Stalled"
)

// Condition reasons.
const (
	// SucceededReason: the object is what it should be.
	SucceededReason = "Succeeded"
	// InvalidReason: the object's spec can never work as it is.
	InvalidReason = "Invalid"
	// OperatorVersionNotFoundReason: an Instance's OperatorVersion is missing.
	OperatorVersionNotFoundReason = "OperatorVersionNotFound"
	// OperatorVersionChangedReason: an Instance's OperatorVersion was made
	// again with other content than the Instance ran with.
	OperatorVersionChangedReason = "OperatorVersionChanged"
	// PlanPendingReason: the Instance waits for a plan to run.
	PlanPendingReason    = "PlanPending"
	PlanInProgressReason = "PlanInProgress"
	PlanFailedReason     = "PlanFailed"
	// KUDO's reasons for an Instance whose plan completed: its workloads are
	// all ready, or some are not.
	ResourcesReadyReason   = "ResourcesReady"
	ResourceNotReadyReason = "ResourceNotReady"
	PlanCancelledReason    = "PlanCancelled"
	InvalidRequestReason   = "InvalidPlanRequest"
	// kudo-ng's reasons for an Instance whose plan completed and whose
	// objects are no longer as the plan applied them: one is gone, or
	// someone else changed it, or changes it again each time kudo-ng
	// corrects it.
	MissingReason    = "Missing"
	DriftedReason    = "Drifted"
	DriftFightReason = "DriftFight"
	// ClusterUnreachableReason: the cluster an Instance's kubeconfig names
	// does not answer; its plan waits, and resumes when it does.
	ClusterUnreachableReason = "ClusterUnreachable"
	// InvalidKubeConfigReason: the kubeconfig an Instance names cannot be
	// used (missing, malformed, or naming what the manager refuses).
	InvalidKubeConfigReason = "InvalidKubeConfig"
)

// Reasons of the events on an Instance, which users' scripts match. A
// readiness change is an event of its condition's reason; a drift fight,
// of DriftFightReason.
const (
	// KUDO's: a plan run started, and ended with its status.
	PlanStartedEvent  = "PlanStarted"
	PlanFinishedEvent = "PlanFinished"
	// A plan run failed, with its message.
	PlanFailedEvent = "PlanFailed"
	// A failed plan run resumed from its failed steps; a run cancelled.
	PlanRetriedEvent   = "PlanRetried"
	PlanCancelledEvent = "PlanCancelled"
	// An Instance KUDO ran taken over without running a plan, or an object
	// not taken over because another Instance holds it.
	AdoptedEvent    = "Adopted"
	NotAdoptedEvent = "NotAdopted"
	// An object no task renders any more deleted; an object kept rather
	// than deleted, and why; a CustomResourceDefinition kept while its
	// custom resources remain.
	PrunedEvent                       = "Pruned"
	KeptEvent                         = "Kept"
	CustomResourceDefinitionKeptEvent = "CustomResourceDefinitionKept"
	// An object someone else changed applied again as the plan rendered it.
	DriftCorrectedEvent = "DriftCorrected"
)
