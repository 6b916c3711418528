package packages

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	fieldpath "k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
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
	// kudoWords are what KUDO v0.19's package verify said of the same
	// finding, by the check kudoCheck; empty where KUDO did not check it.
	kudoWords string
	kudoCheck kudoCheck
}

// kudoCheck is the check of KUDO v0.19's package verify that made a
// finding: KUDO listed its findings in the order its checks ran, this one.
type kudoCheck int

const (
	notKUDOs kudoCheck = iota
	kudoDuplicates
	kudoInvalidCharacters
	kudoVersions
	kudoTaskReferences
	kudoPlanReferences
	kudoTemplateParameters
	kudoTemplateReferences
	kudoNamespaces
	// The checks of --param-checks, which KUDO ran after the others.
	kudoParamDescriptions
	kudoParamHints
	kudoParamDisplayNames
	kudoParamGroups
	kudoParamTypes
	kudoGroups
)

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
	// last is the list the last finding went to, for kudoSaid.
	last *[]Issue
}

// errorf records what cannot install or run.
func (r *Report) errorf(file, field, format string, args ...any) {
	r.Errors = append(r.Errors, Issue{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
	r.last = &r.Errors
}

func (r *Report) warnf(file, field, format string, args ...any) {
	r.Warnings = append(r.Warnings, Issue{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
	r.last = &r.Warnings
}

// kudoSaid records, of the finding just recorded, what KUDO's package
// verify said of it and by which check.
func (r *Report) kudoSaid(check kudoCheck, format string, args ...any) {
	last := &(*r.last)[len(*r.last)-1]
	last.kudoWords, last.kudoCheck = fmt.Sprintf(format, args...), check
}

// AsKUDOSaid are the errors and the warnings as KUDO's package verify
// listed them: the findings KUDO made too, in its words and in the order of
// its checks, then the others (file: field: message).
func (r *Report) AsKUDOSaid() (errors, warnings []string) {
	return asKUDOSaid(r.Errors), asKUDOSaid(r.Warnings)
}

func asKUDOSaid(issues []Issue) []string {
	ordered := slices.Clone(issues)
	slices.SortStableFunc(ordered, func(a, b Issue) int {
		return cmp.Compare(kudoRank(a.kudoCheck), kudoRank(b.kudoCheck))
	})
	said := make([]string, 0, len(ordered))
	for _, i := range ordered {
		said = append(said, cmp.Or(i.kudoWords, i.String()))
	}
	return said
}

// kudoRank puts the findings KUDO made first, by check, and the others
// after them.
func kudoRank(c kudoCheck) int {
	if c == notKUDOs {
		return math.MaxInt
	}
	return int(c)
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
	// Previous are earlier versions of the package (package verify
	// --previous), whose typed API the package's may not break
	// (typedapi.Breaks).
	Previous []*Package
	// RenderLimits bound each render of a template; none set:
	// render.DefaultLimits, the CLI's.
	RenderLimits render.Limits
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
	v.healthRules()
	v.typedAPI()
	v.evolution(opts.Previous)
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
		v.r.kudoSaid(kudoVersions, "%q is required and must be semver", "operatorVersion")
	}
	if o.KubernetesVersion == "" {
		v.r.rulef(OperatorFileName, "kubernetesVersion", "is required")
		v.r.kudoSaid(kudoVersions, "%q is required and must be semver", "kubernetesVersion")
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
		if k := strings.IndexAny(p.Name, ";,"); k >= 0 {
			v.r.rulef(ParamsFileName, field, "name must not contain ';' or ','")
			v.r.kudoSaid(kudoInvalidCharacters, "parameter %q contains invalid character %q", p.Name, rune(p.Name[k]))
		}
		if j, dup := seen[strings.ToLower(p.Name)]; dup {
			v.r.errorf(ParamsFileName, field, "duplicates parameters[%d] %s (names are compared ignoring case)", j, v.p.Params.Parameters[j].Name)
			v.r.kudoSaid(kudoDuplicates, "parameter %q has a duplicate", p.Name)
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
			v.r.kudoSaid(kudoTemplateParameters, "parameter %q is immutable but is not marked as required or has a default value", p.Name)
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
		v.r.kudoSaid(kudoTemplateParameters, "parameter %q is an enum but has no allowed values", p.Name)
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
	defs := &task.Definitions{Templates: v.p.Templates, Charts: v.p.Charts, Parameters: map[string]kudov1beta1.ParameterType{}}
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
		v.r.kudoSaid(kudoPlanReferences, "an operator is required to have '%s' plan", kudov1beta1.DeployPlanName)
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
			v.r.kudoSaid(kudoTaskReferences, "task %q in plan %q is not defined", d.Value, d.Plan)
		case engine.TriggerWithoutPlan:
			param := fmt.Sprintf("parameters[%d] %s", d.Parameter, spec.Parameters[d.Parameter].Name)
			v.r.rulef(ParamsFileName, param, "trigger %q names no plan of %s", d.Value, OperatorFileName)
			v.r.kudoSaid(kudoPlanReferences, "plan %q used in parameter %q is not defined", d.Value, spec.Parameters[d.Parameter].Name)
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
