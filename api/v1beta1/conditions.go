package v1beta1

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
	// PlanPendingReason: the Instance waits for a plan to run.
	PlanPendingReason = "PlanPending"
)
