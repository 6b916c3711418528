package packagecmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
)

var strategies = []string{string(kudov1beta1.Serial), string(kudov1beta1.Parallel)}

func (a *adder) planCmd() *cobra.Command {
	var name, strategy, phaseStrategy string
	var steps []string
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Add a plan to operator.yaml",
		Example: `  kubectl kudo package add plan --name backup --step main/dump=dump,upload
  kubectl kudo package add plan --name deploy --phase-strategy parallel --step infra/services=svc --step app/server=app`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.run(cmd, []string{"name", "strategy", "phase-strategy", "step"}, func() error {
				plan := kudov1beta1.Plan{Strategy: kudov1beta1.Ordering(strategy)}
				if a.interactive {
					var err error
					if name, plan, err = a.askPlan(); err != nil {
						return err
					}
				} else {
					var err error
					if plan.Phases, err = phasesOf(steps, kudov1beta1.Ordering(phaseStrategy)); err != nil {
						return err
					}
				}
				return a.addPlan(name, plan)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "Plan Name")
	f.StringVar(&strategy, "strategy", string(kudov1beta1.Serial), "How the plan runs its phases: serial or parallel")
	f.StringVar(&phaseStrategy, "phase-strategy", string(kudov1beta1.Serial), "How each phase runs its steps: serial or parallel")
	f.StringArrayVar(&steps, "step", nil, "A step: PHASE/STEP=TASK[,TASK...], in order; phases in the order they first appear")
	return cmd
}

// phasesOf reads --step PHASE/STEP=TASKS.
func phasesOf(steps []string, strategy kudov1beta1.Ordering) ([]kudov1beta1.Phase, error) {
	var phases []kudov1beta1.Phase
	for _, s := range steps {
		where, tasks, ok := strings.Cut(s, "=")
		phase, step, ok2 := strings.Cut(where, "/")
		if !ok || !ok2 || phase == "" || step == "" || tasks == "" {
			return nil, fmt.Errorf("--step %q: want PHASE/STEP=TASK[,TASK...]", s)
		}
		at := slices.IndexFunc(phases, func(p kudov1beta1.Phase) bool { return p.Name == phase })
		if at < 0 {
			phases = append(phases, kudov1beta1.Phase{Name: phase, Strategy: strategy})
			at = len(phases) - 1
		}
		phases[at].Steps = append(phases[at].Steps, kudov1beta1.Step{Name: step, Tasks: strings.Split(tasks, ",")})
	}
	return phases, nil
}

func (a *adder) uniquePlan(name string) error {
	if name == "" {
		return errors.New("plan name must be > than 1 character (--name)")
	}
	if _, ok := a.p.Operator.Plans[name]; ok {
		return errors.New("plan name must be unique")
	}
	return nil
}

// addPlan writes the plan once every task it runs is defined, and its
// strategies are KUDO's.
func (a *adder) addPlan(name string, plan kudov1beta1.Plan) error {
	if err := a.uniquePlan(name); err != nil {
		return err
	}
	if len(plan.Phases) == 0 {
		return errors.New("a plan needs a phase with a step: pass --step PHASE/STEP=TASK")
	}
	defined := map[string]bool{}
	for _, t := range a.p.Operator.Tasks {
		defined[t.Name] = true
	}
	for _, s := range append([]kudov1beta1.Ordering{plan.Strategy}, phaseStrategies(plan)...) {
		if !slices.Contains(strategies, string(s)) {
			return fmt.Errorf("strategy %q is not serial or parallel", s)
		}
	}
	for _, phase := range plan.Phases {
		for _, step := range phase.Steps {
			for _, task := range step.Tasks {
				if !defined[task] {
					return fmt.Errorf("task %s of step %s/%s is not defined: add it with kubectl kudo package add task", task, phase.Name, step.Name)
				}
			}
		}
	}
	return a.edit(packages.OperatorFileName, "plan "+name, func(top *yaml.Node) error {
		return packages.Set(top, "plans", name, plan)
	})
}

func phaseStrategies(plan kudov1beta1.Plan) []kudov1beta1.Ordering {
	out := make([]kudov1beta1.Ordering, 0, len(plan.Phases))
	for _, p := range plan.Phases {
		out = append(out, p.Strategy)
	}
	return out
}

// askPlan asks KUDO's questions of a plan: its phases, their steps, the
// steps' tasks, a new task's kind and templates then and there.
func (a *adder) askPlan() (string, kudov1beta1.Plan, error) {
	var plan kudov1beta1.Plan
	first := ""
	if len(a.p.Operator.Plans) == 0 {
		first = kudov1beta1.DeployPlanName
	}
	name, err := a.ask.Text("Plan Name", first, a.uniquePlan)
	if err != nil {
		return "", plan, err
	}
	strategy, err := a.ask.Select("Plan strategy for phase", strategies, false)
	if err != nil {
		return "", plan, err
	}
	plan.Strategy = kudov1beta1.Ordering(strategy)
	err = a.repeat("Add another Phase", func() error {
		phase, err := a.askPhase(&plan, first)
		plan.Phases = append(plan.Phases, phase)
		return err
	})
	return name, plan, err
}

func (a *adder) askPhase(plan *kudov1beta1.Plan, first string) (kudov1beta1.Phase, error) {
	var phase kudov1beta1.Phase
	if len(plan.Phases) > 0 {
		first = ""
	}
	var err error
	phase.Name, err = a.ask.Text(fmt.Sprintf("Phase %d name", len(plan.Phases)+1), first, func(s string) error {
		if s == "" {
			return errors.New("phase name must be > than 1 character")
		}
		if slices.ContainsFunc(plan.Phases, func(p kudov1beta1.Phase) bool { return p.Name == s }) {
			return errors.New("phase name must be unique in plan")
		}
		return nil
	})
	if err != nil {
		return phase, err
	}
	strategy, err := a.ask.Select("Phase strategy for steps", strategies, false)
	if err != nil {
		return phase, err
	}
	phase.Strategy = kudov1beta1.Ordering(strategy)
	err = a.repeat("Add another Step", func() error {
		step, err := a.askStep(&phase, first)
		phase.Steps = append(phase.Steps, step)
		return err
	})
	return phase, err
}

func (a *adder) askStep(phase *kudov1beta1.Phase, first string) (kudov1beta1.Step, error) {
	var step kudov1beta1.Step
	if len(phase.Steps) > 0 {
		first = ""
	}
	var err error
	step.Name, err = a.ask.Text(fmt.Sprintf("Step %d name", len(phase.Steps)+1), first, func(s string) error {
		if s == "" {
			return errors.New("step name must be > than 1 character")
		}
		if slices.ContainsFunc(phase.Steps, func(st kudov1beta1.Step) bool { return st.Name == s }) {
			return errors.New("step name must be unique in a Phase")
		}
		return nil
	})
	if err != nil {
		return step, err
	}
	err = a.repeat("Add another Task", func() error {
		task, err := a.askStepTask(&step, first)
		if err == nil {
			step.Tasks = append(step.Tasks, task)
		}
		return err
	})
	return step, err
}

// askStepTask asks for a task of the step: one defined, or a new one,
// written when the author says so.
func (a *adder) askStepTask(step *kudov1beta1.Step, first string) (string, error) {
	label := fmt.Sprintf("Task Name %d for Step %q", len(step.Tasks)+1, step.Name)
	var choices []string
	for _, t := range a.p.Operator.Tasks {
		if !slices.Contains(step.Tasks, t.Name) {
			choices = append(choices, t.Name)
		}
	}
	var name string
	var err error
	if len(choices) == 0 {
		name, err = a.ask.Text(label, first, atLeast(1, "task name must be > than 1 character"))
	} else {
		name, err = a.ask.Select(label, choices, true)
	}
	if err != nil || slices.ContainsFunc(a.p.Operator.Tasks, func(t kudov1beta1.Task) bool { return t.Name == name }) {
		return name, err
	}
	create, err := a.ask.Confirm("Create Task Now")
	if err != nil {
		return "", err
	}
	if !create {
		return "", fmt.Errorf("task %s is not defined: add it with kubectl kudo package add task, or create it now", name)
	}
	t := &kudov1beta1.Task{Name: name}
	if err := a.askTaskSpec(t); err != nil {
		return "", err
	}
	return name, a.addTask(t)
}
