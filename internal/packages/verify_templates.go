package packages

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fieldpath "k8s.io/apimachinery/pkg/util/validation/field"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
	"github.com/kudo-ng/kudo/internal/task"
)

// templates parses every template, finds the parameters it uses, renders it
// with the defaults and, for templates of objects, parses and checks them;
// a template a task's kind makes something else of is checked by building
// that task.
func (v *verifier) templates(opts VerifyOptions) {
	v.namespaceManifest()
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
	unknown := unsetParams(ov, opts)
	in := &task.Input{
		Site: render.Site{
			OperatorVersion: ov, Instance: v.p.Operator.Name + "-instance", Namespace: "default",
			Plan: kudov1beta1.DeployPlanName, Params: values, Limits: opts.RenderLimits,
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
		t, ok := v.parse(name)
		if !ok {
			continue
		}
		undefined, needed := v.templateParams(file, t, unknown)
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
		if objectTemplates[name] && v.objects(name, in, k8sVersion, fail) {
			limited = name
		}
	}
	v.inventoryHolds()
}

// namespaceManifest marks the operator's namespace manifest used, and
// reports it when it is not among the templates.
func (v *verifier) namespaceManifest() {
	if ns := v.p.Operator.NamespaceManifest; ns != "" {
		v.templateUse[ns] = true
		if _, ok := v.p.Templates[ns]; !ok {
			v.r.errorf(OperatorFileName, "namespaceManifest", "template %q is not in templates/", ns)
			v.r.kudoSaid(kudoNamespaces, "NamespaceManifest %q not found in /templates folder", ns)
		}
	}
}

// unsetParams are the parameters that need a value and are given none:
// templates render without one. package verify gives none, and as KUDO's
// it takes a template that renders only with the value an Instance sets.
func unsetParams(ov *kudov1beta1.OperatorVersion, opts VerifyOptions) map[string]bool {
	unknown := map[string]bool{}
	for i := range ov.Spec.Parameters {
		if p := &ov.Spec.Parameters[i]; params.NeedsValue(p) && opts.Values[p.Name] == "" {
			unknown[p.Name] = true
		}
	}
	return unknown
}

// parse parses a template, and reports where it does not parse.
func (v *verifier) parse(name string) (*template.Template, bool) {
	t, err := render.Parse(name, v.p.Templates[name])
	if err != nil {
		field, msg := templateIssue(err)
		v.r.errorf(TemplatesDir+name, field, "%s", msg)
		// Which parameters it uses is unknown: do not call any unused.
		v.unparsed = true
		return nil, false
	}
	return t, true
}

// templateParams marks the parameters template t uses as used and reports
// those params.yaml does not define (undefined); needed are those it uses
// that are rendered without a value (unknown).
func (v *verifier) templateParams(file string, t *template.Template, unknown map[string]bool) (undefined bool, needed []string) {
	for _, ref := range usedParams(t) {
		v.paramUse[ref.name] = true
		if !v.declared[ref.name] {
			v.r.rulef(file, ref.position, "parameter %q is not defined in %s", ref.name, ParamsFileName)
			v.r.kudoSaid(kudoTemplateParameters, "parameter %q in template %s is not defined", ref.name, strings.TrimPrefix(file, TemplatesDir))
			undefined = true
		}
		if unknown[ref.name] {
			needed = append(needed, ref.name)
		}
	}
	return undefined, needed
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
			Served: in.Served, Scope: in.Scope, Limits: site.Limits,
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
			v.r.kudoSaid(kudoNamespaces, "template %q contains 'kind: Namespace' not allowed unless specified as 'NamespaceManifest'", name)
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
