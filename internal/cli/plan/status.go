// Package plan is `kubectl kudo plan`: status, trigger, history, cancel and
// retry.
package plan

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/tree"
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
	if kc := i.Spec.KubeConfig; kc != nil {
		fmt.Fprintf(&b, "Plan(s) for %q in namespace %q, acting on the cluster of kubeconfig Secret %q:\n.\n", i.Name, i.Namespace, kc)
	} else {
		fmt.Fprintf(&b, "Plan(s) for %q in namespace %q:\n.\n", i.Name, i.Namespace)
	}
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
		fmt.Fprintf(&b, "    %s%s %s (%s strategy) [%s]", tree.Branch(lastPlan), "Plan", name, strategy(plan.Strategy), ps.Status)
		if ps.LastUpdatedTimestamp != nil {
			fmt.Fprintf(&b, ", last updated %s", ps.LastUpdatedTimestamp.UTC().Format(time.DateTime))
		}
		b.WriteString(action.InParentheses(ps.Message) + "\n")
		planIndent := "    " + tree.Indent(lastPlan)
		for p, phase := range plan.Phases {
			lastPhase := p == len(plan.Phases)-1
			status := phaseStatus(&ps, phase.Name)
			fmt.Fprintf(&b, "%s%sPhase %s (%s strategy) [%s]\n", planIndent, tree.Branch(lastPhase), phase.Name, strategy(phase.Strategy), status)
			phaseIndent := planIndent + tree.Indent(lastPhase)
			for s, step := range phase.Steps {
				status, msg := action.StepStatus(&ps, phase.Name, step.Name)
				lastStep := s == len(phase.Steps)-1
				fmt.Fprintf(&b, "%s%sStep %s [%s]%s\n", phaseIndent, tree.Branch(lastStep), step.Name, status, action.InParentheses(msg))
				if status == kudov1beta1.ExecutionInProgress {
					writeWaitingOn(&b, phaseIndent+tree.Indent(lastStep), stepStatus(&ps, phase.Name, step.Name))
				}
			}
		}
	}
	writeInventory(&b, i, names)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeInventory says, below KUDO's tree, what the tree does not show
// (kudo-ng): why an Instance whose plan completed is not Ready — an object
// missing, changed or unhealthy — and what the plans' last runs pruned.
func writeInventory(b *strings.Builder, i *kudov1beta1.Instance, plans []string) {
	if c := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition); c != nil && c.Status == metav1.ConditionFalse {
		fmt.Fprintf(b, "Not ready (%s): %s\n", c.Reason, c.Message)
	}
	for _, name := range plans {
		pruned := i.Status.PlanStatus[name].Pruned
		if len(pruned) == 0 {
			continue
		}
		objects := make([]string, len(pruned))
		for n, r := range pruned {
			objects[n] = r.Kind + " " + r.Name
			if r.Namespace != "" {
				objects[n] = r.Kind + " " + r.Namespace + "/" + r.Name
			}
		}
		fmt.Fprintf(b, "Plan %s pruned: %s\n", name, strings.Join(objects, ", "))
	}
}

// writeWaitingOn lists under a running step (kudo-ng) the objects it waits
// on: each with its verdict, what judged it, the values a rule read, and
// since when.
func writeWaitingOn(b *strings.Builder, at string, s *kudov1beta1.StepStatus) {
	if s == nil {
		return
	}
	for n, w := range s.WaitingOn {
		last := n == len(s.WaitingOn)-1 && s.MoreWaitingOn == 0
		fmt.Fprintf(b, "%s%s%s [%s] by %s", at, tree.Branch(last), action.ObjectName(&w), w.Status, w.Rule)
		if values := action.Observed(&w); values != "" {
			b.WriteString(": " + values)
		}
		if w.Since != nil {
			fmt.Fprintf(b, ", since %s", w.Since.UTC().Format(time.DateTime))
		}
		b.WriteString("\n")
	}
	if s.MoreWaitingOn > 0 {
		fmt.Fprintf(b, "%s%s… and %d more\n", at, tree.Branch(true), s.MoreWaitingOn)
	}
}

func stepStatus(ps *kudov1beta1.PlanStatus, phase, step string) *kudov1beta1.StepStatus {
	for at, s := range ps.Steps() {
		if at.Phase.Name == phase && s.Name == step {
			return s
		}
	}
	return nil
}

func phaseStatus(ps *kudov1beta1.PlanStatus, name string) kudov1beta1.ExecutionStatus {
	for _, p := range ps.Phases {
		if p.Name == name {
			return p.Status
		}
	}
	return kudov1beta1.ExecutionNeverRun
}

func strategy(s kudov1beta1.Ordering) kudov1beta1.Ordering {
	if s == "" {
		return kudov1beta1.Serial
	}
	return s
}
