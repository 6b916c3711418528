// Package healthrule judges objects with the health rules a package ships:
// CEL expressions over an object's fields, healthChecks in operator.yaml in
// Flux's format (a Kustomization's healthCheckExprs) for every object of a
// kind, and readyWhen on an Apply task, as kro's, for the task's objects. It
// compiles the rules, type-checks them against a kind's OpenAPI schema
// (Typecheck), and evaluates them within a cost and a time.
package healthrule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
)

// Bounds of a rule. The cost is CEL's as the API server counts it for a
// CRD's validation rules, each call counted by the bytes it reads and builds
// (cost.go). CostLimit bounds one evaluation, and each call in it, as the
// API server's per-call limit. EstimatedCostLimit bounds a rule's cost
// estimated, when it is compiled, on the largest object there can be, as the
// API server's limit for all the rules of a CRD: a rule that does a little
// with each byte of the object passes (on an object too large to judge
// within CostLimit it waits, saying so); one that builds ever larger values,
// or compares each item of a list with each of another, does not. The time
// bounds one evaluation whatever its cost.
const (
	MaxExpressionBytes = 4096
	CostLimit          = 1_000_000
	EstimatedCostLimit = 100 * CostLimit
	EvalTimeout        = 100 * time.Millisecond
	// MaxObserved is how many fields a verdict shows of those its rule
	// read, each in at most MaxValueBytes of JSON.
	MaxObserved   = 4
	MaxValueBytes = 120
)

// variables are the object's fields an expression sees by name, as in Flux.
var variables = []string{"metadata", "spec", "status"}

// Expression is a compiled rule.
type Expression struct {
	// Field is where it is in operator.yaml: healthChecks[0].current,
	// tasks[2].spec.readyWhen[0].
	Field   string
	Source  string
	program cel.Program
	// shown are the fields a verdict shows, as status.phase (fieldsRead).
	shown [][]string
}

func (e *Expression) String() string { return e.Field + ": " + e.Source }

// check is a compiled HealthCheck.
type check struct {
	inProgress, failed, current *Expression
}

// Set is the compiled rules of an OperatorVersion. A nil Set has none.
type Set struct {
	kinds     map[schema.GroupVersionKind]*check
	readyWhen map[string][]*Expression
	// timeout bounds each evaluation: EvalTimeout.
	timeout time.Duration
}

