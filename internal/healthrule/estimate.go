package healthrule

import (
	"fmt"
	"math"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/parser"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// The estimate of a rule's cost takes each field it reads to be as large as
// the largest object there can be, as the API server takes a string of no
// maxLength: rules are compiled without a schema, and a field holds what
// its object's author puts there.
const (
	// maxObjectBytes is the largest object: the API server takes no larger
	// request.
	maxObjectBytes = uint64(celconfig.MaxRequestSizeBytes)
	// maxItems is the most items a list (or entries a map) of the object
	// holds, of two bytes each at least (0,).
	maxItems = maxObjectBytes / 2
	// itemBytes is the size of each item of a list a rule iterates over:
	// the list at its longest shares the object in items of the least size.
	// A rule that does with each byte of an item what it would with any
	// other costs as much so as on a list of one item of the whole object.
	itemBytes = 2
)

// estimatedCost refuses a rule whose cost, estimated on the largest object
// there can be, passes EstimatedCostLimit, as the API server refuses a CRD's
// validation rule ("estimated rule cost exceeds budget").
func estimatedCost(env *cel.Env, checked *cel.Ast, field string) error {
	estimate, err := env.EstimateCost(checked, newEstimator(checked))
	if err != nil {
		return &FieldError{field, err.Error()}
	}
	if estimate.Max <= EstimatedCostLimit {
		return nil
	}
	factor := fmt.Sprintf("%.1fx", float64(estimate.Max)/EstimatedCostLimit)
	if estimate.Max > 100*EstimatedCostLimit {
		factor = "more than 100x"
	}
	cost := fmt.Sprint(estimate.Max)
	if estimate.Max == math.MaxUint64 {
		cost = "no bound"
	}
	return &FieldError{field, fmt.Sprintf("estimated rule cost exceeds budget by factor of %s "+
		"(%s on an object of 3 MiB, where a rule may cost %d): it would build or read too much", factor, cost, EstimatedCostLimit)}
}

// estimator estimates the cost of a rule as callCosts counts it.
type estimator struct {
	// items are the expressions that read an item of a list the rule
	// iterates over: c and c.type in status.conditions.exists(c, c.type == 'Ready').
	items map[int64]bool
	// ranges are the lists it iterates over.
	ranges map[int64]bool
}

func newEstimator(checked *cel.Ast) *estimator {
	e := &estimator{items: map[int64]bool{}, ranges: map[int64]bool{}}
	e.find(checked.NativeRep().Expr(), map[string]bool{})
	return e
}

// find notes the items and ranges under x, given which of the variables
// in scope are items.
func (e *estimator) find(x ast.Expr, items map[string]bool) {
	switch x.Kind() {
	case ast.IdentKind:
		e.items[x.ID()] = items[x.AsIdent()]
	case ast.SelectKind:
		e.find(x.AsSelect().Operand(), items)
		e.items[x.ID()] = e.items[x.AsSelect().Operand().ID()]
	case ast.CallKind:
		call := x.AsCall()
		if call.IsMemberFunction() {
			e.find(call.Target(), items)
		}
		for _, arg := range call.Args() {
			e.find(arg, items)
		}
		if linkFunctions[call.FunctionName()] {
			e.items[x.ID()] = e.items[call.Args()[0].ID()]
		}
	case ast.ListKind:
		for _, item := range x.AsList().Elements() {
			e.find(item, items)
		}
	case ast.MapKind:
		for _, entry := range x.AsMap().Entries() {
			e.find(entry.AsMapEntry().Key(), items)
			e.find(entry.AsMapEntry().Value(), items)
		}
	case ast.StructKind:
		for _, field := range x.AsStruct().Fields() {
			e.find(field.AsStructField().Value(), items)
		}
	case ast.ComprehensionKind:
		comp := x.AsComprehension()
		e.find(comp.IterRange(), items)
		e.find(comp.AccuInit(), items)
		e.ranges[comp.IterRange().ID()] = true
		inner := map[string]bool{}
		for name, item := range items {
			inner[name] = item
		}
		inner[comp.AccuVar()] = false
		e.find(comp.Result(), inner)
		// The items of a literal list are no share of the object: each may
		// be as large.
		literal := comp.IterRange().Kind() == ast.ListKind || comp.IterRange().Kind() == ast.MapKind
		inner[comp.IterVar()] = !literal
		if comp.HasIterVar2() {
			inner[comp.IterVar2()] = !literal
		}
		e.find(comp.LoopCondition(), inner)
		e.find(comp.LoopStep(), inner)
	}
}

// EstimateSize is the size of a value CEL does not know the size of: an
// item's, a list's, or the object's.
func (e *estimator) EstimateSize(node checker.AstNode) *checker.SizeEstimate {
	switch {
	case isScalar(node.Type()):
		return nil // CEL's
	case e.items[node.Expr().ID()]:
		return &checker.SizeEstimate{Max: itemBytes}
	case e.ranges[node.Expr().ID()], node.Type().Kind() == types.ListKind, node.Type().Kind() == types.MapKind:
		return &checker.SizeEstimate{Max: maxItems}
	}
	return &checker.SizeEstimate{Max: maxObjectBytes}
}

func isScalar(t *types.Type) bool {
	switch t.Kind() {
	case types.BoolKind, types.IntKind, types.UintKind, types.DoubleKind, types.NullTypeKind,
		types.TimestampKind, types.DurationKind:
		return true
	}
	return false
}

// EstimateCallCost estimates the work of a call as sized counts it, its
// arguments as large as they can be. CEL's own estimate of _+_ of strings or
// bytes, string() and bytes() is sized's.
func (e *estimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	if target != nil {
		args = append([]checker.AstNode{*target}, args...)
	}
	c := estimatedCall{e: e, function: function, args: args}
	switch function {
	case operators.Add:
		if overloadID != overloads.AddList {
			return nil
		}
		return c.listConcatenation()
	case "trim", "lowerAscii", "upperAscii", "reverse", "charAt", "substring":
		return c.stringCopy()
	case "indexOf", "lastIndexOf", "replace", "split":
		return c.stringSearch()
	case "join", "format", "strings.quote":
		return c.stringBuild()
	case "base64.encode", "base64.decode":
		return c.base64Coding()
	case overloads.Matches:
		return c.regexpMatch()
	}
	return nil
}

// estimatedCall is a call whose cost is estimated: its function, and its
// arguments, the target first.
type estimatedCall struct {
	e        *estimator
	function string
	args     []checker.AstNode
}

// size is the size of argument n, as CEL computed it or as large as it can
// be; empty when the call has no such argument.
func (c estimatedCall) size(n int) checker.SizeEstimate {
	if n >= len(c.args) {
		return checker.SizeEstimate{}
	}
	if s := c.args[n].ComputedSize(); s != nil {
		return *s
	}
	return *c.e.EstimateSize(c.args[n])
}

// times is the size of n copies of s.
func times(n uint64, s checker.SizeEstimate) checker.SizeEstimate {
	return s.Multiply(checker.FixedSizeEstimate(n))
}

// callEstimate is the cost of a call that reads and builds so many bytes,
// and takes steps that are not a number of bytes, and the size of what it
// returns (nil when that is not a string, bytes or a list).
func callEstimate(read, built checker.SizeEstimate, steps checker.CostEstimate, result *checker.SizeEstimate) *checker.CallEstimate {
	return &checker.CallEstimate{CostEstimate: read.Add(built).MultiplyByCostFactor(perByte).Add(steps), ResultSize: result}
}

// listConcatenation is _+_ of lists, which copies them, 32 bytes an item.
func (c estimatedCall) listConcatenation() *checker.CallEstimate {
	// A comprehension adds to its result in place.
	n := c.size(1)
	if !isAccumulator(c.args[0]) {
		n = n.Add(c.size(0))
	}
	result := c.size(0).Add(c.size(1))
	return callEstimate(checker.SizeEstimate{}, times(32, n), checker.CostEstimate{}, &result)
}

// stringCopy is a function that returns the string it reads, or a part of
// it: trim, and those that make runes of it and a string of them.
func (c estimatedCall) stringCopy() *checker.CallEstimate {
	s := c.size(0)
	if c.function == "trim" {
		return callEstimate(s, checker.SizeEstimate{}, checker.CostEstimate{}, &s)
	}
	result := s
	if c.function == "charAt" {
		result = checker.SizeEstimate{Max: 1}
	}
	return callEstimate(s, times(5, s), checker.CostEstimate{}, &result)
}

// stringSearch is a function that looks for a string in another: indexOf
// and lastIndexOf, replace and split.
func (c estimatedCall) stringSearch() *checker.CallEstimate {
	s := c.size(0)
	switch c.function {
	case "replace":
		old, with := c.size(1), c.size(2)
		// As many replacements as the shortest old fits in s.
		n := s.Max
		if old.Min > 0 {
			n = s.Max / old.Min
		}
		built := checker.SizeEstimate{Max: add(s.Max, mul(n, with.Max))}
		return callEstimate(s, built, checker.CostEstimate{}, &built)
	case "split":
		pieces := checker.SizeEstimate{Max: add(s.Max, 1)}
		return callEstimate(s, times(32, pieces), checker.CostEstimate{}, &pieces)
	}
	sub := c.size(1)
	steps := s.MultiplyByCostFactor(perByte).Multiply(sub.MultiplyByCostFactor(perByte))
	return callEstimate(s.Add(sub), times(8, s).Add(times(4, sub)), steps, nil)
}

// stringBuild is a function that builds a string of its arguments: join,
// format and strings.quote.
func (c estimatedCall) stringBuild() *checker.CallEstimate {
	switch c.function {
	case "join":
		items, sep := c.size(0), c.size(1)
		n := items.Multiply(c.e.itemSize(c.args[0])).Add(items.Multiply(sep))
		return callEstimate(n, times(2, n), checker.CostEstimate{}, &n)
	case "format":
		items := c.size(1)
		n := c.size(0).Add(times(330, items)).Add(times(2, items.Multiply(c.e.itemSize(c.args[1]))))
		return callEstimate(checker.SizeEstimate{}, times(4, n), checker.CostEstimate{}, &n)
	}
	s := c.size(0)
	result := times(3, s).Add(checker.FixedSizeEstimate(2))
	return callEstimate(s, times(3, s).Add(times(3, result)), checker.CostEstimate{}, &result)
}

// base64Coding is base64.encode or base64.decode.
func (c estimatedCall) base64Coding() *checker.CallEstimate {
	s := c.size(0)
	if c.function == "base64.decode" {
		return callEstimate(s, times(2, s), checker.CostEstimate{}, &s)
	}
	result := checker.SizeEstimate{Min: s.Min * 4 / 3, Max: add(mul(4, s.Max)/3, 4)}
	return callEstimate(s, times(2, result), checker.CostEstimate{}, &result)
}

// regexpMatch is matches: a literal pattern is compiled once, with the
// program (literalPatterns); another at each call.
func (c estimatedCall) regexpMatch() *checker.CallEstimate {
	s := c.size(0)
	if pattern, literal := literalString(c.args[1]); literal {
		return callEstimate(s, checker.SizeEstimate{}, fixed(matchSteps(s.Max, regexpInsts(pattern))), nil)
	}
	insts := c.size(1).Max
	return callEstimate(s, checker.FixedSizeEstimate(regexpBytes(insts)), fixed(matchSteps(s.Max, insts)), nil)
}

func isAccumulator(node checker.AstNode) bool {
	if node.Expr().Kind() != ast.IdentKind {
		return false
	}
	name := node.Expr().AsIdent()
	return name == parser.AccumulatorName || name == parser.HiddenAccumulatorName
}

func fixed(cost uint64) checker.CostEstimate {
	return checker.CostEstimate{Max: cost}
}

func literalString(node checker.AstNode) (string, bool) {
	if node.Expr().Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := node.Expr().AsLiteral().(types.String)
	return string(s), ok
}

// itemSize is the size of an item of list: as large as the object unless
// CEL knows the type of its items has one size.
func (e *estimator) itemSize(list checker.AstNode) checker.SizeEstimate {
	if params := list.Type().Parameters(); len(params) == 1 && isScalar(params[0]) {
		return checker.FixedSizeEstimate(1)
	}
	return checker.SizeEstimate{Max: maxObjectBytes}
}
