package healthrule

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/decls"
	celenv "github.com/google/cel-go/common/env"
	"github.com/google/cel-go/common/functions"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	celref "github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// CEL counts a call as one unit of cost whatever it builds: eight chained
// 'a'.replace('a', 'aaaaaaaaaaaaaaaa') build 4 GiB for a cost of 8, and no
// deadline stops a call that runs. So a call is counted, as the API server
// counts those of a CRD's validation rules (k8s.io/apiserver/pkg/cel/library,
// cost.go), by the bytes it reads and builds, and a rule is bounded three
// times: when it is compiled, by its cost estimated on the largest object
// there can be (estimate.go); before each call, which may not cost more than
// a whole evaluation; and as it runs, by CostLimit. The calls of an
// evaluation so build no more than twice CostLimit's worth of bytes, 20 MB.

// perByte is CEL's cost of reading or building one byte of a string.
const perByte = common.StringTraversalCostFactor

// bytesBound is the most bytes one call may build or read.
const bytesBound = uint64(CostLimit / perByte)

// work is what one call does: the bytes it reads and builds, and the steps
// of a search, which are not a number of bytes.
type work struct {
	read, built, steps uint64
}

func (w work) cost() uint64 {
	return add(toCost(float64(add(w.read, w.built))*perByte), w.steps)
}

// sized are the functions whose work depends on the size of their
// arguments, with the work of a call on args, known before it runs; false
// for arguments of other types. Allocations are counted as Go makes them:
// ext.Strings turns a string into runes, four bytes each, for charAt,
// indexOf, lastIndexOf, lowerAscii, upperAscii, reverse and substring.
var sized = map[string]func(args []celref.Val) (work, bool){
	operators.Add: concatenation,
	"string":      conversion,
	"bytes":       conversion,
	"trim": func(args []celref.Val) (work, bool) {
		s, ok := bytesOf(args[0])
		return work{read: s}, ok
	},
	"lowerAscii":  toRunes,
	"upperAscii":  toRunes,
	"reverse":     toRunes,
	"charAt":      toRunes,
	"substring":   toRunes,
	"indexOf":     search,
	"lastIndexOf": search,
	"replace":     replacement,
	"split":       split,
	"join":        join,
	"format": func(args []celref.Val) (work, bool) {
		f, okF := args[0].(types.String)
		list, okList := args[1].(traits.Lister)
		// A builder that doubles, and a string for each clause.
		return work{built: mul(4, formatted(string(f), list))}, okF && okList
	},
	"strings.quote": func(args []celref.Val) (work, bool) {
		// An invalid byte becomes \uFFFD, three bytes; a builder that
		// doubles, and the quotes added by concatenation.
		s, ok := bytesOf(args[0])
		return work{read: s, built: 3*s + 3*(3*s+2)}, ok
	},
	"base64.encode": func(args []celref.Val) (work, bool) {
		b, ok := bytesOf(args[0])
		return work{read: b, built: 2 * (4*b/3 + 4)}, ok
	},
	"base64.decode": func(args []celref.Val) (work, bool) {
		s, ok := bytesOf(args[0])
		return work{read: s, built: 2 * s}, ok
	},
	overloads.Matches: func(args []celref.Val) (work, bool) {
		s, okS := bytesOf(args[0])
		pattern, okP := args[1].(types.String)
		if !okS || !okP {
			return work{}, false
		}
		insts := regexpInsts(string(pattern))
		return work{read: s, built: regexpBytes(insts), steps: matchSteps(s, insts)}, true
	},
}

// concatenation is _+_ of strings, bytes or lists (concatenate copies
// them: an interface value for each item, and the value, 32 bytes for a
// short string; a comprehension adds to its result in place); of numbers or
// times it builds nothing that grows.
func concatenation(args []celref.Val) (work, bool) {
	a, okA := bytesOf(args[0])
	b, okB := bytesOf(args[1])
	if okA && okB {
		return work{built: a + b}, true
	}
	la, okA := args[0].(traits.Lister)
	lb, okB := args[1].(traits.Lister)
	if !okA || !okB {
		return work{}, false
	}
	n := uint64(lb.Size().(types.Int))
	if _, accumulates := la.(traits.MutableLister); !accumulates {
		n += uint64(la.Size().(types.Int))
	}
	return work{built: 32 * n}, true
}

// conversion is string(bytes) or bytes(string).
func conversion(args []celref.Val) (work, bool) {
	s, ok := bytesOf(args[0])
	return work{built: s}, ok
}

// toRunes is a function that makes runes of a string, and a string of
// them.
func toRunes(args []celref.Val) (work, bool) {
	s, ok := bytesOf(args[0])
	return work{read: s, built: 5 * s}, ok
}