// Compile compiles the rules of an OperatorVersion; the error names each
// rule that is misplaced (Rules) or does not compile.
func Compile(spec *kudov1beta1.OperatorVersionSpec) (*Set, error) {
	rules, misplaced := Rules(spec.HealthChecks, spec.Tasks)
	var errs []error
	for _, err := range misplaced {
		errs = append(errs, err)
	}
	s := &Set{kinds: map[schema.GroupVersionKind]*check{}, readyWhen: map[string][]*Expression{}, timeout: EvalTimeout}
	for _, rule := range rules {
		e, err := NewExpression(rule.Field, rule.Source)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if rule.Check == "" {
			task := spec.Tasks[rule.Task].Name
			s.readyWhen[task] = append(s.readyWhen[task], e)
			continue
		}
		c := s.kinds[rule.Kind]
		if c == nil {
			c = &check{}
			s.kinds[rule.Kind] = c
		}
		switch rule.Check {
		case "inProgress":
			c.inProgress = e
		case "failed":
			c.failed = e
		default:
			c.current = e
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(s.kinds) == 0 && len(s.readyWhen) == 0 {
		return nil, nil
	}
	return s, nil
}

// NewExpression compiles a rule over any object: its fields are of any
// type until it runs (Typecheck checks them against a schema).
func NewExpression(field, source string) (*Expression, error) {
	if len(source) > MaxExpressionBytes {
		return nil, &FieldError{field, fmt.Sprintf("the expression has %d bytes, more than the %d a rule may", len(source), MaxExpressionBytes)}
	}
	checked, err := compile(dynamicEnv, field, source)
	if err != nil {
		return nil, err
	}
	if err := estimatedCost(dynamicEnv, checked, field); err != nil {
		return nil, err
	}
	program, err := newProgram(checked)
	if err != nil {
		return nil, &FieldError{field, err.Error()}
	}
	return &Expression{Field: field, Source: source, program: program, shown: fieldsRead(checked)}, nil
}

// newProgram is checked, bounded by CostLimit, each call counted as the
// bytes it reads and builds (callCosts).
func newProgram(checked *cel.Ast) (cel.Program, error) {
	costs := newCallCosts()
	return dynamicEnv.Program(checked, cel.CostTracking(costs), cel.CostLimit(CostLimit),
		costs.literalPatterns(), cel.InterruptCheckFrequency(100))
}

// FieldError is a rule that cannot run, and where it is.
type FieldError struct {
	Field, Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// compile parses and checks source in env; a rule must give a bool.
func compile(env *cel.Env, field, source string) (*cel.Ast, error) {
	checked, issues := env.Compile(source)
	if issues.Err() != nil {
		return nil, &FieldError{field, issueMessages(issues)}
	}
	if out := checked.OutputType(); !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.DynType) {
		return nil, &FieldError{field, fmt.Sprintf("the expression gives a %s, not a bool", out)}
	}
	return checked, nil
}

// issueMessages are a compilation's errors on one line, each with its
// column.
func issueMessages(issues *cel.Issues) string {
	messages := make([]string, len(issues.Errors()))
	for n, e := range issues.Errors() {
		messages[n] = fmt.Sprintf("%s (column %d)", e.Message, e.Location.Column()+1)
	}
	return strings.Join(messages, "; ")
}

// envOptions are Flux's: the same extensions, so that expressions from its
// CEL cheatsheet work unchanged. They make an environment of their own
// (cel.NewCustomEnv): the standard library's _+_ and matches are bounded
// (cost.go).
func envOptions() []cel.EnvOption {
	return []cel.EnvOption{
		stdlib, concatenate, matches,
		cel.HomogeneousAggregateLiterals(), cel.EagerlyValidateDeclarations(true), cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true), cel.OptionalTypes(), ext.Strings(), ext.Sets(), ext.Encoders(),
	}
}

// dynamicEnv is the environment rules run in: envOptions, with the
// variables of any type, and calls refused that would cost more than
// CostLimit (boundedCalls).
var dynamicEnv = func() *cel.Env {
	opts := envOptions()
	for _, v := range variables {
		opts = append(opts, cel.Variable(v, cel.DynType))
	}
	env, err := cel.NewCustomEnv(opts...)
	if err != nil {
		panic(err) // fixed declarations
	}
	bounds, err := boundedCalls(env)
	if err == nil {
		env, err = env.Extend(bounds...)
	}
	if err != nil {
		panic(err)
	}
	return env
}()

// Check judges obj, applied by the task named task: with the health check
// of its kind, or health.Check without one, and then, once that says
// healthy, with the task's readyWhen rules, which must all hold.
func (s *Set) Check(ctx context.Context, obj *unstructured.Unstructured, task string) health.Result {
	if s == nil {
		return health.Check(obj)
	}
	var verdict health.Result
	if c := s.kinds[obj.GroupVersionKind()]; c != nil {
		verdict = c.judge(ctx, obj, s.timeout)
	} else {
		verdict = health.Check(obj)
	}
	if !verdict.Healthy {
		return verdict
	}
	for _, e := range s.readyWhen[task] {
		holds, err := e.eval(ctx, obj, s.timeout)
		if err != nil {
			return unjudged(obj, e, err)
		}
		if !holds {
			return waiting(obj, e, e.observe(obj), "does not hold yet")
		}
	}
	return verdict
}

// Judge is the rules that judge the objects of one kind that one task
// applies: the kind's health check, the task's readyWhen, or both.
type Judge struct {
	set  *Set
	task string
	// Key is the rules' sources: OperatorVersions that ship the same rules
	// have judges of one key.
	Key string
}

// JudgeOf is the rules judging the objects of kind gk that the task named
// task applies; nil when no rule does, and kstatus judges them.
func (s *Set) JudgeOf(gk schema.GroupKind, task string) *Judge {
	if s == nil {
		return nil
	}
	var sources []string
	for gvk, c := range s.kinds {
		if gvk.GroupKind() == gk {
			rule := []string{gvk.String(), c.inProgress.source(), c.failed.source(), c.current.source()}
			sources = append(sources, strings.Join(rule, "\x00"))
		}
	}
	if len(sources) == 0 && len(s.readyWhen[task]) == 0 {
		return nil
	}
	slices.Sort(sources) // the kind's versions, from a map
	for _, e := range s.readyWhen[task] {
		sources = append(sources, e.Source)
	}
	return &Judge{set: s, task: task, Key: strings.Join(sources, "\x01")}
}

// Check judges obj as Set.Check does for the task.
func (j *Judge) Check(obj *unstructured.Unstructured) health.Result {
	return j.set.Check(context.Background(), obj, j.task)
}

func (e *Expression) source() string {
	if e == nil {
		return ""
	}
	return e.Source
}

// judge evaluates inProgress, failed and current in that order: the first
// that holds decides, and none holding is in progress.
func (c *check) judge(ctx context.Context, obj *unstructured.Unstructured, timeout time.Duration) health.Result {
	for _, e := range []*Expression{c.inProgress, c.failed, c.current} {
		if e == nil {
			continue
		}
		holds, err := e.eval(ctx, obj, timeout)
		if err != nil {
			return unjudged(obj, e, err)
		}
		if !holds {
			continue
		}
		observed := e.observe(obj)
		switch e {
		case c.current:
			return health.Result{Healthy: true, Status: health.Current, Rule: e.String(), Observed: observed}
		case c.failed:
			return health.Result{Fatal: true, Status: health.Failed, Rule: e.String(), Observed: observed,
				Message: fmt.Sprintf("%s has failed: %s holds%s", ref(obj), e, inParentheses(observed))}
		}
		return waiting(obj, e, observed, "holds")
	}
	return waiting(obj, c.current, c.current.observe(obj), "does not hold yet")
}

func waiting(obj *unstructured.Unstructured, e *Expression, observed []kudov1beta1.ObservedField, verb string) health.Result {
	return health.Result{Status: health.InProgress, Rule: e.String(), Observed: observed,
		Message: fmt.Sprintf("waiting for %s: %s %s%s", ref(obj), e, verb, inParentheses(observed))}
}

// unjudged: a rule that cannot be evaluated (past its cost or time, or a
// value of the wrong type) leaves the object waiting, saying why.
func unjudged(obj *unstructured.Unstructured, e *Expression, err error) health.Result {
	return health.Result{Status: health.InProgress, Rule: e.String(), Observed: e.observe(obj),
		Message: fmt.Sprintf("%s: %s cannot be evaluated: %v", ref(obj), e.Field, err)}
}

func ref(obj *unstructured.Unstructured) string { return obj.GetKind() + " " + obj.GetName() }

// eval evaluates e on obj. A field obj does not have, or an index past the
// end of a list, makes it not hold yet, as in Flux; has() and optional
// fields (.?) let a rule say otherwise.
func (e *Expression) eval(ctx context.Context, obj *unstructured.Unstructured, timeout time.Duration) (bool, error) {
	vars := make(map[string]any, len(variables))
	for _, v := range variables {
		if value, ok := obj.Object[v]; ok {
			vars[v] = value
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, _, err := e.program.ContextEval(ctx, vars)
	switch {
	case err != nil && absent(err):
		return false, nil
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return false, fmt.Errorf("took longer than %s, the longest a rule may", timeout)
	case err != nil:
		return false, err
	}
	holds, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("gives %s, not a bool", out.Type())
	}
	return holds, nil
}

func absent(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "no such key") || strings.HasPrefix(msg, "no such attribute") ||
		strings.HasPrefix(msg, "index out of bounds")
}

// observe shows the fields e reads as obj has them.
func (e *Expression) observe(obj *unstructured.Unstructured) []kudov1beta1.ObservedField {
	var out []kudov1beta1.ObservedField
	for _, path := range e.shown {
		if len(out) == MaxObserved {
			break
		}
		value := "<absent>"
		if v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...); err == nil && found {
			value = preview(v, MaxValueBytes)
		}
		out = append(out, kudov1beta1.ObservedField{Field: strings.Join(path, "."), Value: value})
	}
	return out
}

