package preview

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/inventory"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/task"
)

// What a change — an install, update or upgrade — would do in a cluster,
// as plain data: the plan it runs, and each object's fate with the diff
// kubectl diff would print. The CLI gathers the objects (live, and the API
// server's answer to a dry run of each write); the functions here compare
// and assemble them.

// Verb is what the change would do to one object.
type Verb string

const (
	Create    Verb = "create"
	Configure Verb = "configure"
	Unchanged Verb = "unchanged"
	// Delete: a Delete task, or a Toggle switched off, deletes it.
	Delete Verb = "delete"
	// Prune: its task no longer renders it; it goes once the plan completed.
	Prune Verb = "prune"
	// Keep: a delete or prune leaves it (not the Instance's, or annotated
	// kudo.dev/prune: disabled); Note says why.
	Keep Verb = "keep"
	// Refuse: the API server, or kudo-ng's ownership rule, refuses the
	// write; Note holds the refusal. The plan would fail there.
	Refuse Verb = "refuse"
)

// Object is the fate of one object.
type Object struct {
	Task       string `json:"task"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Verb       Verb   `json:"verb"`
	Note       string `json:"note,omitempty"`
	// Diff is the unified diff of Live and Would as YAML.
	Diff string `json:"diff,omitempty"`
	// Live and Would are the object now and after the change, as Shown.
	Live  map[string]any `json:"live,omitempty"`
	Would map[string]any `json:"would,omitempty"`
}

// Changes reports whether the object's fate changes the cluster, or fails.
func (o *Object) Changes() bool {
	return o.Verb != Unchanged && o.Verb != Keep
}

// Describe names the object as events and messages do.
func (o *Object) Describe() string {
	return inventory.Describe(kudov1beta1.ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name})
}

// Report is what a change would do to one Instance.
type Report struct {
	Instance        string `json:"instance"`
	Namespace       string `json:"namespace"`
	OperatorVersion string `json:"operatorVersion"`
	// Action is the change: install, update, or upgrade.
	Action string `json:"action"`
	// Plan is the plan the change runs; "" when it runs none.
	Plan  string `json:"plan,omitempty"`
	Steps []Step `json:"steps,omitempty"`
	// Refusal is why the change itself is refused, nothing else then known.
	Refusal string `json:"refusal,omitempty"`
	// Runs are what the plan does that no object shows: the pods of Pipe
	// tasks.
	Runs    []string `json:"runs,omitempty"`
	Objects []Object `json:"objects,omitempty"`
	// Children are what the plan's KudoOperator tasks would do to the
	// Instances they make.
	Children []*Report `json:"children,omitempty"`
}

// Step is a step of the plan and its tasks, as "name (Kind)".
type Step struct {
	Phase string   `json:"phase"`
	Step  string   `json:"step"`
	Tasks []string `json:"tasks"`
}

// StepsOf lists the steps of the plan's tasks, in order.
func StepsOf(tasks []Task) []Step {
	var steps []Step
	for _, t := range tasks {
		name := fmt.Sprintf("%s (%s)", t.Name, t.Kind)
		if n := len(steps); n > 0 && steps[n-1].Phase == t.Phase && steps[n-1].Step == t.Step {
			if !slices.Contains(steps[n-1].Tasks, name) {
				steps[n-1].Tasks = append(steps[n-1].Tasks, name)
			}
			continue
		}
		steps = append(steps, Step{Phase: t.Phase, Step: t.Step, Tasks: []string{name}})
	}
	return steps
}

// Changes reports whether the change would change anything, here or in a
// child, or be refused.
func (r *Report) Changes() bool {
	if r.Refusal != "" || len(r.Runs) > 0 {
		return true
	}
	for i := range r.Objects {
		if r.Objects[i].Changes() {
			return true
		}
	}
	for _, c := range r.Children {
		if c.Changes() {
			return true
		}
	}
	return false
}

// Counts are how many objects meet each fate.
type Counts map[Verb]int

// Count counts the report's own objects by verb.
func (r *Report) Count() Counts {
	counts := Counts{}
	for i := range r.Objects {
		counts[r.Objects[i].Verb]++
	}
	return counts
}

// Total counts the objects of the report and its children's by verb.
func (r *Report) Total() Counts {
	counts := r.Count()
	for _, c := range r.Children {
		for verb, n := range c.Total() {
			counts[verb] += n
		}
	}
	return counts
}

// bookkeeping are the annotations kudo-ng writes on every run of a plan:
// they change each time and say nothing of the object, so no diff shows
// them, as kubectl diff leaves out managedFields.
var bookkeeping = []string{
	kudov1beta1.PlanAnnotation, kudov1beta1.PhaseAnnotation, kudov1beta1.StepAnnotation,
	kudov1beta1.PlanUIDAnnotation, kudov1beta1.AppliedHashAnnotation,
}

// Shown is obj as a preview shows it: without status, managedFields, what
// the API server sets on every write (resourceVersion, generation, uid,
// creationTimestamp) and kudo-ng's bookkeeping annotations; nil for nil.
func Shown(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	out := obj.DeepCopy()
	unstructured.RemoveNestedField(out.Object, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	if annotations := out.GetAnnotations(); annotations != nil {
		for _, a := range bookkeeping {
			delete(annotations, a)
		}
		if len(annotations) == 0 {
			annotations = nil
		}
		out.SetAnnotations(annotations)
	}
	return out
}

var secretKind = schema.GroupKind{Kind: "Secret"}

// The masks of a Secret's values, as kubectl diff's.
const (
	masked       = "***"
	maskedBefore = "*** (before)"
	maskedAfter  = "*** (after)"
)

// maskSecrets hides the values of a Secret's data and stringData as kubectl
// diff does: "***" where live and would agree, "*** (before)" and
// "*** (after)" where they differ, so a diff tells which keys change and
// never what they hold.
func maskSecrets(live, would *unstructured.Unstructured) {
	for _, field := range []string{"data", "stringData"} {
		before := secretValues(live, field)
		after := secretValues(would, field)
		for k, v := range before {
			if w, ok := after[k]; ok && w == v {
				before[k], after[k] = masked, masked
				continue
			}
			before[k] = maskedBefore
		}
		for k := range after {
			if after[k] != masked {
				after[k] = maskedAfter
			}
		}
		setSecretValues(live, field, before)
		setSecretValues(would, field, after)
	}
}

func secretValues(obj *unstructured.Unstructured, field string) map[string]any {
	if obj == nil {
		return nil
	}
	values, _, _ := unstructured.NestedMap(obj.Object, field)
	return values
}

func setSecretValues(obj *unstructured.Unstructured, field string, values map[string]any) {
	if obj != nil && values != nil {
		_ = unstructured.SetNestedMap(obj.Object, values, field)
	}
}

// Compare is the fate of an object the change applies: live is the object
// now (nil when there is none), would the API server's answer to the dry
// run of the apply. Secrets' values are masked, and redactor hides the
// Instance's sensitive values wherever else they show.
func Compare(taskName string, live, would *unstructured.Unstructured, redactor *params.Redactor) (Object, error) {
	out := objectOf(taskName, would)
	before, after := Shown(live), Shown(would)
	if would.GroupVersionKind().GroupKind() == secretKind {
		maskSecrets(before, after)
	}
	var err error
	switch {
	case before == nil:
		out.Verb = Create
	case equal(before, after):
		out.Verb = Unchanged
		out.Live, out.Would = redacted(before, redactor), redacted(after, redactor)
		return out, nil
	default:
		out.Verb = Configure
	}
	out.Live, out.Would = redacted(before, redactor), redacted(after, redactor)
	out.Diff, err = unifiedDiff(out.Live, out.Would, pathOf(would), redactor)
	return out, err
}

// Removed is the fate of an object a Delete or Toggle task, or pruning,
// deletes: verb is Delete or Prune. Secrets' values are masked.
func Removed(taskName string, verb Verb, live *unstructured.Unstructured, redactor *params.Redactor) (Object, error) {
	out := objectOf(taskName, live)
	out.Verb = verb
	before := Shown(live)
	if live.GroupVersionKind().GroupKind() == secretKind {
		maskSecrets(before, nil)
	}
	out.Live = redacted(before, redactor)
	var err error
	out.Diff, err = unifiedDiff(out.Live, nil, pathOf(live), redactor)
	return out, err
}

// Refused is an object whose write the API server or the ownership rule
// refuses, with the refusal.
func Refused(taskName string, obj *unstructured.Unstructured, refusal string) Object {
	out := objectOf(taskName, obj)
	out.Verb, out.Note = Refuse, refusal
	return out
}

// Kept is an object a delete or prune leaves, with why.
func Kept(taskName string, obj *unstructured.Unstructured, why string) Object {
	out := objectOf(taskName, obj)
	out.Verb, out.Note = Keep, why
	return out
}

func objectOf(taskName string, obj *unstructured.Unstructured) Object {
	return Object{Task: taskName, APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

func equal(a, b *unstructured.Unstructured) bool {
	return apiequality.Semantic.DeepEqual(a.Object, b.Object)
}

func redacted(obj *unstructured.Unstructured, redactor *params.Redactor) map[string]any {
	if obj == nil {
		return nil
	}
	if redactor == nil {
		return obj.Object
	}
	return redactValue(obj.Object, redactor).(map[string]any)
}

// redactValue is v with the sensitive values hidden in each string of it,
// keys and values alike.
func redactValue(v any, redactor *params.Redactor) any {
	switch v := v.(type) {
	case string:
		return redactor.String(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[redactor.String(k)] = redactValue(e, redactor)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(e, redactor)
		}
		return out
	}
	return v
}

// pathOf names an object's side of a diff as kubectl diff names its files:
// apps.v1.Deployment.default.web.
func pathOf(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	parts := []string{gvk.Group, gvk.Version, gvk.Kind, obj.GetNamespace(), obj.GetName()}
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ".")
}

// MaxDiffLines bounds the objects a diff compares, line by line: a diff
// costs up to the product of both sides' lines (about a second for 5000
// lines each, a seventh of them changed), and a live object is whatever
// anyone who may write it made it.
const MaxDiffLines = 5000

// unifiedDiff is the diff of two objects' YAML, with three lines of
// context; nil is no object (all lines added, or all removed).
func unifiedDiff(live, would map[string]any, path string, redactor *params.Redactor) (string, error) {
	a, err := yamlLines(live)
	if err != nil {
		return "", err
	}
	b, err := yamlLines(would)
	if err != nil {
		return "", err
	}
	if len(a) > MaxDiffLines || len(b) > MaxDiffLines {
		return fmt.Sprintf("--- live/%s (%d lines)\n+++ would/%s (%d lines)\n"+
			"(no diff: an object of more than %d lines; -o yaml shows both)\n", path, len(a), path, len(b), MaxDiffLines), nil
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: a, B: b, FromFile: "live/" + path, ToFile: "would/" + path, Context: 3,
	})
	if err != nil {
		return "", err
	}
	if redactor != nil {
		diff = redactor.String(diff)
	}
	return diff, nil
}

func yamlLines(obj map[string]any) ([]string, error) {
	if obj == nil {
		return nil, nil
	}
	b, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(b), "\n")
	return lines[:len(lines)-1], nil
}

// StaleObject is an object pruning would delete: the inventory holds it
// for Task, which the plan runs and which renders it no more.
type StaleObject struct {
	Task string
	Ref  kudov1beta1.ObjectRef
}

// Stale are what the plan's completion would prune (inventory.Record,
// inventory.Prunable): each object that the inventory holds, or holds as
// stale, for a task the plan applies, and that no task of the plan
// applies. An object another task of the plan applies moves to it.
func Stale(inv []kudov1beta1.TaskInventory, tasks []Task) []StaleObject {
	applying := map[string]bool{}
	applied := map[kudov1beta1.ObjectRef]bool{}
	for _, t := range tasks {
		if t.Action != task.ActionApply {
			continue
		}
		applying[t.Name] = true
		for _, obj := range t.Objects {
			applied[inventory.RefOf(obj)] = true
		}
	}
	var stale []StaleObject
	for _, t := range inv {
		if !applying[t.Task] {
			continue
		}
		held := slices.Clone(t.Stale)
		for _, o := range t.Objects {
			held = append(held, o.ObjectRef)
		}
		for _, ref := range held {
			if !applied[ref] {
				stale = append(stale, StaleObject{Task: t.Task, Ref: ref})
			}
		}
	}
	return stale
}

// Print writes the report as kubectl kudo prints it: the plan and its
// steps, then each object's fate, with its diff when diffs is set, and a
// summary; then each child's report.
func (r *Report) Print(w io.Writer, diffs bool) error {
	p := &printer{w: w}
	r.print(p, diffs)
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (r *Report) print(p *printer, diffs bool) {
	p.printf("Instance %s/%s: %s (OperatorVersion %s)", r.Namespace, r.Instance, r.Action, r.OperatorVersion)
	switch {
	case r.Refusal != "":
		p.printf(" is refused: %s\n", r.Refusal)
		return
	case r.Plan == "":
		p.printf(" runs no plan\n")
	default:
		p.printf(" runs plan %s\n", r.Plan)
	}
	for _, s := range r.Steps {
		p.printf("  phase %s, step %s: %s\n", s.Phase, s.Step, strings.Join(s.Tasks, ", "))
	}
	for _, run := range r.Runs {
		p.printf("%s\n", run)
	}
	for i := range r.Objects {
		o := &r.Objects[i]
		p.printf("%s: %s (task %s)", o.Describe(), o.Verb, o.Task)
		if o.Note != "" {
			p.printf(": %s", o.Note)
		}
		p.printf("\n")
		if diffs && o.Diff != "" {
			p.printf("%s", o.Diff)
		}
	}
	c := r.Count()
	p.printf("Instance %s/%s: %d to create, %d to configure, %d to delete (%d pruned), %d kept, %d refused, %d unchanged\n",
		r.Namespace, r.Instance, c[Create], c[Configure], c[Delete]+c[Prune], c[Prune], c[Keep], c[Refuse], c[Unchanged])
	for _, child := range r.Children {
		child.print(p, diffs)
	}
}