// search is indexOf or lastIndexOf: both strings to runes (lastIndexOf
// twice), then a search that compares each offset of one with the other.
func search(args []celref.Val) (work, bool) {
	s, okS := bytesOf(args[0])
	sub, okSub := bytesOf(args[1])
	return work{read: s + sub, built: 8*s + 4*sub, steps: toCost(float64(s) * perByte * float64(sub) * perByte)}, okS && okSub
}

// replacement is replace: strings.Replace counts what it replaces, then
// builds the result at its size.
func replacement(args []celref.Val) (work, bool) {
	s, okS := args[0].(types.String)
	old, okOld := args[1].(types.String)
	with, okWith := args[2].(types.String)
	if !okS || !okOld || !okWith {
		return work{}, false
	}
	n, ok := atMost(uint64(strings.Count(string(s), string(old))), args, 3)
	if !ok {
		return work{}, false
	}
	kept := uint64(len(s)) - n*uint64(len(old)) // old occurs n times in s
	return work{read: uint64(len(s)), built: add(kept, mul(n, uint64(len(with))))}, true
}

// atMost is n, or the limit a call's optional argument k sets when it is
// smaller (replace's and split's count: negative for all); false when the
// argument is not an int.
func atMost(n uint64, args []celref.Val, k int) (uint64, bool) {
	if len(args) <= k {
		return n, true
	}
	limit, ok := args[k].(types.Int)
	if !ok {
		return 0, false
	}
	if limit >= 0 && uint64(limit) < n {
		return uint64(limit), true
	}
	return n, true
}

// split builds a string header for each piece, and a CEL value once it is
// read.
func split(args []celref.Val) (work, bool) {
	s, okS := args[0].(types.String)
	sep, okSep := args[1].(types.String)
	if !okS || !okSep {
		return work{}, false
	}
	pieces, ok := atMost(uint64(strings.Count(string(s), string(sep)))+1, args, 2)
	if !ok {
		return work{}, false
	}
	return work{read: uint64(len(s)), built: 32 * pieces}, true
}

// join builds the sum of its items, which may all be one string, with a
// builder that doubles; they are counted until past the bound.
func join(args []celref.Val) (work, bool) {
	list, ok := args[0].(traits.Lister)
	if !ok {
		return work{}, false
	}
	var sep uint64
	if len(args) == 2 {
		if sep, ok = bytesOf(args[1]); !ok {
			return work{}, false
		}
	}
	var n uint64
	for it := list.Iterator(); it.HasNext() == types.True && n <= bytesBound; {
		item, _ := bytesOf(it.Next())
		n = add(n, item+max(sep, 1))
	}
	return work{read: n, built: mul(2, n)}, true
}

// formatted bounds what string.format builds of f and args, counted until
// past the bound: each clause may write its argument in hexadecimal (two
// bytes a byte), a number of up to 330 bytes (a float64 in full), and the
// precision it asks for.
func formatted(f string, args traits.Lister) uint64 {
	n := uint64(len(f))
	for i := 0; i < len(f) && n <= bytesBound; i++ {
		if f[i] != '%' {
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			i++
			continue
		}
		n += 330
		if i+1 < len(f) && f[i+1] == '.' {
			var precision uint64
			for i += 2; i < len(f) && f[i] >= '0' && f[i] <= '9' && precision <= bytesBound; i++ {
				precision = precision*10 + uint64(f[i]-'0')
			}
			n = add(n, precision)
		}
	}
	return add(n, rendered(args, 1, bytesBound))
}

// rendered bounds the bytes of v as string.format writes it, counted until
// past limit, copies times: a map's entries are formatted before they are
// copied, once more for each map around them.
func rendered(v celref.Val, copies, limit uint64) uint64 {
	switch v := v.(type) {
	case types.String, types.Bytes:
		b, _ := bytesOf(v)
		return mul(2*copies, b)
	case traits.Mapper:
		n := 2 * copies
		for it := v.Iterator(); it.HasNext() == types.True && n <= limit; {
			key := it.Next()
			value, _ := v.Find(key)
			n = add(n, add(4*copies, add(rendered(key, copies+1, limit), rendered(value, copies+1, limit))))
		}
		return n
	case traits.Lister:
		n := 2 * copies
		for it := v.Iterator(); it.HasNext() == types.True && n <= limit; {
			n = add(n, add(2*copies, rendered(it.Next(), copies, limit)))
		}
		return n
	}
	return 330 * copies
}

// regexpBytes is what regexp.Compile allocates for a program of insts
// instructions: about 250 bytes each (a{1000} makes a thousand), and 40 KB
// whatever the pattern.
func regexpBytes(insts uint64) uint64 {
	return add(40<<10, mul(256, insts))
}