func inParentheses(observed []kudov1beta1.ObservedField) string {
	if len(observed) == 0 {
		return ""
	}
	parts := make([]string, len(observed))
	for n, o := range observed {
		parts[n] = o.Field + "=" + o.Value
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// preview is v as compact JSON, cut to at most limit bytes and a "…": a
// field of megabytes costs no more than its first limit bytes.
func preview(v any, limit int) string {
	var b strings.Builder
	writePreview(&b, v, limit)
	if b.Len() <= limit {
		return b.String()
	}
	s := b.String()
	cut := limit - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// writePreview writes v as JSON until b holds more than limit bytes.
func writePreview(b *strings.Builder, v any, limit int) {
	if b.Len() > limit {
		return
	}
	switch v := v.(type) {
	case string:
		if len(v) > limit {
			v = v[:limit]
		}
		q, _ := json.Marshal(v) // a string always encodes
		b.Write(q)
	case []any:
		b.WriteByte('[')
		for n, item := range v {
			if b.Len() > limit {
				return
			}
			if n > 0 {
				b.WriteByte(',')
			}
			writePreview(b, item, limit)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for n, key := range slices.Sorted(maps.Keys(v)) {
			if b.Len() > limit {
				return
			}
			if n > 0 {
				b.WriteByte(',')
			}
			writePreview(b, key, limit)
			b.WriteByte(':')
			writePreview(b, v[key], limit)
		}
		b.WriteByte('}')
	default:
		q, _ := json.Marshal(v) // numbers, bools and null of unstructured content
		b.Write(q)
	}
}

// fieldsRead lists the fields of the object an expression reads, as chains
// of field selections from one of its variables (status.phase, also
// status.?phase and metadata.labels['app']), in the order they appear, the
// longest of each chain (status.conditions.exists(...) reads
// status.conditions).
func fieldsRead(checked *cel.Ast) [][]string {
	operands := map[int64]bool{}
	var read [][]string
	ast.PreOrderVisit(checked.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if operand, _, ok := link(e); ok {
			operands[operand.ID()] = true
		}
		// Pre-order: a link's operand is noted before it is visited, and
		// only whole chains count (status.a.b reads status.a.b, not status.a).
		if path := chain(e); len(path) > 1 && !operands[e.ID()] {
			read = keepLongest(read, path)
		}
	}))
	return read
}

// link is one step of a chain: a field selection (status.phase,
// has(status.phase)), an optional one (status.?phase) or an index by a
// constant string (metadata.labels['app']), with its operand and field.
func link(e ast.Expr) (operand ast.Expr, field string, ok bool) {
	switch e.Kind() {
	case ast.SelectKind:
		return e.AsSelect().Operand(), e.AsSelect().FieldName(), true
	case ast.CallKind:
		call := e.AsCall()
		if !linkFunctions[call.FunctionName()] || len(call.Args()) != 2 || call.Args()[1].Kind() != ast.LiteralKind {
			break
		}
		if key, isString := call.Args()[1].AsLiteral().Value().(string); isString {
			return call.Args()[0], key, true
		}
	}
	return nil, "", false
}

// linkFunctions select a field or an entry: optional selection, index and
// optional index.
var linkFunctions = map[string]bool{"_?._": true, "_[_]": true, "_[?_]": true}

// chain is the path of a chain of links from a variable, or nil.
func chain(e ast.Expr) []string {
	var reversed []string
	for {
		operand, field, ok := link(e)
		if !ok {
			break
		}
		reversed, e = append(reversed, field), operand
	}
	if e.Kind() != ast.IdentKind || !slices.Contains(variables, e.AsIdent()) {
		return nil
	}
	path := []string{e.AsIdent()}
	for n := len(reversed) - 1; n >= 0; n-- {
		path = append(path, reversed[n])
	}
	return path
}

// keepLongest adds path to paths unless one extends it, dropping those it
// extends.
func keepLongest(paths [][]string, path []string) [][]string {
	for _, p := range paths {
		if isPrefix(path, p) {
			return paths
		}
	}
	return append(slices.DeleteFunc(paths, func(p []string) bool { return isPrefix(p, path) }), path)
}

// isPrefix reports whether p is a prefix of (or equal to) of.
func isPrefix(p, of []string) bool {
	return len(p) <= len(of) && slices.Equal(p, of[:len(p)])
}
