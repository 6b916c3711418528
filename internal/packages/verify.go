package packages

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
)

// Issue is one finding of Verify: where it is and what is wrong.
type Issue struct {
	// File is operator.yaml, params.yaml or templates/<path>.
	File string
	// Field is the path in the file (plans.deploy.phases[0]), or for a
	// template the line and column, when known.
	Field   string
	Message string
}

func (i Issue) String() string {
	if i.Field == "" {
		return i.File + ": " + i.Message
	}
	return i.File + ": " + i.Field + ": " + i.Message
}

// Report lists what Verify found. A package with errors cannot be installed.
type Report struct {
	Errors   []Issue
	Warnings []Issue
}

func (r *Report) errorf(file, field, format string, args ...any) {
	r.Errors = append(r.Errors, Issue{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (r *Report) warnf(file, field, format string, args ...any) {
	r.Warnings = append(r.Warnings, Issue{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

// DefaultKubernetesVersion is the Kubernetes version templates are checked
// against when none is given: the one kudo-ng is built and tested with.
const DefaultKubernetesVersion = "1.34"

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// KubernetesVersion whose served API versions the templates must use
	// (DefaultKubernetesVersion when empty); objects of removed versions
	// that kudo-ng migrates are warnings, others errors.
	KubernetesVersion string
	// skipMetadata leaves out the rules about operator.yaml's metadata,
	// which an installed OperatorVersion does not carry.
	skipMetadata bool
}

var (
	pipeKey   = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	taskKinds = []kudov1beta1.TaskKind{
		kudov1beta1.ApplyTaskKind, kudov1beta1.DeleteTaskKind, kudov1beta1.ToggleTaskKind,
		kudov1beta1.PipeTaskKind, kudov1beta1.KudoOperatorTaskKind, kudov1beta1.DummyTaskKind,
	}
	parameterTypes = []kudov1beta1.ParameterType{
		kudov1beta1.StringValueType, kudov1beta1.IntegerValueType, kudov1beta1.NumberValueType,
		kudov1beta1.BooleanValueType, kudov1beta1.ArrayValueType, kudov1beta1.MapValueType,
	}
)

// Verify checks a package against KUDO's rules: what would fail to install
// or run is an error; what is defined but never used is a warning.
func Verify(p *Package, opts VerifyOptions) *Report {
	r := &Report{}
	v := &verifier{p: p, r: r, templateUse: map[string]bool{}, paramUse: map[string]bool{}}
	if !opts.skipMetadata {
		v.metadata()
	}
	v.parameters()
	v.tasks()
	v.plans()
	v.templates(opts)
	v.unused()
	return r
}

type verifier struct {
	p *Package
	r *Report
	// params are the parameters by name, the first of duplicates only;
	// declared has every name params.yaml declares.
	params      map[string]*Parameter
	declared    map[string]bool
	taskByName  map[string]*kudov1beta1.Task
	templateUse map[string]bool
	paramUse    map[string]bool
	// unparsed is set when a template does not parse.
	unparsed bool
}

func (v *verifier) metadata() {
	o := v.p.Operator
	if o.APIVersion != "" && o.APIVersion != APIVersion {
		v.r.errorf(OperatorFileName, "apiVersion", "%q is not supported, use %s", o.APIVersion, APIVersion)
	}
	if v.p.Params.APIVersion != "" && v.p.Params.APIVersion != APIVersion {
		v.r.errorf(ParamsFileName, "apiVersion", "%q is not supported, use %s", v.p.Params.APIVersion, APIVersion)
	}
	if o.Name == "" {
		v.r.errorf(OperatorFileName, "name", "is required")
	}
	v.semver("operatorVersion", o.OperatorVersion, true)
	v.semver("kubernetesVersion", o.KubernetesVersion, true)
	v.semver("appVersion", o.AppVersion, false)
	v.semver("kudoVersion", o.KUDOVersion, false)
}

func (v *verifier) semver(field, value string, required bool) {
	switch {
	case value == "" && required:
		v.r.errorf(OperatorFileName, field, "is required")
	case value == "":
	default:
		if _, err := semver.StrictNewVersion(strings.TrimPrefix(value, "v")); err != nil {
			if _, err := semver.NewVersion(value); err != nil {
				v.r.errorf(OperatorFileName, field, "%q is not a semantic version (MAJOR.MINOR.PATCH)", value)
			}
		}
	}
}

func (v *verifier) parameters() {
	v.params, v.declared = map[string]*Parameter{}, map[string]bool{}
	seen := map[string]int{}
	for i := range v.p.Params.Parameters {
		p := &v.p.Params.Parameters[i]
		field := fmt.Sprintf("parameters[%d]", i)
		if p.Name == "" {
			v.r.errorf(ParamsFileName, field, "name is required")
			continue
		}
		v.declared[p.Name] = true
		field += " " + p.Name
		if strings.ContainsAny(p.Name, ";,") {
			v.r.errorf(ParamsFileName, field, "name must not contain ';' or ','")
		}
		if j, dup := seen[strings.ToLower(p.Name)]; dup {
			v.r.errorf(ParamsFileName, field, "duplicates parameters[%d] %s (names are compared ignoring case)", j, v.p.Params.Parameters[j].Name)
			continue
		}
		seen[strings.ToLower(p.Name)] = i
		v.params[p.Name] = p

		if p.Type != "" && !contains(parameterTypes, p.Type) {
			v.r.errorf(ParamsFileName, field, "type %q is not one of %s", p.Type, join(parameterTypes))
			continue
		}
		if p.IsImmutable() && !p.IsRequired() && p.Default == nil {
			v.r.errorf(ParamsFileName, field, "is immutable but neither required nor defaulted: it could never be set")
		}
		v.parameterValues(p, field)
	}
}

// parameterValues checks that the default and the enum values fit the type
// and that the default is one of the enum values.
func (v *verifier) parameterValues(p *Parameter, field string) {
	apiParam := kudov1beta1.Parameter{Name: p.Name, Type: p.Type}
	var def *string
	if p.Default != nil {
		d, err := params.Wrap(p.Default, p.Type)
		if err == nil {
			err = params.Check(&apiParam, d)
		}
		if err != nil {
			v.r.errorf(ParamsFileName, field, "default: %s", strings.TrimPrefix(err.Error(), "parameter "+p.Name+": "))
			return
		}
		def = &d
	}
	if p.Enum == nil {
		return
	}
	if len(*p.Enum) == 0 {
		v.r.errorf(ParamsFileName, field, "enum is empty: no value could be set")
		return
	}
	enum := make([]string, 0, len(*p.Enum))
	for _, e := range *p.Enum {
		s, err := params.Wrap(e, p.Type)
		if err == nil {
			err = params.Check(&apiParam, s)
		}
		if err != nil {
			v.r.errorf(ParamsFileName, field, "enum: %s", strings.TrimPrefix(err.Error(), "parameter "+p.Name+": "))
			return
		}
		enum = append(enum, s)
	}
	apiParam.Enum = &enum
	if def != nil {
		if err := params.Check(&apiParam, *def); err != nil {
			v.r.errorf(ParamsFileName, field, "default %q is not one of the enum values %s", *def, strings.Join(enum, ", "))
		}
	}
}

func (v *verifier) tasks() {
	v.taskByName = map[string]*kudov1beta1.Task{}
	pipeKeys := map[string]string{}
	for i := range v.p.Operator.Tasks {
		t := &v.p.Operator.Tasks[i]
		field := fmt.Sprintf("tasks[%d]", i)
		if t.Name == "" {
			v.r.errorf(OperatorFileName, field, "name is required")
			continue
		}
		field += " " + t.Name
		if _, dup := v.taskByName[t.Name]; dup {
			v.r.errorf(OperatorFileName, field, "duplicates the task of the same name")
			continue
		}
		v.taskByName[t.Name] = t
		switch t.Kind {
		case kudov1beta1.ApplyTaskKind, kudov1beta1.DeleteTaskKind:
			v.resources(t, field)
		case kudov1beta1.ToggleTaskKind:
			v.resources(t, field)
			v.toggle(t, field)
		case kudov1beta1.PipeTaskKind:
			v.pipe(t, field, pipeKeys)
		case kudov1beta1.KudoOperatorTaskKind:
			if t.Spec.Package == "" {
				v.r.errorf(OperatorFileName, field, "spec.package is required for a KudoOperator task")
			}
			if t.Spec.ParameterFile != "" {
				v.template(t.Spec.ParameterFile, field+": spec.parameterFile")
			}
		case kudov1beta1.DummyTaskKind:
		default:
			v.r.errorf(OperatorFileName, field, "kind %q is not one of %s", t.Kind, join(taskKinds))
			for _, res := range t.Spec.Resources {
				v.templateUse[res] = true
			}
		}
	}
}

func (v *verifier) resources(t *kudov1beta1.Task, field string) {
	if len(t.Spec.Resources) == 0 {
		v.r.errorf(OperatorFileName, field, "spec.resources lists no template; the %s task needs at least one", strings.ToLower(string(t.Kind)))
	}
	for j, res := range t.Spec.Resources {
		v.template(res, fmt.Sprintf("%s: spec.resources[%d]", field, j))
	}
}

// template records a reference to a template and reports it when missing.
func (v *verifier) template(name, field string) {
	v.templateUse[name] = true
	if _, ok := v.p.Templates[name]; !ok {
		v.r.errorf(OperatorFileName, field, "template %q is not in templates/", name)
	}
}

func (v *verifier) toggle(t *kudov1beta1.Task, field string) {
	name := t.Spec.Parameter
	if name == "" {
		v.r.errorf(OperatorFileName, field, "spec.parameter is required for a Toggle task")
		return
	}
	v.paramUse[name] = true
	p, ok := v.params[name]
	if !ok {
		if !v.declared[name] {
			v.r.errorf(OperatorFileName, field, "spec.parameter %q is not defined in %s", name, ParamsFileName)
		}
		return
	}
	if p.Type != "" && p.Type != kudov1beta1.BooleanValueType && p.Type != kudov1beta1.StringValueType {
		v.r.errorf(OperatorFileName, field, "spec.parameter %q is of type %s; a Toggle needs a boolean", name, p.Type)
	}
}

func (v *verifier) pipe(t *kudov1beta1.Task, field string, keys map[string]string) {
	if t.Spec.Pod == "" {
		v.r.errorf(OperatorFileName, field, "spec.pod is required for a Pipe task")
	} else {
		v.template(t.Spec.Pod, field+": spec.pod")
	}
	if len(t.Spec.Pipe) == 0 {
		v.r.errorf(OperatorFileName, field, "spec.pipe lists no file for a Pipe task")
	}
	for j, pipe := range t.Spec.Pipe {
		pf := fmt.Sprintf("%s: spec.pipe[%d]", field, j)
		switch {
		case (pipe.File == "") == (pipe.EnvFile == ""):
			v.r.errorf(OperatorFileName, pf, "needs exactly one of file and envFile")
		case pipe.Kind != "Secret" && pipe.Kind != "ConfigMap":
			v.r.errorf(OperatorFileName, pf, "kind %q is not Secret or ConfigMap", pipe.Kind)
		case !pipeKey.MatchString(pipe.Key):
			v.r.errorf(OperatorFileName, pf, "key %q must match [a-zA-Z0-9_-]+", pipe.Key)
		case keys[pipe.Key] != "":
			v.r.errorf(OperatorFileName, pf, "key %q is already used by task %s", pipe.Key, keys[pipe.Key])
		default:
			keys[pipe.Key] = t.Name
		}
	}
}

func (v *verifier) plans() {
	plans := v.p.Operator.Plans
	if _, ok := plans[kudov1beta1.DeployPlanName]; !ok {
		v.r.errorf(OperatorFileName, "plans", "there is no deploy plan; every package needs one")
	}
	for _, name := range sortedKeys(plans) {
		plan := plans[name]
		field := "plans." + name
		v.strategy(field, plan.Strategy)
		phases := map[string]bool{}
		for i, phase := range plan.Phases {
			pf := fmt.Sprintf("%s.phases[%d]", field, i)
			v.name(pf, phase.Name, phases)
			v.strategy(pf, phase.Strategy)
			steps := map[string]bool{}
			for j, step := range phase.Steps {
				sf := fmt.Sprintf("%s.steps[%d]", pf, j)
				v.name(sf, step.Name, steps)
				for k, task := range step.Tasks {
					if _, ok := v.taskByName[task]; !ok {
						v.r.errorf(OperatorFileName, fmt.Sprintf("%s.tasks[%d]", sf, k), "task %q is not defined in tasks", task)
					}
				}
			}
		}
	}
	for i := range v.p.Params.Parameters {
		p := &v.p.Params.Parameters[i]
		if _, ok := plans[p.Trigger]; p.Trigger != "" && !ok {
			v.r.errorf(ParamsFileName, fmt.Sprintf("parameters[%d] %s", i, p.Name), "trigger %q names no plan of %s", p.Trigger, OperatorFileName)
		}
	}
}

func (v *verifier) strategy(field string, s kudov1beta1.Ordering) {
	if s != "" && s != kudov1beta1.Serial && s != kudov1beta1.Parallel {
		v.r.errorf(OperatorFileName, field, "strategy %q is not serial or parallel", s)
	}
}

func (v *verifier) name(field, name string, seen map[string]bool) {
	switch {
	case name == "":
		v.r.errorf(OperatorFileName, field, "name is required")
	case seen[name]:
		v.r.errorf(OperatorFileName, field, "name %q is used twice; the status tree needs unique names", name)
	}
	seen[name] = true
}

// templates parses every template, finds the parameters it uses, renders it
// with the defaults and, for templates of objects, parses and checks them.
func (v *verifier) templates(opts VerifyOptions) {
	o := v.p.Operator
	if o.NamespaceManifest != "" {
		v.template(o.NamespaceManifest, "namespaceManifest")
	}
	k8sVersion := opts.KubernetesVersion
	if k8sVersion == "" {
		k8sVersion = DefaultKubernetesVersion
	}
	served, err := migrate.ServedBy(k8sVersion)
	if err != nil {
		v.r.errorf("--kubernetes-version", "", "%v", err)
		return
	}
	_, ov, err := v.p.Resources("default")
	if err != nil {
		return // reported by parameters()
	}
	values, err := params.Values(ov.Spec.Parameters, nil)
	if err != nil {
		return // reported by parameters()
	}
	objectTemplates, pipes := v.objectTemplates()
	for _, name := range sortedKeys(v.p.Templates) {
		file := TemplatesDir + name
		t, err := render.Parse(name, v.p.Templates[name])
		if err != nil {
			field, msg := templateIssue(err)
			v.r.errorf(file, field, "%s", msg)
			// Which parameters it uses is unknown: do not call any unused.
			v.unparsed = true
			continue
		}
		undefined := false
		for _, ref := range usedParams(t) {
			v.paramUse[ref.name] = true
			if !v.declared[ref.name] {
				v.r.errorf(file, ref.position, "parameter %q is not defined in %s", ref.name, ParamsFileName)
				undefined = true
			}
		}
		if undefined {
			continue // rendering would only fail on the same parameter
		}
		if pipes[name] {
			v.pipePod(file, name, values)
		}
		if !objectTemplates[name] {
			continue
		}
		req := &render.Request{
			Templates: v.p.Templates, Resources: []string{name},
			Variables: render.Variables{
				Params: values, Pipes: v.pipePlaceholders(), Name: o.Name + "-instance", Namespace: "default",
				OperatorName: o.Name, OperatorVersion: ov.Name, AppVersion: o.AppVersion, PlanName: kudov1beta1.DeployPlanName,
			},
			Metadata: render.Metadata{InstanceName: o.Name + "-instance", Namespace: "default", OperatorName: o.Name, OperatorVersion: ov.Name},
			Served:   served,
			Scope:    render.BuiltinScope,
		}
		result, err := render.Resources(req)
		if err != nil {
			field, msg := templateIssue(err)
			v.r.errorf(file, field, "%s", strings.TrimPrefix(msg, name+": "))
			continue
		}
		for _, m := range result.Migrations {
			v.r.warnf(file, "", "%s, which Kubernetes %s no longer serves: kudo-ng migrates it when it applies it", m.Migration, k8sVersion)
		}
		for _, obj := range result.Objects {
			if obj.GetKind() == "Namespace" && obj.GroupVersionKind().Group == "" && name != o.NamespaceManifest {
				v.r.errorf(file, "", "Namespace %q: a Namespace may only be created by the namespaceManifest template", obj.GetName())
			}
		}
	}
}

// objectTemplates are the templates rendered into objects and applied: those
// of Apply, Delete and Toggle tasks, and the namespace manifest; pipePods are
// the pod templates of Pipe tasks, which the task names and runs itself.
func (v *verifier) objectTemplates() (out, pipePods map[string]bool) {
	out, pipePods = map[string]bool{}, map[string]bool{}
	if ns := v.p.Operator.NamespaceManifest; ns != "" {
		out[ns] = true
	}
	for _, t := range v.p.Operator.Tasks {
		switch t.Kind {
		case kudov1beta1.ApplyTaskKind, kudov1beta1.DeleteTaskKind, kudov1beta1.ToggleTaskKind:
			for _, r := range t.Spec.Resources {
				out[r] = true
			}
		case kudov1beta1.PipeTaskKind:
			pipePods[t.Spec.Pod] = true
		}
	}
	return out, pipePods
}

// pipePod checks a Pipe task's pod as KUDO requires: one Pod whose single
// init container writes the files, no containers, restartPolicy empty or
// OnFailure.
func (v *verifier) pipePod(file, name string, values map[string]any) {
	text, err := render.Template(name, v.p.Templates[name], &render.Variables{Params: values, Pipes: v.pipePlaceholders()})
	var objs []*unstructured.Unstructured
	if err == nil {
		objs, err = render.Objects(name, text)
	}
	if err != nil {
		field, msg := templateIssue(err)
		v.r.errorf(file, field, "%s", strings.TrimPrefix(msg, name+": "))
		return
	}
	if len(objs) != 1 || objs[0].GetKind() != "Pod" {
		v.r.errorf(file, "", "a Pipe task's pod template must render exactly one Pod")
		return
	}
	pod := objs[0].Object
	initContainers, _, _ := unstructured.NestedSlice(pod, "spec", "initContainers")
	containers, _, _ := unstructured.NestedSlice(pod, "spec", "containers")
	restartPolicy, _, _ := unstructured.NestedString(pod, "spec", "restartPolicy")
	switch {
	case len(initContainers) != 1:
		v.r.errorf(file, "spec.initContainers", "a Pipe pod needs exactly one init container, which writes the files")
	case len(containers) != 0:
		v.r.errorf(file, "spec.containers", "a Pipe pod must have no containers: kudo-ng adds the one that reads the files")
	case restartPolicy != "" && restartPolicy != "OnFailure":
		v.r.errorf(file, "spec.restartPolicy", "%q is not allowed in a Pipe pod: leave it empty or use OnFailure", restartPolicy)
	}
}

func (v *verifier) pipePlaceholders() map[string]string {
	pipes := map[string]string{}
	for _, t := range v.p.Operator.Tasks {
		for _, pipe := range t.Spec.Pipe {
			pipes[pipe.Key] = "pipe-" + strings.ToLower(pipe.Key)
		}
	}
	return pipes
}

func (v *verifier) unused() {
	used := map[string]bool{}
	for _, plan := range v.p.Operator.Plans {
		for _, phase := range plan.Phases {
			for _, step := range phase.Steps {
				for _, task := range step.Tasks {
					used[task] = true
				}
			}
		}
	}
	for i, t := range v.p.Operator.Tasks {
		if t.Name != "" && !used[t.Name] {
			v.r.warnf(OperatorFileName, fmt.Sprintf("tasks[%d] %s", i, t.Name), "no plan uses this task")
		}
	}
	for i, p := range v.p.Params.Parameters {
		if p.Name != "" && !v.paramUse[p.Name] && !v.unparsed {
			v.r.warnf(ParamsFileName, fmt.Sprintf("parameters[%d] %s", i, p.Name), "no template uses this parameter")
		}
	}
	for _, name := range sortedKeys(v.p.Templates) {
		if !v.templateUse[name] {
			v.r.warnf(TemplatesDir+name, "", "no task uses this template")
		}
	}
}

type paramRef struct{ name, position string }

// usedParams lists the parameters a template refers to as .Params.X,
// $.Params.X or index .Params "X", with the line and column of the first use
// of each.
func usedParams(t *template.Template) []paramRef {
	seen := map[string]bool{}
	var refs []paramRef
	for _, tmpl := range t.Templates() {
		if tmpl.Tree == nil || tmpl.Root == nil {
			continue
		}
		walk(tmpl.Root, func(n parse.Node) {
			var ident []string
			switch n := n.(type) {
			case *parse.FieldNode:
				ident = n.Ident
			case *parse.VariableNode:
				if len(n.Ident) > 0 && n.Ident[0] == "$" {
					ident = n.Ident[1:]
				}
			case *parse.CommandNode:
				ident = indexedParam(n)
			}
			if len(ident) < 2 || ident[0] != "Params" || seen[ident[1]] {
				return
			}
			seen[ident[1]] = true
			location, _ := tmpl.ErrorContext(n)
			refs = append(refs, paramRef{name: ident[1], position: position(location)})
		})
	}
	return refs
}

// indexedParam reads `index .Params "X"` as the identifier Params.X.
func indexedParam(n *parse.CommandNode) []string {
	if len(n.Args) < 3 {
		return nil
	}
	fn, ok := n.Args[0].(*parse.IdentifierNode)
	if !ok || fn.Ident != "index" {
		return nil
	}
	var collection []string
	switch m := n.Args[1].(type) {
	case *parse.FieldNode:
		collection = m.Ident
	case *parse.VariableNode:
		if len(m.Ident) > 0 && m.Ident[0] == "$" {
			collection = m.Ident[1:]
		}
	}
	key, ok := n.Args[2].(*parse.StringNode)
	if len(collection) != 1 || collection[0] != "Params" || !ok {
		return nil
	}
	return []string{"Params", key.Text}
}

// walk calls visit on every node of a template's parse tree.
func walk(node parse.Node, visit func(parse.Node)) {
	if node == nil {
		return
	}
	visit(node)
	switch n := node.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, visit)
		}
	case *parse.ActionNode:
		walk(n.Pipe, visit)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, d := range n.Decl {
			walk(d, visit)
		}
		for _, c := range n.Cmds {
			walk(c, visit)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walk(a, visit)
		}
	case *parse.ChainNode:
		walk(n.Node, visit)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, visit)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, visit)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, visit)
	case *parse.TemplateNode:
		walk(n.Pipe, visit)
	}
}

func walkBranch(b *parse.BranchNode, visit func(parse.Node)) {
	walk(b.Pipe, visit)
	walk(b.List, visit)
	if b.ElseList != nil {
		walk(b.ElseList, visit)
	}
}

var templateLocation = regexp.MustCompile(`^template: [^:]+:(\d+)(?::(\d+))?: (.*)$`)

// templateIssue turns a text/template error into the line of the template
// and what went wrong.
func templateIssue(err error) (field, message string) {
	m := templateLocation.FindStringSubmatch(err.Error())
	if m == nil {
		return "", err.Error()
	}
	return position(m[1] + ":" + m[2]), m[3]
}

// position turns "name:12:5" or "12:5" or "12:" into "line 12, column 5".
func position(location string) string {
	parts := strings.Split(location, ":")
	if len(parts) >= 3 {
		parts = parts[len(parts)-2:]
	}
	if len(parts) == 2 && parts[1] != "" {
		return "line " + parts[0] + ", column " + parts[1]
	}
	return "line " + parts[0]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func join[T ~string](list []T) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