// matchSteps is CEL's cost of matching s bytes, counted for each
// instruction of the program rather than each byte of the pattern, which
// a{1000} would cheat.
func matchSteps(s, insts uint64) uint64 {
	return toCost((1 + float64(s)) * perByte * float64(insts) * common.RegexStringLengthCostFactor)
}

// regexpInsts bounds the instructions of the program of pattern. A pattern
// too long to compile within the bound is not parsed: one for each byte.
func regexpInsts(pattern string) uint64 {
	if regexpBytes(uint64(len(pattern))) > bytesBound {
		return uint64(len(pattern))
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return uint64(len(pattern)) // it fails as it compiles
	}
	return max(uint64(len(pattern)), insts(re))
}

func insts(re *syntax.Regexp) uint64 {
	n := uint64(1 + len(re.Rune))
	for _, sub := range re.Sub {
		n = add(n, insts(sub))
	}
	if re.Op == syntax.OpRepeat {
		n = mul(n, uint64(max(re.Min, re.Max))+1)
	}
	return n
}

// bytesOf is the length of a string or bytes.
func bytesOf(v celref.Val) (uint64, bool) {
	switch v := v.(type) {
	case types.String:
		return uint64(len(v)), true
	case types.Bytes:
		return uint64(len(v)), true
	}
	return 0, false
}

// compiledMatches is the overload of a matches whose pattern is compiled
// with the rule.
const compiledMatches = "matches_compiled"

// callCosts charges each call of a program for its work, once it has run.
type callCosts struct {
	// insts are the instructions of the patterns compiled with the
	// program.
	insts map[string]uint64
}

func newCallCosts() *callCosts {
	return &callCosts{insts: map[string]uint64{}}
}

func (c *callCosts) CallCost(function, overloadID string, args []celref.Val, _ celref.Val) *uint64 {
	var w work
	var ok bool
	if overloadID == compiledMatches {
		w, ok = c.compiled(args)
	} else if of := sized[function]; of != nil {
		w, ok = of(args)
	}
	if !ok {
		return nil
	}
	cost := w.cost()
	return &cost
}

func (c *callCosts) compiled(args []celref.Val) (work, bool) {
	s, okS := bytesOf(args[0])
	pattern, okP := args[1].(types.String)
	return work{read: s, steps: matchSteps(s, c.insts[string(pattern)])}, okS && okP
}

// literalPatterns compiles the literal pattern of a matches once, with the
// program, rather than at each call; a pattern whose program would cost more
// than CostLimit is refused.
func (c *callCosts) literalPatterns() cel.ProgramOption {
	return cel.OptimizeRegex(&interpreter.RegexOptimization{Function: overloads.Matches, RegexIndex: 1,
		Factory: func(call interpreter.InterpretableCall, pattern string) (interpreter.InterpretableCall, error) {
			insts := regexpInsts(pattern)
			if w := (work{built: regexpBytes(insts)}); w.cost() > CostLimit {
				return nil, fmt.Errorf("its pattern would compile to %d instructions, a cost of %d: more than the %d a rule may cost",
					insts, w.cost(), CostLimit)
			}
			re, err := regexp.Compile(pattern)
			if err != nil {
				return nil, err
			}
			c.insts[pattern] = insts
			return interpreter.NewCall(call.ID(), call.Function(), compiledMatches, call.Args(), func(args ...celref.Val) celref.Val {
				w, ok := c.compiled(args)
				if !ok {
					return types.NoSuchOverloadErr()
				}
				refuse(overloads.Matches, w)
				return types.Bool(re.MatchString(string(args[0].(types.String))))
			}), nil
		}})
}

// boundedCalls rebinds the functions of env that sized counts so that a
// call costing more than CostLimit by itself is refused before it runs: CEL
// charges a call once it has returned, having built what it builds.
func boundedCalls(env *cel.Env) ([]cel.EnvOption, error) {
	var opts []cel.EnvOption
	for name, fn := range env.Functions() {
		if sized[name] == nil {
			continue
		}
		bindings, err := fn.Bindings()
		if err != nil {
			return nil, err
		}
		byID := map[string]*functions.Overload{}
		for _, b := range bindings {
			byID[b.Operator] = b
		}
		// A binding for all overloads cannot be bound again: _+_ and
		// matches are bounded where they are declared; string() and bytes()
		// build no more than they are given, which the evaluation's cost
		// counts.
		if slices.ContainsFunc(fn.OverloadDecls(), func(o *decls.OverloadDecl) bool { return byID[o.ID()] == nil }) {
			continue
		}
		var bound []cel.FunctionOpt
		for _, o := range fn.OverloadDecls() {
			opts := []cel.OverloadOpt{bounded(name, byID[o.ID()]), cel.OverloadOperandTrait(o.OperandTrait())}
			if o.IsNonStrict() {
				opts = append(opts, cel.OverloadIsNonStrict())
			}
			if o.IsMemberFunction() {
				bound = append(bound, cel.MemberOverload(o.ID(), o.ArgTypes(), o.ResultType(), opts...))
			} else {
				bound = append(bound, cel.Overload(o.ID(), o.ArgTypes(), o.ResultType(), opts...))
			}
		}
		opts = append(opts, cel.Function(name, bound...))
	}
	return opts, nil
}

