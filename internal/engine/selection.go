package engine

import (
	"fmt"
	"sort"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// PlanForParameters is the plan a change of parameters runs: the trigger of
// the changed parameters; update when none has one, or deploy when there is
// no update plan. Parameters whose triggers differ cannot change together.
func PlanForParameters(ov *kudov1beta1.OperatorVersionSpec, changed []string) (string, error) {
	byName := make(map[string]*kudov1beta1.Parameter, len(ov.Parameters))
	for i := range ov.Parameters {
		byName[ov.Parameters[i].Name] = &ov.Parameters[i]
	}
	triggers := map[string][]string{}
	for _, name := range changed {
		p, ok := byName[name]
		if !ok {
			return "", fmt.Errorf("parameter %s is not defined by the OperatorVersion", name)
		}
		plan := p.Trigger
		if plan == "" {
			plan = fallback(ov.Plans, kudov1beta1.UpdatePlanName, kudov1beta1.DeployPlanName)
		}
		triggers[plan] = append(triggers[plan], name)
	}
	if len(triggers) > 1 {
		parts := make([]string, 0, len(triggers))
		for plan, params := range triggers {
			sort.Strings(params)
			parts = append(parts, fmt.Sprintf("%s triggers %s", strings.Join(params, ", "), plan))
		}
		sort.Strings(parts)
		return "", fmt.Errorf("parameters that trigger different plans cannot change together (%s): change them one plan at a time",
			strings.Join(parts, "; "))
	}
	for plan := range triggers {
		if _, ok := ov.Plans[plan]; !ok {
			return "", fmt.Errorf("plan %q, triggered by %s, is not defined by the OperatorVersion", plan, strings.Join(triggers[plan], ", "))
		}
		return plan, nil
	}
	return "", nil
}

// PlanForUpgrade is the plan an upgrade to a new OperatorVersion runs:
// upgrade, else update, else deploy.
func PlanForUpgrade(plans map[string]kudov1beta1.Plan) string {
	return fallback(plans, kudov1beta1.UpgradePlanName, kudov1beta1.UpdatePlanName, kudov1beta1.DeployPlanName)
}

// PlanForDelete is the plan that runs before an Instance is deleted, if any.
func PlanForDelete(plans map[string]kudov1beta1.Plan) (string, bool) {
	_, ok := plans[kudov1beta1.CleanupPlanName]
	return kudov1beta1.CleanupPlanName, ok
}

// ChangedParameters lists, sorted, the parameters whose values differ
// between two sets (a parameter that is unset in one counts as changed).
func ChangedParameters(before, after map[string]string) []string {
	var changed []string
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			changed = append(changed, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return changed
}

func fallback(plans map[string]kudov1beta1.Plan, names ...string) string {
	for _, n := range names {
		if _, ok := plans[n]; ok {
			return n
		}
	}
	return names[len(names)-1]
}
