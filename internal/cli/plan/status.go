// Package plan is `kubectl kudo plan`: status, trigger, history and cancel.
package plan

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// WriteStatus prints an Instance's plans as KUDO's tree: every plan of the
// OperatorVersion with its phases and steps, and the message of any step
// that waits or failed.
func WriteStatus(w io.Writer, i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error {
	active := ""
	if a := i.Status.ActivePlan; a != nil {
		active = a.Name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Plan(s) for %q in namespace %q:\n.\n", i.Name, i.Namespace)
	fmt.Fprintf(&b, "└── %s (Operator-Version: %q Active-Plan: %q)\n", i.Name, i.Spec.OperatorVersion.Name, active)
	names := make([]string, 0, len(ov.Spec.Plans))
	for name := range ov.Spec.Plans {
		names = append(names, name)
	}
	sort.Strings(names)
	for n, name := range names {
		plan := ov.Spec.Plans[name]
		ps, ok := i.Status.PlanStatus[name]
		if !ok {
			ps = kudov1beta1.PlanStatus{Status: kudov1beta1.ExecutionNeverRun}
		}
		lastPlan := n == len(names)-1
		fmt.Fprintf(&b, "    %s%s %s (%s strategy) [%s]", branch(lastPlan), "Plan", name, strategy(plan.Strategy), ps.Status)
		if ps.LastUpdatedTimestamp != nil {
			fmt.Fprintf(&b, ", last updated %s", ps.LastUpdatedTimestamp.UTC().Format(time.DateTime))
		}
		b.WriteString(message(ps.Message) + "\n")
		planIndent := "    " + indent(lastPlan)
		for p, phase := range plan.Phases {
			lastPhase := p == len(plan.Phases)-1
			status := phaseStatus(&ps, phase.Name)
			fmt.Fprintf(&b, "%s%sPhase %s (%s strategy) [%s]\n", planIndent, branch(lastPhase), phase.Name, strategy(phase.Strategy), status)
			phaseIndent := planIndent + indent(lastPhase)
			for s, step := range phase.Steps {
				status, msg := stepStatus(&ps, phase.Name, step.Name)
				fmt.Fprintf(&b, "%s%sStep %s [%s]%s\n", phaseIndent, branch(s == len(phase.Steps)-1), step.Name, status, message(msg))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func phaseStatus(ps *kudov1beta1.PlanStatus, name string) kudov1beta1.ExecutionStatus {
	for _, p := range ps.Phases {
		if p.Name == name {
			return p.Status
		}
	}
	return kudov1beta1.ExecutionNeverRun
}

func stepStatus(ps *kudov1beta1.PlanStatus, phase, step string) (kudov1beta1.ExecutionStatus, string) {
	for _, p := range ps.Phases {
		if p.Name != phase {
			continue
		}
		for _, s := range p.Steps {
			if s.Name == step {
				return s.Status, s.Message
			}
		}
	}
	return kudov1beta1.ExecutionNeverRun, ""
}

func message(m string) string {
	if m == "" {
		return ""
	}
	return " (" + m + ")"
}

func strategy(s kudov1beta1.Ordering) kudov1beta1.Ordering {
	if s == "" {
		return kudov1beta1.Serial
	}
	return s
}

func branch(last bool) string {
	if last {
		return "└── "
	}
	return "├── "
}

func indent(last bool) string {
	if last {
		return "    "
	}
	return "│   "
}
