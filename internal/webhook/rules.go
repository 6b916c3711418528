// Package webhook is kudo-ng's admission for Instances and OperatorVersions:
// KUDO's guard against conflicting plans, on admission v1, plus an explicit
// cancel. The rules are plain functions of the objects involved; the
// handlers in this package only fetch the OperatorVersion and call them.
package webhook

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
)

// NewUID makes the uid of a plan run.
var NewUID = uuid.NewUUID

// DefaultCreate prepares a new Instance: its immutable parameters take
// their defaults explicitly, and deploy is scheduled with a fresh uid.
func DefaultCreate(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) {
	for _, p := range ov.Spec.Parameters {
		if p.Immutable == nil || !*p.Immutable || p.Default == nil {
			continue
		}
		if _, set := declared(i)[p.Name]; !set {
			if i.Spec.Parameters == nil {
				i.Spec.Parameters = map[string]string{}
			}
			i.Spec.Parameters[p.Name] = *p.Default
		}
	}
	if i.Spec.PlanExecution.PlanName == "" {
		i.Spec.PlanExecution = engine.RequestRun(kudov1beta1.DeployPlanName, NewUID())
	}
}

// ValidateCreate checks a new Instance: its OperatorVersion has a deploy
// plan, and its parameters are defined, of their type, and complete.
func ValidateCreate(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error {
	if _, ok := ov.Spec.Plans[kudov1beta1.DeployPlanName]; !ok {
		return fmt.Errorf("OperatorVersion %s has no deploy plan, so an Instance of it could never be deployed", ov.Name)
	}
	if pe := i.Spec.PlanExecution; pe.PlanName != "" && pe.PlanName != kudov1beta1.DeployPlanName {
		return fmt.Errorf("a new Instance runs deploy first; spec.planExecution asks for %s", pe.PlanName)
	}
	if err := checkKubeConfig(i); err != nil {
		return err
	}
	return checkParameters(i, ov)
}

// checkKubeConfig: spec.kubeConfig names a Secret and key as the API
// server would accept them.
func checkKubeConfig(i *kudov1beta1.Instance) error {
	kc := i.Spec.KubeConfig
	if kc == nil {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(kc.SecretRef.Name); len(errs) > 0 {
		return fmt.Errorf("spec.kubeConfig.secretRef.name: %q is not a Secret's name: %s", kc.SecretRef.Name, strings.Join(errs, "; "))
	}
	if key := kc.SecretRef.Key; key != "" {
		if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
			return fmt.Errorf("spec.kubeConfig.secretRef.key: %q is not a Secret's key: %s", key, strings.Join(errs, "; "))
		}
	}
	return nil
}

// DefaultUpdate schedules the plan an update asks for: the upgrade plan for a
// new OperatorVersion, or the plan the changed parameters trigger. An update
// that schedules nothing — metadata, or an explicit planExecution — is left
// as it is.
func DefaultUpdate(old, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) {
	if i.Spec.PlanExecution != old.Spec.PlanExecution {
		return
	}
	plan := ""
	if upgrades(old, i) {
		plan = engine.PlanForUpgrade(ov.Spec.Plans)
	} else if changed := engine.ChangedParameters(declared(old), declared(i)); len(changed) > 0 {
		p, err := engine.PlanForParameters(&ov.Spec, changed)
		if err != nil {
			return // ValidateUpdate refuses it, saying why.
		}
		plan = p
	}
	// A change that triggers the plan already running starts it over, as
	// KUDO does; one that triggers another plan is ValidateUpdate's to refuse.
	if plan != "" && engine.MayRequest(old, plan) {
		i.Spec.PlanExecution = engine.RequestRun(plan, NewUID())
	}
}

// ValidateUpdate refuses what KUDO refused: an unknown plan, undefined or
// mistyped parameters, a changed immutable parameter, parameters that trigger
// several plans, a plan while another runs, cleanup asked for by hand, an
// upgrade while a plan runs. A running plan may be cancelled.
func ValidateUpdate(old, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error {
	if !equality.Semantic.DeepEqual(old.Spec.KubeConfig, i.Spec.KubeConfig) {
		return fmt.Errorf("spec.kubeConfig cannot change: the Instance's objects live in its cluster; uninstall it and install it again")
	}
	if err := checkParameters(i, ov); err != nil {
		return err
	}
	if err := checkImmutable(old, i, ov); err != nil {
		return err
	}
	if err := checkTriggers(old, i, ov); err != nil {
		return err
	}
	return checkPlanExecution(old, i, ov)
}

// ValidateDeleting keeps an Instance being deleted acting as the identity
// its plans ran as: its cleanup plan and the removal of its objects must not
// run as another service account, or as the manager when the account is
// dropped. Everything else may change, so that finalizers can go.
func ValidateDeleting(old, i *kudov1beta1.Instance) error {
	if old.Spec.ServiceAccountName != i.Spec.ServiceAccountName {
		return fmt.Errorf("spec.serviceAccountName cannot change while the Instance is being deleted: "+
			"its cleanup runs as its plans did (serviceAccountName %q)", old.Spec.ServiceAccountName)
	}
	if old.OperatorVersionKey() != i.OperatorVersionKey() {
		return fmt.Errorf("spec.operatorVersion cannot change while the Instance is being deleted: its cleanup runs %s's plans",
			old.OperatorVersionKey())
	}
	return nil
}

// checkImmutable: an immutable parameter never changes, and an upgrade that
// makes one immutable must give it a value.
func checkImmutable(old, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error {
	upgrade := upgrades(old, i)
	for _, p := range ov.Spec.Parameters {
		if p.Immutable == nil || !*p.Immutable {
			continue
		}
		before, hadBefore := declared(old)[p.Name]
		after, hasAfter := declared(i)[p.Name]
		if !upgrade && (before != after || hadBefore != hasAfter) {
			if p.IsSensitive() {
				return fmt.Errorf("parameter %s is immutable: it cannot change; to change it, install a new Instance", p.Name)
			}
			return fmt.Errorf("parameter %s is immutable: it cannot change from %q to %q; to change it, install a new Instance",
				p.Name, before, after)
		}
		if upgrade && !hasAfter && p.Default == nil {
			return fmt.Errorf("parameter %s is immutable in OperatorVersion %s and has no default: the upgrade must give it a value",
				p.Name, ov.Name)
		}
	}
	return nil
}

// checkTriggers: an upgrade or a parameter change may not start a plan
// while a different one runs, and parameters may not trigger several plans.
func checkTriggers(old, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error {
	oldPE := old.Spec.PlanExecution
	if upgrades(old, i) {
		if engine.Requested(old) {
			return fmt.Errorf("plan %s is running: upgrade to %s when it has finished, or cancel it first (spec.planExecution.status: CANCELLED)",
				oldPE.PlanName, i.Spec.OperatorVersion.Name)
		}
		return nil
	}
	changed := engine.ChangedParameters(declared(old), declared(i))
	if len(changed) == 0 {
		return nil
	}
	plan, err := engine.PlanForParameters(&ov.Spec, changed)
	if err != nil {
		return err
	}
	if !engine.MayRequest(old, plan) {
		return fmt.Errorf("plan %s is running, and changing %s would start plan %s: change them when %s has finished, or cancel it first",
			oldPE.PlanName, strings.Join(changed, ", "), plan, oldPE.PlanName)
	}
	return nil
}

// checkPlanExecution: a plan asked for by hand must exist, not be cleanup,
// have a uid, and wait for a running plan; only the running plan can be
// cancelled.
func checkPlanExecution(old, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error {
	pe, oldPE := i.Spec.PlanExecution, old.Spec.PlanExecution
	switch {
	case pe == oldPE:
		return nil
	case pe.Status == kudov1beta1.ExecutionCancelled:
		if !engine.Requested(old) || pe.PlanName != oldPE.PlanName || pe.UID != oldPE.UID {
			return fmt.Errorf("only the running plan can be cancelled: set spec.planExecution.status to CANCELLED " +
				"and leave its planName and uid as they are")
		}
		return nil
	case pe.Status == kudov1beta1.ExecutionRetry:
		return checkRetry(old, pe)
	case pe.Status != "" && pe.Status != oldPE.Status:
		return fmt.Errorf("spec.planExecution.status %q cannot be set: only CANCELLED, to cancel the running plan, "+
			"or RETRY, to resume a failed one", pe.Status)
	case pe.PlanName == "":
		return nil // the controller clears it when the plan ends
	}
	if _, ok := ov.Spec.Plans[pe.PlanName]; !ok {
		return fmt.Errorf("plan %q is not defined by OperatorVersion %s; the plans are %s",
			pe.PlanName, ov.Name, strings.Join(engine.PlanNames(ov.Spec.Plans), ", "))
	}
	if pe.PlanName == kudov1beta1.CleanupPlanName {
		return fmt.Errorf("the cleanup plan runs when the Instance is deleted and cannot be started by hand")
	}
	if pe.UID == "" {
		return fmt.Errorf("spec.planExecution needs a new uid to run plan %s", pe.PlanName)
	}
	if !engine.MayRequest(old, pe.PlanName) {
		return fmt.Errorf("plan %s is running: start %s when it has finished, or cancel it first (spec.planExecution.status: CANCELLED)",
			oldPE.PlanName, pe.PlanName)
	}
	return nil
}

// checkRetry: only the last plan run, if it failed, can be resumed.
func checkRetry(old *kudov1beta1.Instance, pe kudov1beta1.PlanExecution) error {
	active := old.Status.ActivePlan
	if active == nil || active.Name != pe.PlanName || active.Status != kudov1beta1.ExecutionFatalError {
		last := "no plan has run"
		if active != nil {
			last = fmt.Sprintf("the last plan run, of %s, is %s", active.Name, active.Status)
		}
		return fmt.Errorf("plan %q cannot be retried: only the last plan run can, once it has failed, and %s", pe.PlanName, last)
	}
	if uid := old.Status.PlanStatus[pe.PlanName].UID; pe.UID != uid {
		return fmt.Errorf("spec.planExecution.uid must be %s, the uid of the failed run of plan %s, to retry it", uid, pe.PlanName)
	}
	return nil
}

// upgrades: the update moves the Instance to another OperatorVersion, by
// name or namespace.
func upgrades(old, i *kudov1beta1.Instance) bool {
	return old.OperatorVersionKey() != i.OperatorVersionKey()
}

// declared are the parameters the spec sets, values and Secret keys.
func declared(i *kudov1beta1.Instance) map[string]string {
	return params.Declared(i.Spec.Parameters, i.Spec.SecretParameters)
}

// checkParameters: every value names a parameter of the OperatorVersion and
// fits its type and enum, and so does every Secret key, which names a
// Secret and key as the API server would accept them, for a parameter
// without a value; every required parameter without default is set.
func checkParameters(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error {
	values := i.Spec.Parameters
	byName := make(map[string]*kudov1beta1.Parameter, len(ov.Spec.Parameters))
	for i := range ov.Spec.Parameters {
		byName[ov.Spec.Parameters[i].Name] = &ov.Spec.Parameters[i]
	}
	names := make([]string, 0, len(values))
	for name := range maps.Keys(values) {
		names = append(names, name)
	}
	sort.Strings(names)
	if err := checkParametersSize(values, names); err != nil {
		return err
	}
	for _, name := range names {
		p, ok := byName[name]
		if !ok {
			return fmt.Errorf("parameter %s is not defined by OperatorVersion %s", name, ov.Name)
		}
		if err := params.Check(p, values[name]); err != nil {
			return err
		}
	}
	if err := checkSecretParameters(i, ov, byName); err != nil {
		return err
	}
	for _, p := range ov.Spec.Parameters {
		if _, fromSecret := i.Spec.SecretParameters[p.Name]; params.NeedsValue(&p) && values[p.Name] == "" && !fromSecret {
			return fmt.Errorf("parameter %s is required and has no default: set spec.parameters.%s", p.Name, p.Name)
		}
	}
	return nil
}

func checkSecretParameters(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion, byName map[string]*kudov1beta1.Parameter) error {
	for _, name := range slices.Sorted(maps.Keys(i.Spec.SecretParameters)) {
		ref := i.Spec.SecretParameters[name]
		at := "spec.secretParameters." + name
		switch _, hasValue := i.Spec.Parameters[name]; {
		case byName[name] == nil:
			return fmt.Errorf("%s: parameter %s is not defined by OperatorVersion %s", at, name, ov.Name)
		case hasValue:
			return fmt.Errorf("%s: parameter %s has a value in spec.parameters too: set it in one of them", at, name)
		}
		if errs := validation.IsDNS1123Subdomain(ref.Name); len(errs) > 0 {
			return fmt.Errorf("%s.name: %q is not a Secret's name: %s", at, ref.Name, strings.Join(errs, "; "))
		}
		if errs := validation.IsConfigMapKey(ref.Key); len(errs) > 0 {
			return fmt.Errorf("%s.key: %q is not a Secret's key: %s", at, ref.Key, strings.Join(errs, "; "))
		}
	}
	return nil
}

// checkParametersSize bounds spec.parameters: the status records them again
// (status.appliedParameters), and the Instance must stay within what the API
// server stores besides its inventory and revisions.
func checkParametersSize(values map[string]string, sorted []string) error {
	total, largest := 0, ""
	for _, name := range sorted {
		total += len(name) + len(values[name])
		if largest == "" || len(values[name]) > len(values[largest]) {
			largest = name
		}
	}
	if total <= params.MaxBytes {
		return nil
	}
	return fmt.Errorf("spec.parameters take %d KiB (the largest, %s, %d KiB), more than the %d KiB an Instance holds: "+
		"keep large configuration in a ConfigMap or Secret", total>>10, largest, len(values[largest])>>10, params.MaxBytes>>10)
}
