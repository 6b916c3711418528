package packages

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fieldpath "k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
	"github.com/kudo-ng/kudo/internal/task"
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
	// install makes the rules of good packaging warnings.
	install bool
}

// errorf records what cannot install or run.
func (r *Report) errorf(file, field, format string, args ...any) {
	r.Errors = append(r.Errors, Issue{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (r *Report) warnf(file, field, format string, args ...any) {
	r.Warnings = append(r.Warnings, Issue{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

// rulef records a rule of good packaging that a package breaks, though it
// installs and runs: an error for package verify, a warning for install and
// upgrade, which KUDO did not verify.
func (r *Report) rulef(file, field, format string, args ...any) {
	if r.install {
		r.warnf(file, field, format, args...)
		return
	}
	r.errorf(file, field, format, args...)
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
	// SkipDeployPlan leaves out the rule that a package has a deploy plan,
	// which only installing needs: KUDO upgrades to a package with only an
	// upgrade or update plan.
	SkipDeployPlan bool
	// Install verifies a package about to be installed or upgraded to:
	// only what cannot install or run is an error, the rules of good
	// packaging are warnings. KUDO verified only in package verify, and its
	// install and upgrade took packages that break those rules.
	Install bool
	// Values are the parameters' values an Instance sets (its
	// spec.parameters), which templates render with instead of the
	// defaults. With Install, a template that fails to render, using a
	// parameter that needs a value and has none here (taken from a Secret,
	// or passed by a parent's KudoOperator task), is a warning: the
	// Instance gives it one.
	Values map[string]string
	// ParamChecks are the rules of package verify --param-checks.
	ParamChecks ParamChecks
	// skipMetadata leaves out the rules about operator.yaml's metadata,
	// which an installed OperatorVersion does not carry.
	skipMetadata bool
}

var parameterTypes = []kudov1beta1.ParameterType{
	kudov1beta1.StringValueType, kudov1beta1.IntegerValueType, kudov1beta1.NumberValueType,
	kudov1beta1.BooleanValueType, kudov1beta1.ArrayValueType, kudov1beta1.MapValueType,
}

// Verify checks a package against KUDO's rules: what would fail to install
// or run is an error, and so, unless opts.Install, are the rules of good
// packaging; what is defined but never used is a warning.
func Verify(p *Package, opts VerifyOptions) *Report {
	r := &Report{install: opts.Install}
	v := &verifier{p: p, r: r, templateUse: map[string]bool{}, paramUse: map[string]bool{},
		rendered: map[string][]*unstructured.Unstructured{}}
	if !opts.skipMetadata {
		v.metadata()
	}
	v.parameters()
	v.tasks()
	v.plans(!opts.SkipDeployPlan)
	v.templates(opts)
	v.unused()
	v.paramChecks(opts.ParamChecks)
	return r
}

type verifier struct {
	p *Package
	r *Report
	// params are the parameters by name, the first of duplicates only;
	// declared has every name params.yaml declares.
	params      map[string]*Parameter
	declared    map[string]bool
	templateUse map[string]bool
	paramUse    map[string]bool
	// unparsed is set when a template does not parse.
	unparsed bool
	// rendered are the objects the object templates render, by template.
	rendered map[string][]*unstructured.Unstructured
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
	// The OperatorVersion is named after the operatorVersion. The versions'
	// form is a packaging rule: upgrade says itself when it cannot compare.
	if o.OperatorVersion == "" {
		v.r.errorf(OperatorFileName, "operatorVersion", "is required")
	}
	if o.KubernetesVersion == "" {
		v.r.rulef(OperatorFileName, "kubernetesVersion", "is required")
	}
	v.semver("operatorVersion", o.OperatorVersion)
	v.semver("kubernetesVersion", o.KubernetesVersion)
	v.semver("appVersion", o.AppVersion)
	v.semver("kudoVersion", o.KUDOVersion)
}

func (v *verifier) semver(field, value string) {
	if value == "" {
		return
	}
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(value, "v")); err != nil {
		if _, err := semver.NewVersion(value); err != nil {
			v.r.rulef(OperatorFileName, field, "%q is not a semantic version (MAJOR.MINOR.PATCH)", value)
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
			v.r.rulef(ParamsFileName, field, "name must not contain ';' or ','")
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
			v.r.rulef(ParamsFileName, field, "is immutable but neither required nor defaulted: it could never be set")
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
		v.r.rulef(ParamsFileName, field, "enum is empty: no value could be set")
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
			v.r.rulef(ParamsFileName, field, "default %q is not one of the enum values %s", *def, strings.Join(enum, ", "))
		}
	}
}

// tasks checks each task's spec with its kind's rules, and the pipe keys,
// which must be unique across tasks.
func (v *verifier) tasks() {
	seen := map[string]bool{}
	defs := &task.Definitions{Templates: v.p.Templates, Parameters: map[string]kudov1beta1.ParameterType{}}
	for name, p := range v.params {
		defs.Parameters[name] = p.Type
	}
	pipeKeys := map[string]string{}
	for i := range v.p.Operator.Tasks {
		t := &v.p.Operator.Tasks[i]
		at := fmt.Sprintf("tasks[%d]", i)
		if t.Name == "" {
			v.r.errorf(OperatorFileName, at, "name is required")
			continue
		}
		at += " " + t.Name
		if seen[t.Name] {
			v.r.errorf(OperatorFileName, at, "duplicates the task of the same name")
			continue
		}
		seen[t.Name] = true
		kind, err := task.For(t.Kind)
		if err != nil {
			v.r.errorf(OperatorFileName, at, "%v", err)
			for _, res := range t.Spec.Resources {
				v.templateUse[res] = true
			}
			continue
		}
		uses := kind.Uses(&t.Spec)
		for _, name := range append(uses.Objects, uses.Others...) {
			v.templateUse[name] = true
		}
		for _, name := range uses.Parameters {
			v.paramUse[name] = true
		}
		for _, e := range kind.Validate(&t.Spec, defs, fieldpath.NewPath("spec")) {
			v.r.errorf(OperatorFileName, at+": "+e.Field, "%s", e.Detail)
		}
		for j, pipe := range t.Spec.Pipe {
			if other := pipeKeys[pipe.Key]; other != "" {
				v.r.errorf(OperatorFileName, fmt.Sprintf("%s: spec.pipe[%d].key", at, j), "key %q is already used by task %s", pipe.Key, other)
			} else if pipe.Key != "" {
				pipeKeys[pipe.Key] = t.Name
			}
		}
	}
}

func (v *verifier) plans(needDeploy bool) {
	plans := v.p.Operator.Plans
	if _, ok := plans[kudov1beta1.DeployPlanName]; !ok && needDeploy {
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
				v.name(fmt.Sprintf("%s.steps[%d]", pf, j), step.Name, steps)
			}
		}
	}
	v.defects()
}

// defects reports, where the package has them, what admission refuses too:
// the rules an OperatorVersion keeps so that its plans can run.
func (v *verifier) defects() {
	// The rules read the tasks, plans and triggers alone.
	spec := kudov1beta1.OperatorVersionSpec{Tasks: v.p.Operator.Tasks, Plans: v.p.Operator.Plans}
	for _, p := range v.p.Params.Parameters {
		spec.Parameters = append(spec.Parameters, kudov1beta1.Parameter{Name: p.Name, Trigger: p.Trigger})
	}
	for _, d := range engine.Defects(&spec) {
		plan := "plans." + d.Plan
		step := fmt.Sprintf("%s.phases[%d].steps[%d]", plan, d.Phase, d.Step)
		switch d.Rule {
		case engine.UndefinedTask:
			v.r.errorf(OperatorFileName, fmt.Sprintf("%s.tasks[%d]", step, d.Task), "task %q is not defined in tasks", d.Value)
		case engine.TriggerWithoutPlan:
			param := fmt.Sprintf("parameters[%d] %s", d.Parameter, spec.Parameters[d.Parameter].Name)
			v.r.rulef(ParamsFileName, param, "trigger %q names no plan of %s", d.Value, OperatorFileName)
		case engine.PlanTimeoutNotPositive:
			v.r.errorf(OperatorFileName, plan+".timeout", "timeout %s is not positive", d.Value)
		case engine.StepTimeoutNotPositive:
			v.r.errorf(OperatorFileName, step+".timeout", "timeout %s is not positive", d.Value)
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
// with the defaults and, for templates of objects, parses and checks them;
// a template a task's kind makes something else of is checked by building
// that task.
func (v *verifier) templates(opts VerifyOptions) {
	o := v.p.Operator
	if ns := o.NamespaceManifest; ns != "" {
		v.templateUse[ns] = true
		if _, ok := v.p.Templates[ns]; !ok {
			v.r.errorf(OperatorFileName, "namespaceManifest", "template %q is not in templates/", ns)
		}
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
	_, ov, err := v.p.Convert("default")
	if err != nil {
		return // reported by parameters()
	}
	values, renderable := v.paramValues(ov, opts.Values)
	unknown := map[string]bool{}
	for i := range ov.Spec.Parameters {
		if p := &ov.Spec.Parameters[i]; opts.Install && params.NeedsValue(p) && opts.Values[p.Name] == "" {
			unknown[p.Name] = true
		}
	}
	in := &task.Input{
		Site: render.Site{
			OperatorVersion: ov, Instance: o.Name + "-instance", Namespace: "default",
			Plan: kudov1beta1.DeployPlanName, Params: values,
		},
		Served: served, Scope: render.BuiltinScope,
	}
	objectTemplates, builders := v.templateRoles()
	// A render stopped by the limits may have taken the whole timeout: the
	// templates after it are parsed, not rendered, so that verifying an
	// OperatorVersion takes one timeout at most.
	var limited string
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
		var needed []string
		for _, ref := range usedParams(t) {
			v.paramUse[ref.name] = true
			if !v.declared[ref.name] {
				v.r.rulef(file, ref.position, "parameter %q is not defined in %s", ref.name, ParamsFileName)
				undefined = true
			}
			if unknown[ref.name] {
				needed = append(needed, ref.name)
			}
		}
		// A given value its parameter cannot take leaves nothing to render
		// with; to verify a package, rendering would only fail on the
		// undefined parameter.
		if !renderable || (undefined && !opts.Install) {
			continue
		}
		if limited != "" {
			v.r.warnf(file, "", "not rendered: rendering %s passed a limit, and verify renders no more after that", limited)
			continue
		}
		fail := v.renderFailure(file, needed)
		if builder := builders[name]; builder != nil && v.build(name, builder, in, fail) {
			limited = name
			continue
		}
		if !objectTemplates[name] {
			continue
		}
		if v.objects(name, in, k8sVersion, fail) {
			limited = name
		}
	}
	v.inventoryHolds()
}

// inventoryHolds reports templates that render more objects than an
// Instance's inventory holds: no plan could apply them all.
func (v *verifier) inventoryHolds() {
	var all []*unstructured.Unstructured
	largest := ""
	for _, name := range sortedKeys(v.rendered) {
		all = append(all, v.rendered[name]...)
		if largest == "" || len(v.rendered[name]) > len(v.rendered[largest]) {
			largest = name
		}
	}
	count, size, ok := inventory.Fits(nil, inventory.Site{Task: "verify"}, all)
	if ok {
		return
	}
	v.r.errorf(TemplatesDir+largest, "", "the templates render %d objects (%d here), %d KiB of inventory, more than the %d KiB "+
		"an Instance's inventory holds (about 8,500 objects): no plan could apply them all", count, len(v.rendered[largest]),
		size>>10, inventory.MaxBytes>>10)
}

// objects renders a template of objects and checks them; limited reports a
// render stopped by its limits.
func (v *verifier) objects(name string, in *task.Input, k8sVersion string, fail func(field, msg string)) (limited bool) {
	file := TemplatesDir + name
	renderAt := func(site *render.Site) (*render.Result, error) {
		return render.Task(&render.Request{
			Templates: v.p.Templates, Resources: []string{name},
			Variables: site.Variables(), Metadata: site.Metadata(),
			Served: in.Served, Scope: in.Scope,
		})
	}
	result, err := renderAt(&in.Site)
	if err != nil {
		field, msg := templateIssue(err)
		fail(field, strings.TrimPrefix(msg, name+": "))
		return isLimit(err)
	}
	v.rendered[name] = result.Objects
	for _, m := range result.Migrations {
		v.r.warnf(file, "", "%s", migrationWarning(m.Migration, k8sVersion))
	}
	for _, obj := range result.Objects {
		if obj.GetKind() == "Namespace" && obj.GroupVersionKind().Group == "" && name != v.p.Operator.NamespaceManifest {
			v.r.rulef(file, "", "Namespace %q: a Namespace may only be created by the namespaceManifest template", obj.GetName())
		}
	}
	// Rendered again for a second Instance, of another name and namespace:
	// what comes out the same does not depend on the Instance. An error
	// there only (a template branching on the name) is left unreported:
	// the template renders for the Instance verified.
	second := in.Site
	second.Instance, second.Namespace = second.Instance+"-second", "second"
	other, err := renderAt(&second)
	if err != nil {
		return isLimit(err)
	}
	v.sharedClusterObjects(file, result.Objects, other.Objects)
	return false
}

// namedByTheirAPI are the cluster-scoped kinds whose name the API they
// define fixes (<plural>.<group>, <version>.<group>): no package can name
// them after the Instance, so sharedClusterObjects leaves them out.
var namedByTheirAPI = map[schema.GroupKind]bool{
	crd.GroupKind: true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}: true,
}

// sharedClusterObjects warns of the cluster-scoped objects a template
// renders under the same name for two Instances (first and second): the
// first Instance to apply one keeps it, and the second's plan fails.
func (v *verifier) sharedClusterObjects(file string, first, second []*unstructured.Unstructured) {
	type key struct {
		kind schema.GroupKind
		name string
	}
	rendered := map[key]bool{}
	for _, obj := range second {
		rendered[key{obj.GroupVersionKind().GroupKind(), obj.GetName()}] = true
	}
	for _, obj := range first {
		gvk := obj.GroupVersionKind()
		namespaced, _ := render.BuiltinScope(gvk)
		if namespaced || namedByTheirAPI[gvk.GroupKind()] || !rendered[key{gvk.GroupKind(), obj.GetName()}] {
			continue
		}
		v.r.warnf(file, "", "%s %q is cluster-scoped and its name does not depend on the Instance: a second Instance of this package "+
			"cannot apply it; name it after the Instance ({{ .Name }}, {{ .Namespace }})", obj.GetKind(), obj.GetName())
	}
}

// paramValues are what templates see as .Params: the given values over the
// defaults. A given value its parameter cannot take is an error, as admission
// refuses it; renderable is false when there is nothing to render with.
func (v *verifier) paramValues(ov *kudov1beta1.OperatorVersion, given map[string]string) (values map[string]any, renderable bool) {
	renderable = true
	for i := range ov.Spec.Parameters {
		p := &ov.Spec.Parameters[i]
		if value, set := given[p.Name]; set {
			if err := params.Check(p, value); err != nil {
				v.r.errorf("spec.parameters", p.Name, "%s", strings.TrimPrefix(err.Error(), "parameter "+p.Name+": "))
				renderable = false
			}
		}
	}
	if !renderable {
		return nil, false
	}
	values, err := params.Values(ov.Spec.Parameters, given)
	// A default that does not fit its type is reported by parameters().
	return values, err == nil
}

// migrationWarning says what kudo-ng changes of an object when it applies it
// to Kubernetes k8sVersion.
func migrationWarning(m migrate.Migration, k8sVersion string) string {
	if m.Dropped != "" {
		return fmt.Sprintf("%s: kudo-ng drops it when it applies the object, as KUDO did; remove it from the template", m)
	}
	warning := fmt.Sprintf("%s %q: %s → %s, which Kubernetes %s no longer serves: kudo-ng migrates it when it applies it",
		m.Kind, m.Name, m.From, m.To, k8sVersion)
	if len(m.Changes) > 0 {
		warning += "; the migration also: " + strings.Join(m.Changes, "; ")
	}
	return warning
}

// templateRoles sorts the templates by what becomes of them: objects are
// rendered into objects and applied (the namespace manifest, and those of
// the tasks' kinds that apply or delete them); builders maps each other
// template to the first task whose kind makes something of it.
func (v *verifier) templateRoles() (objects map[string]bool, builders map[string]*kudov1beta1.Task) {
	objects, builders = map[string]bool{}, map[string]*kudov1beta1.Task{}
	if ns := v.p.Operator.NamespaceManifest; ns != "" {
		objects[ns] = true
	}
	for i := range v.p.Operator.Tasks {
		t := &v.p.Operator.Tasks[i]
		kind, err := task.For(t.Kind)
		if err != nil {
			continue
		}
		uses := kind.Uses(&t.Spec)
		for _, name := range uses.Objects {
			objects[name] = true
		}
		for _, name := range uses.Others {
			if builders[name] == nil {
				builders[name] = t
			}
		}
	}
	return objects, builders
}

// renderFailure returns how a template that fails to render is reported:
// as an error, or, when it was rendered without a value for the parameters
// it uses that need one (needed), as a warning, since the Instance gives
// them values that may well render.
func (v *verifier) renderFailure(file string, needed []string) func(field, msg string) {
	if len(needed) == 0 {
		return func(field, msg string) { v.r.errorf(file, field, "%s", msg) }
	}
	return func(field, msg string) {
		v.r.warnf(file, field, "%s (rendered without a value for %s, which the Instance must set)", msg, strings.Join(needed, ", "))
	}
}

// build checks a template by building the task that makes something of it,
// as the controller would, and reports what fails; limited reports a render
// stopped by its limits.
func (v *verifier) build(name string, t *kudov1beta1.Task, in *task.Input, fail func(field, msg string)) (limited bool) {
	kind, err := task.For(t.Kind)
	if err == nil {
		_, err = kind.Build(t, in)
	}
	if err == nil {
		return false
	}
	if fe := (*fieldpath.Error)(nil); errors.As(err, &fe) {
		fail(fe.Field, fe.Detail)
		return false
	}
	field, msg := templateIssue(err)
	fail(field, strings.TrimPrefix(msg, name+": "))
	return isLimit(err)
}

func isLimit(err error) bool {
	var limit *render.LimitError
	return errors.As(err, &limit)
}

func (v *verifier) unused() {
	used := map[string]bool{}
	for _, plan := range v.p.Operator.Plans {
		for _, step := range plan.Steps() {
			for _, name := range step.Tasks {
				used[name] = true
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

var templateLocation = regexp.MustCompile(`^template: [^:]+:(?:(\d+)(?::(\d+))?:)? (.*)$`)

// templateIssue turns a text/template error into the line of the template
// and what went wrong; a render stopped by a limit may have no line.
func templateIssue(err error) (field, message string) {
	m := templateLocation.FindStringSubmatch(err.Error())
	switch {
	case m == nil:
		return "", err.Error()
	case m[1] == "":
		return "", m[3]
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
