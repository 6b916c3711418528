package packagecmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/prompt"
	"github.com/kudo-ng/kudo/internal/packages"
)

// adder adds to the package in dir what its flags say or, interactively,
// what the author answers to KUDO's questions.
type adder struct {
	dir         string
	interactive bool
	ask         *prompt.Prompter
	out         genericiooptions.IOStreams
	// p is the package as it is before the change.
	p *packages.Package
}

// newAddCmd is KUDO's package add and its generators.
func newAddCmd(streams genericiooptions.IOStreams) *cobra.Command {
	a := &adder{out: streams}
	cmd := &cobra.Command{
		Use:   "add maintainer|parameter|plan|task",
		Short: "Add a maintainer, parameter, plan or task to a package, from flags or by answering questions",
		Long: `Add a maintainer, parameter, plan or task to the package in the current directory (operator.yaml
here, or in the one subdirectory that has one) or in --directory. The files keep their comments and
order. Without the flags that give the answers, or with -i, the questions KUDO asked are asked.`,
	}
	cmd.PersistentFlags().StringVarP(&a.dir, "directory", "d", "",
		"The package's directory (default: here if operator.yaml is, else the one */operator.yaml)")
	cmd.PersistentFlags().BoolVarP(&a.interactive, "interactive", "i", false, "Ask for every answer the flags do not give")
	cmd.AddCommand(a.maintainerCmd(), a.parameterCmd(), a.taskCmd(), a.planCmd())
	return cmd
}

// run finds and reads the package, then adds to it; interactive when -i is
// given or none of the answers' flags is.
func (a *adder) run(cmd *cobra.Command, answers []string, add func() error) error {
	dir, err := packageDir(a.dir)
	if err != nil {
		return err
	}
	if a.p, err = packages.Read(dir); err != nil {
		return err
	}
	a.dir = dir
	given := slices.ContainsFunc(answers, func(name string) bool { return cmd.Flags().Changed(name) })
	a.interactive = a.interactive || !given
	a.ask = prompt.New(a.out.In, a.out.Out)
	return add()
}

// packageDir is dir, or KUDO's choice: here if operator.yaml is, else the
// one subdirectory that has one.
func packageDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if _, err := os.Stat(packages.OperatorFileName); err == nil {
		return ".", nil
	}
	found, err := filepath.Glob(filepath.Join("*", packages.OperatorFileName))
	if err != nil {
		return "", err
	}
	switch len(found) {
	case 0:
		return "", errors.New("no operator folder discovered: run it where operator.yaml is, or pass --directory")
	case 1:
		return filepath.Dir(found[0]), nil
	}
	return "", errors.New("multiple operator folders discovered: pass --directory")
}

// edit changes one of the package's files and says so.
func (a *adder) edit(file, what string, change func(top *yaml.Node) error) error {
	if err := packages.EditFile(filepath.Join(a.dir, file), change); err != nil {
		return err
	}
	_, err := fmt.Fprintf(a.out.Out, "%s added to %s\n", what, filepath.Join(a.dir, file))
	return err
}

func (a *adder) maintainerCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "maintainer [NAME EMAIL]",
		Short:   "Add a maintainer to operator.yaml",
		Example: "  kubectl kudo package add maintainer \"Ada Lovelace\" ada@example.com",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 && len(args) != 2 {
				return errors.New("expecting two arguments - name and email address")
			}
			return a.run(cmd, nil, func() error {
				m := kudov1beta1.Maintainer{}
				if len(args) == 2 {
					m.Name, m.Email = args[0], args[1]
				} else if err := a.askMaintainer(&m); err != nil {
					return err
				}
				return a.edit(packages.OperatorFileName, "maintainer "+m.Name, func(top *yaml.Node) error {
					return packages.Append(top, "maintainers", m)
				})
			})
		},
	}
}

var emailAddress = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)