// bounded is b, refusing a call that would cost more than CostLimit.
func bounded(function string, b *functions.Overload) cel.OverloadOpt {
	switch {
	case b.Unary != nil:
		return cel.UnaryBinding(func(arg celref.Val) celref.Val {
			refuseCall(function, arg)
			return b.Unary(arg)
		})
	case b.Binary != nil:
		return cel.BinaryBinding(func(lhs, rhs celref.Val) celref.Val {
			refuseCall(function, lhs, rhs)
			return b.Binary(lhs, rhs)
		})
	}
	return cel.FunctionBinding(func(args ...celref.Val) celref.Val {
		refuseCall(function, args...)
		return b.Function(args...)
	})
}

var standardFunctions = func() map[string]*decls.FunctionDecl {
	env, err := cel.NewEnv()
	if err != nil {
		panic(err) // the standard library
	}
	return env.Functions()
}()

// stdlib is the standard library but for the functions bound here: its
// binding of _+_ and matches is one for all their overloads, which cannot be
// bound again.
var stdlib = cel.StdLib(cel.StdLibSubset(&celenv.LibrarySubset{ExcludeFunctions: []*celenv.Function{
	{Name: operators.Add}, {Name: overloads.Matches},
}}))

// concatenate is the standard library's _+_, bounded, and copying lists:
// CEL concatenates lists without copying them, and reads an item of l + l +
// ... by going down the concatenations, each time, on every access.
var concatenate = rebound(operators.Add, traits.AdderType, func(lhs, rhs celref.Val) celref.Val {
	refuseCall(operators.Add, lhs, rhs)
	a, okA := lhs.(traits.Lister)
	b, okB := rhs.(traits.Lister)
	if _, accumulates := lhs.(traits.MutableLister); !okA || !okB || accumulates {
		return lhs.(traits.Adder).Add(rhs)
	}
	switch {
	case a.Size() == types.IntZero:
		return rhs
	case b.Size() == types.IntZero:
		return lhs
	}
	items := make([]celref.Val, 0, int(a.Size().(types.Int)+b.Size().(types.Int)))
	for _, l := range []traits.Lister{a, b} {
		for it := l.Iterator(); it.HasNext() == types.True; {
			items = append(items, it.Next())
		}
	}
	return types.NewRefValList(types.DefaultTypeAdapter, items)
})

// matches is the standard library's, bounded.
var matches = rebound(overloads.Matches, traits.MatcherType, func(s, pattern celref.Val) celref.Val {
	refuseCall(overloads.Matches, s, pattern)
	return s.(traits.Matcher).Match(pattern)
})

// rebound declares the function name of the standard library again, with
// binding for all its overloads.
func rebound(name string, trait int, binding functions.BinaryOp) cel.EnvOption {
	var opts []cel.FunctionOpt
	for _, o := range standardFunctions[name].OverloadDecls() {
		if o.IsMemberFunction() {
			opts = append(opts, cel.MemberOverload(o.ID(), o.ArgTypes(), o.ResultType()))
		} else {
			opts = append(opts, cel.Overload(o.ID(), o.ArgTypes(), o.ResultType()))
		}
	}
	return cel.Function(name, append(opts, cel.SingletonBinaryBinding(binding, trait))...)
}

func refuseCall(function string, args ...celref.Val) {
	if w, ok := sized[function](args); ok {
		refuse(function, w)
	}
}

// refuse cancels the evaluation, as CEL does past CostLimit, before a call
// of function that would cost more than CostLimit by itself. It does not
// fail the call, which f() || true would absorb.
func refuse(function string, w work) {
	if w.cost() <= CostLimit {
		return
	}
	what := fmt.Sprintf("%s would cost %d by itself", function, w.cost())
	if w.built > w.read {
		what = fmt.Sprintf("%s would build %d bytes, a cost of %d by itself", function, w.built, w.cost())
	}
	panic(interpreter.EvalCancelledError{Cause: interpreter.CostLimitExceeded,
		Message: "operation cancelled: actual cost limit exceeded: " + what})
}

// add, mul and toCost saturate at the largest uint64.
func add(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

func mul(a, b uint64) uint64 {
	if b != 0 && a > math.MaxUint64/b {
		return math.MaxUint64
	}
	return a * b
}

func toCost(f float64) uint64 {
	if f >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Ceil(f))
}
