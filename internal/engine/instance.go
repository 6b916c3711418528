package engine

import (
	"fmt"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// The decisions about an Instance's plans, as plain functions of the
// Instance and its OperatorVersion: the controller, the admission webhook
// and the CLI ask them here.

// ActivePlan returns the plan the status says runs, and whether it still
// runs: it is defined and has not ended.
func ActivePlan(i *kudov1beta1.Instance, plans map[string]kudov1beta1.Plan) (string, bool) {
	a := i.Status.ActivePlan
	if a == nil {
		return "", false
	}
	ps, ok := i.Status.PlanStatus[a.Name]
	_, defined := plans[a.Name]
	return a.Name, ok && defined && ps.Status.IsRunning()
}

// NextPlan picks the plan the spec asks for, when none runs: an explicit
// spec.planExecution with a new uid; deploy for a new Instance; the upgrade
// plan for a new OperatorVersion; the plan changed parameters trigger.
// parameters are the Instance's values as the status records them
// (sensitive ones masked), compared with the last plan's. It returns ""
// when the spec asks for nothing; newUID makes the uid of a run
// spec.planExecution did not ask for.
func NextPlan(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion, parameters map[string]string,
	newUID func() types.UID) (string, types.UID, error) {
	plans := ov.Spec.Plans
	if pe := i.Spec.PlanExecution; pe.PlanName != "" && pe.UID != "" && i.Status.PlanStatus[pe.PlanName].UID != pe.UID {
		if _, ok := plans[pe.PlanName]; !ok {
			return "", "", fmt.Errorf("spec.planExecution asks for plan %q, which OperatorVersion %s does not define", pe.PlanName, ov.Name)
		}
		return pe.PlanName, pe.UID, nil
	}
	switch {
	case i.Status.AppliedOperatorVersion == "":
		if _, ok := plans[kudov1beta1.DeployPlanName]; !ok {
			return "", "", fmt.Errorf("OperatorVersion %s has no deploy plan", ov.Name)
		}
		return kudov1beta1.DeployPlanName, newUID(), nil
	case i.Status.AppliedOperatorVersion != ov.Name:
		return PlanForUpgrade(plans), newUID(), nil
	}
	changed := ChangedParameters(i.Status.AppliedParameters, parameters)
	if len(changed) == 0 {
		return "", "", nil
	}
	plan, err := PlanForParameters(&ov.Spec, changed)
	if err != nil || plan == "" {
		return "", "", err
	}
	return plan, newUID(), nil
}

// EnsurePlanStatuses gives every plan of the OperatorVersion a status tree,
// NEVER_RUN until it runs, as KUDO does.
func EnsurePlanStatuses(status *kudov1beta1.InstanceStatus, plans map[string]kudov1beta1.Plan) {
	if status.PlanStatus == nil {
		status.PlanStatus = map[string]kudov1beta1.PlanStatus{}
	}
	for name, plan := range plans {
		if _, ok := status.PlanStatus[name]; !ok {
			status.PlanStatus[name] = NewPlanStatus(name, &plan)
		}
	}
}

// StartPlan makes the plan the active one with a fresh status tree, and
// records the spec it runs with: the OperatorVersion, the parameters as
// NextPlan compares them, the Secret keys they come from.
func StartPlan(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion, name string, uid types.UID, now time.Time,
	parameters map[string]string) {
	plan := ov.Spec.Plans[name]
	ps := Start(name, &plan, uid, now)
	i.Status.PlanStatus[name] = ps
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: name, Status: ps.Status}
	i.Status.AppliedOperatorVersion = ov.Name
	i.Status.AppliedOperatorVersionDigest = OperatorVersionDigest(ov)
	i.Status.AppliedGeneration = i.Generation
	revisions := supersede(Revisions(&i.Status))
	number := int64(1)
	if len(revisions) > 0 {
		number = revisions[len(revisions)-1].Number + 1
	}
	revisions = append(revisions, kudov1beta1.Revision{
		Number: number, Plan: name, UID: uid, Status: kudov1beta1.ExecutionInProgress, StartedAt: ps.StartedAt,
		OperatorVersion: ov.Name, Parameters: maps.Clone(parameters), SecretParameters: maps.Clone(i.Spec.SecretParameters),
	})
	i.Status.AppliedParameters = maps.Clone(parameters)
	i.Status.Revisions = compactRevisions(revisions, parameters)
}