func (a *adder) askMaintainer(m *kudov1beta1.Maintainer) error {
	var err error
	if m.Name, err = a.ask.Text("Maintainer Name", "", atLeast(1, "maintainer name must be > than 1 character")); err != nil {
		return err
	}
	m.Email, err = a.ask.Text("Maintainer Email", "", func(s string) error {
		if !emailAddress.MatchString(s) {
			return errors.New("maintainer email must be valid email address")
		}
		return nil
	})
	return err
}

func atLeast(n int, message string) func(string) error {
	return func(s string) error {
		if len(s) < n {
			return errors.New(message)
		}
		return nil
	}
}

func (a *adder) parameterCmd() *cobra.Command {
	var p packages.Parameter
	var required bool
	var def string
	cmd := &cobra.Command{
		Use:     "parameter",
		Short:   "Add a parameter to params.yaml",
		Example: "  kubectl kudo package add parameter --name REPLICAS --default 3 --description \"How many replicas run.\" --trigger update",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.run(cmd, []string{"name", "default", "display-name", "description", "required", "trigger"}, func() error {
				if a.interactive {
					if err := a.askParameter(&p, &def, &required); err != nil {
						return err
					}
				}
				if err := a.uniqueParameter(p.Name); err != nil {
					return err
				}
				if def != "" {
					p.Default = def
				}
				if required {
					p.Required = ptr.To(true)
				}
				if p.Trigger != "" {
					if _, ok := a.p.Operator.Plans[p.Trigger]; !ok {
						return fmt.Errorf("trigger %q names no plan of %s: add it with kubectl kudo package add plan", p.Trigger, packages.OperatorFileName)
					}
				}
				return a.edit(packages.ParamsFileName, "parameter "+p.Name, func(top *yaml.Node) error {
					return packages.Append(top, "parameters", p)
				})
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.Name, "name", "", "Parameter Name")
	f.StringVar(&def, "default", "", "Default Value")
	f.StringVar(&p.DisplayName, "display-name", "", "Display Name")
	f.StringVar(&p.Description, "description", "", "Description")
	f.BoolVar(&required, "required", false, "Required: the Instance must give a value when there is no default")
	f.StringVar(&p.Trigger, "trigger", "", "The plan a change of the parameter runs")
	return cmd
}

func (a *adder) uniqueParameter(name string) error {
	if name == "" {
		return errors.New("parameter name must be > than 1 character (--name)")
	}
	for _, p := range a.p.Params.Parameters {
		if p.Name == name {
			return errors.New("parameter name must be unique")
		}
	}
	return nil
}

func (a *adder) askParameter(p *packages.Parameter, def *string, required *bool) error {
	var err error
	if p.Name, err = a.ask.Text("Parameter Name", p.Name, a.uniqueParameter); err != nil {
		return err
	}
	if *def, err = a.ask.Text("Default Value", *def, nil); err != nil {
		return err
	}
	if p.DisplayName, err = a.ask.Text("Display Name", p.DisplayName, nil); err != nil {
		return err
	}
	if p.Description, err = a.ask.Text("Description", p.Description, nil); err != nil {
		return err
	}
	answer, err := a.ask.Select("Required", []string{"false", "true"}, false)
	if err != nil {
		return err
	}
	*required = answer == "true"
	trigger, err := a.ask.Confirm("Add Trigger Plan (defaults to deploy)")
	if err != nil || !trigger {
		return err
	}
	plans := make([]string, 0, len(a.p.Operator.Plans))
	for name := range a.p.Operator.Plans {
		plans = append(plans, name)
	}
	sort.Strings(plans)
	if len(plans) == 0 {
		p.Trigger, err = a.ask.Text("Trigger Plan", kudov1beta1.DeployPlanName, nil)
		return err
	}
	p.Trigger, err = a.ask.Select("Trigger Plan", plans, false)
	return err
}

// taskKinds are the kinds a task may be added as.
var taskKinds = []string{
	string(kudov1beta1.ApplyTaskKind), string(kudov1beta1.DeleteTaskKind), string(kudov1beta1.PipeTaskKind),
	string(kudov1beta1.ToggleTaskKind), string(kudov1beta1.DummyTaskKind),
}

func (a *adder) taskCmd() *cobra.Command {
	t := &kudov1beta1.Task{}
	var kind string
	var pipes []string
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Add a task to operator.yaml, and the templates it names that are missing",
		Example: `  kubectl kudo package add task --name app --kind Apply --resource deployment.yaml --resource service.yaml
  kubectl kudo package add task --name gen --kind Pipe --pod gen-pod.yaml --pipe /tmp/out:Secret:credentials`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.run(cmd, []string{"name", "kind", "resource", "parameter", "pod", "pipe"}, func() error {
				t.Kind = kudov1beta1.TaskKind(kind)
				if err := pipeSpecs(t, pipes); err != nil {
					return err
				}
				if a.interactive {
					if err := a.askTask(t); err != nil {
						return err
					}
				}
				return a.addTask(t)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&t.Name, "name", "", "Task Name")
	f.StringVar(&kind, "kind", string(kudov1beta1.ApplyTaskKind), "Task Kind: "+strings.Join(taskKinds, ", "))
	f.StringArrayVar(&t.Spec.Resources, "resource", nil, "A template the task applies, deletes or toggles (.yaml is added)")
	f.StringVar(&t.Spec.Parameter, "parameter", "", "The boolean parameter of a Toggle task")
	f.StringVar(&t.Spec.Pod, "pod", "", "The pod template of a Pipe task (.yaml is added)")
	f.StringArrayVar(&pipes, "pipe", nil, "A file of a Pipe task: FILE:KIND:KEY, KIND ConfigMap or Secret")
	return cmd
}

// pipeSpecs reads --pipe FILE:KIND:KEY.
func pipeSpecs(t *kudov1beta1.Task, pipes []string) error {
	for _, p := range pipes {
		parts := strings.Split(p, ":")
		if len(parts) != 3 || parts[1] != "ConfigMap" && parts[1] != "Secret" {
			return fmt.Errorf("--pipe %q: want FILE:KIND:KEY, KIND ConfigMap or Secret", p)
		}
		t.Spec.Pipe = append(t.Spec.Pipe, kudov1beta1.PipeSpec{File: parts[0], Kind: parts[1], Key: parts[2]})
	}
	return nil
}

func (a *adder) uniqueTask(name string) error {
	if name == "" {
		return errors.New("task name must be > than 1 character (--name)")
	}
	for _, t := range a.p.Operator.Tasks {
		if t.Name == name {
			return errors.New("task name must be unique")
		}
	}
	return nil
}

func (a *adder) askTask(t *kudov1beta1.Task) error {
	var err error
	if t.Name, err = a.ask.Text("Task Name", t.Name, a.uniqueTask); err != nil {
		return err
	}
	return a.askTaskSpec(t)
}

// askTaskSpec asks what KUDO asked of a task of each kind, and a Toggle's
// parameter and templates, which KUDO left for the author to write.
func (a *adder) askTaskSpec(t *kudov1beta1.Task) error {
	kind, err := a.ask.Select("Task Kind", taskKinds, false)
	if err != nil {
		return err
	}
	t.Kind = kudov1beta1.TaskKind(kind)
	switch t.Kind {
	case kudov1beta1.ToggleTaskKind:
		if t.Spec.Parameter, err = a.ask.Text("Toggle Parameter", t.Spec.Parameter, atLeast(1, "a Toggle task needs its parameter")); err != nil {
			return err
		}
		fallthrough
	case kudov1beta1.ApplyTaskKind, kudov1beta1.DeleteTaskKind:
		return a.repeat("Add another Resource", func() error {
			resource, err := a.ask.Text("Task Resource", "", atLeast(1, "a resource needs a name"))
			t.Spec.Resources = append(t.Spec.Resources, resource)
			return err
		})
	case kudov1beta1.PipeTaskKind:
		if t.Spec.Pod, err = a.ask.Text("Pipe Pod File", t.Spec.Pod, atLeast(1, "a Pipe task needs its pod")); err != nil {
			return err
		}
		return a.repeat("Add another pipe", func() error {
			var p kudov1beta1.PipeSpec
			var err error
			if p.File, err = a.ask.Text("Pipe File (internal to pod)", "", atLeast(1, "a pipe needs its file")); err != nil {
				return err
			}
			if p.Kind, err = a.ask.Select("Pipe Kind", []string{"ConfigMap", "Secret"}, false); err != nil {
				return err
			}
			p.Key, err = a.ask.Text("Pipe Kind Key", "", atLeast(1, "a pipe needs its key"))
			t.Spec.Pipe = append(t.Spec.Pipe, p)
			return err
		})
	}
	return nil
}

// repeat does once, then again while the author says so.
func (a *adder) repeat(another string, once func() error) error {
	for {
		if err := once(); err != nil {
			return err
		}
		again, err := a.ask.Confirm(another)
		if err != nil || !again {
			return err
		}
	}
}

// addTask writes the task, and the templates it names that are missing, as
// KUDO did: each an object of the name, for the author to fill.
func (a *adder) addTask(t *kudov1beta1.Task) error {
	if err := a.uniqueTask(t.Name); err != nil {
		return err
	}
	if !slices.Contains(taskKinds, string(t.Kind)) {
		return fmt.Errorf("task kind %q is not one of %s", t.Kind, strings.Join(taskKinds, ", "))
	}
	for k := range t.Spec.Resources {
		t.Spec.Resources[k] = withYAMLExtension(t.Spec.Resources[k])
	}
	templates := t.Spec.Resources
	if t.Spec.Pod != "" {
		t.Spec.Pod = withYAMLExtension(t.Spec.Pod)
		templates = []string{t.Spec.Pod}
	}
	for _, name := range templates {
		if err := a.placeholder(name, t); err != nil {
			return err
		}
	}
	if err := a.edit(packages.OperatorFileName, "task "+t.Name, func(top *yaml.Node) error {
		return packages.Append(top, "tasks", t)
	}); err != nil {
		return err
	}
	a.p.Operator.Tasks = append(a.p.Operator.Tasks, *t)
	return nil
}

func withYAMLExtension(name string) string {
	if strings.Contains(name, ".") {
		return name
	}
	return name + ".yaml"
}

// placeholder writes a missing template for the author to fill: a
// ConfigMap named after the Instance and the file, or the pod of a Pipe
// task, whose init container writes its files.
func (a *adder) placeholder(name string, t *kudov1beta1.Task) error {
	path := filepath.Join(a.dir, packages.TemplatesDir, name)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	base := strings.TrimSuffix(name, filepath.Ext(name))
	content := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-%s\ndata: {}\n", base)
	if t.Kind == kudov1beta1.PipeTaskKind {
		content = pipePod(t.Spec.Pipe)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return err
	}
	_, err := fmt.Fprintf(a.out.Out, "template %s written\n", path)
	return err
}

// pipePod is a Pipe task's pod whose one init container writes the files,
// each directory of them a volume.
func pipePod(pipes []kudov1beta1.PipeSpec) string {
	var files, volumes, mounts []string
	dirs := map[string]bool{}
	for _, p := range pipes {
		files = append(files, p.File)
		dir := filepath.Dir(p.File)
		if dirs[dir] {
			continue
		}
		dirs[dir] = true
		volume := fmt.Sprintf("files-%d", len(dirs))
		volumes = append(volumes, fmt.Sprintf("    - name: %s\n      emptyDir: {}\n", volume))
		mounts = append(mounts, fmt.Sprintf("        - name: %s\n          mountPath: %s\n", volume, dir))
	}
	return "apiVersion: v1\nkind: Pod\nspec:\n  volumes:\n" + strings.Join(volumes, "") +
		"  initContainers:\n    - name: write\n      image: busybox:1.37\n" +
		fmt.Sprintf("      command: [sh, -c, %q]\n", "touch "+strings.Join(files, " ")) +
		"      volumeMounts:\n" + strings.Join(mounts, "")
}
