package render

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/Masterminds/sprig/v3"
)

const (
	environment = "which cannot read the manager's environment or files"
	network     = "which cannot reach the network from the manager (a DNS query would send what the name holds out of the cluster)"
)

// sandboxed are the sprig functions templates must not call, and why. KUDO
// left out env, expandenv and the path functions; getHostByName resolves
// names from the manager's pod, so a template could send a secret parameter
// out in a DNS query. The other functions stay within the process: os*
// only split strings, dates read the clock and zoneinfo, the crypto
// functions read crypto/rand.
var sandboxed = map[string]string{
	"env": environment, "expandenv": environment,
	"base": environment, "dir": environment, "clean": environment, "ext": environment, "isAbs": environment,
	"getHostByName": network,
}

// funcs are what templates may call, as parsing knows them; each render
// calls them bound to its budget (bind).
var funcs = func() template.FuncMap {
	f := sprig.TxtFuncMap()
	for name := range sandboxed {
		delete(f, name)
	}
	f["toYaml"] = toYaml
	// text/template's builtins that format their arguments, as they are,
	// so that they are bound too.
	f["print"], f["printf"], f["println"] = fmt.Sprint, fmt.Sprintf, fmt.Sprintln
	f["html"], f["js"], f["urlquery"] = template.HTMLEscaper, template.JSEscaper, template.URLQueryEscaper
	return f
}()

// sandbox is a parsed template whose functions are bound to a budget, for
// one render at a time.
type sandbox struct {
	t *template.Template
	b budget
}

func newSandbox(parsed *template.Template) *sandbox {
	s := &sandbox{}
	bound := template.FuncMap{enterFunc: s.enterTemplate, leaveFunc: s.leaveTemplate, printFunc: s.printValue, compareFunc: s.compareValue}
	for name, fn := range funcs {
		bound[name] = s.bind(name, fn)
	}
	// Clone shares the parse trees and copies only the functions.
	t, _ := parsed.Clone()
	s.t = t.Funcs(bound)
	return s
}

// bind makes fn check the budget before and after each call: the deadline,
// the size of its arguments (which it may format), what it would make when
// its arguments say (prechecks), and what it made.
func (s *sandbox) bind(name string, fn any) any {
	f := reflect.ValueOf(fn)
	variadic := f.Type().IsVariadic()
	walk, pre := !shallow[name], prechecks[name]
	made := !passThrough[name]
	return reflect.MakeFunc(f.Type(), func(args []reflect.Value) []reflect.Value {
		b := &s.b
		if err := b.before(args, walk, pre); err != nil {
			// text/template reports a function's panic as its error.
			panic(err)
		}
		var out []reflect.Value
		if variadic {
			out = f.CallSlice(args)
		} else {
			out = f.Call(args)
		}
		if len(out) == 2 && !out[1].IsNil() || !made {
			return out
		}
		if err := b.after(out[0], deep[name]); err != nil {
			panic(err)
		}
		return out
	}).Interface()
}

func (b *budget) before(args []reflect.Value, walk bool, pre precheck) error {
	if b.err == nil {
		b.checkTime()
	}
	if b.err != nil {
		return b.err
	}
	if walk {
		most, n := b.limits.MaxOutput, 0
		for _, a := range args {
			if n += formatted(a.Interface(), most-n); n > most {
				return b.tooBigFormatted("its arguments come to")
			}
		}
	}
	if pre != nil {
		return pre(b, args)
	}
	return nil
}

// after checks what a function made, and counts it.
func (b *budget) after(v reflect.Value, deep bool) error {
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	var n int
	switch v.Kind() {
	case reflect.String:
		if n = v.Len(); n > b.limits.MaxOutput {
			return b.tooBig("the result is", n)
		}
	case reflect.Slice, reflect.Map:
		if v.Len() > maxItems {
			return tooMany(v.Len())
		}
		n = 16 * v.Len()
		if v.Kind() == reflect.Map {
			n *= 4
		}
	case reflect.Struct, reflect.Pointer:
		deep = true
	}
	if deep {
		n = formatted(v.Interface(), madeFactor*b.limits.MaxOutput)
	}
	return b.charge(n)
}

// shallow functions look only at the top of their arguments, which they
// never format: walking a big list at each call would make loops over it slow.
var shallow = names("first", "mustFirst", "last", "mustLast", "rest", "mustRest", "initial", "mustInitial",
	"append", "push", "mustAppend", "mustPush", "prepend", "mustPrepend", "concat", "reverse", "mustReverse",
	"chunk", "mustChunk", "compact", "mustCompact", "list", "tuple", "get", "hasKey", "set", "unset", "pick", "omit",
	"pluck", "keys", "values", "dig", "empty", "coalesce", "default", "ternary", "all", "any",
	"kindOf", "kindIs", "typeOf", "typeIs", "typeIsLike")

// passThrough functions return one of their arguments, or a part of one:
// they make nothing.
var passThrough = names("first", "mustFirst", "last", "mustLast", "get", "dig", "coalesce", "default", "ternary",
	"set", "unset", "merge", "mustMerge", "mergeOverwrite", "mustMergeOverwrite", "slice", "mustSlice")

// deep functions make all they return anew, however deep.
var deep = names("deepCopy", "mustDeepCopy", "fromJson", "mustFromJson")

func names(list ...string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, n := range list {
		m[n] = true
	}
	return m
}

// A precheck refuses a call whose arguments say it would make more than a
// template may: the function would allocate it before anything could stop it.
type precheck func(b *budget, args []reflect.Value) error

var prechecks = map[string]precheck{
	"repeat": func(b *budget, a []reflect.Value) error {
		return b.fits(mul(int(a[0].Int()), a[1].Len()))
	},
	"indent":  func(b *budget, a []reflect.Value) error { return b.fits(indented(a)) },
	"nindent": func(b *budget, a []reflect.Value) error { return b.fits(1 + indented(a)) },
	"replace": func(b *budget, a []reflect.Value) error {
		old, repl, src := a[0].String(), a[1].String(), a[2].String()
		return b.fits(len(src) + mul(strings.Count(src, old), len(repl)-len(old)))
	},
	"regexReplaceAll":            regexReplaced(false),
	"mustRegexReplaceAll":        regexReplaced(false),
	"regexReplaceAllLiteral":     regexReplaced(true),
	"mustRegexReplaceAllLiteral": regexReplaced(true),
	"join": func(b *budget, a []reflect.Value) error {
		list := a[1].Interface()
		return b.fits(formatted(list, b.limits.MaxOutput) + mul(lenOf(a[1])-1, a[0].Len()))
	},
	"wrapWith": func(b *budget, a []reflect.Value) error {
		// A line break at each space and every width characters, at most.
		s, width := a[2].String(), max(int(a[0].Int()), 1)
		return b.fits(len(s) + mul(strings.Count(s, " ")+len(s)/width+1, a[1].Len()))
	},
	"printf": func(b *budget, a []reflect.Value) error {
		return b.fits(printed(a[0].String(), a[1], b.limits.MaxOutput))
	},
	"until": func(_ *budget, a []reflect.Value) error { return items(steps(0, int(a[0].Int()), sign(a[0].Int()))) },
	"untilStep": func(_ *budget, a []reflect.Value) error {
		return items(steps(int(a[0].Int()), int(a[1].Int()), int(a[2].Int())))
	},
	"seq":              func(_ *budget, a []reflect.Value) error { return items(seqSteps(a[0].Interface().([]int))) },
	"splitList":        func(_ *budget, a []reflect.Value) error { return items(pieces(a[0].String(), a[1].String()), nil) },
	"split":            func(_ *budget, a []reflect.Value) error { return items(pieces(a[0].String(), a[1].String()), nil) },
	"splitn":           splitn,
	"regexSplit":       atMostItems,
	"mustRegexSplit":   atMostItems,
	"regexFindAll":     atMostItems,
	"mustRegexFindAll": atMostItems,
	"append":           appended,
	"push":             appended,
	"mustAppend":       appended,
	"mustPush":         appended,
	"prepend":          appended,
	"mustPrepend":      appended,
	"concat": func(_ *budget, a []reflect.Value) error {
		n := 0
		for i := 0; i < a[0].Len(); i++ {
			n += lenOf(a[0].Index(i))
		}
		return items(n, nil)
	},
	"set":                setKey,
	"merge":              merged,
	"mustMerge":          merged,
	"mergeOverwrite":     merged,
	"mustMergeOverwrite": merged,
	"randAlpha":          randomBytes(1),
	"randAlphaNum":       randomBytes(1),
	"randAscii":          randomBytes(1),
	"randNumeric":        randomBytes(1),
	// base64 of the bytes.
	"randBytes": randomBytes(4.0 / 3),
	"genPrivateKey": func(_ *budget, a []reflect.Value) error {
		if a[0].String() == "dsa" {
			// The deadline cannot stop it: the parameters take seconds,
			// at times minutes, to find.
			return limitErrorf("DSA keys take too long to make, and Go deprecates them: make an ecdsa or ed25519 key")
		}
		return nil
	},
}

// fits refuses a result of n bytes, more than MaxOutput.
func (b *budget) fits(n int) error {
	if n > b.limits.MaxOutput {
		return b.tooBig("the result would be", n)
	}
	return nil
}

// items refuses a list of n items, more than maxItems, or a loop that would
// not end.
func items(n int, err error) error {
	if err == nil && n > maxItems {
		err = tooMany(n)
	}
	return err
}

func indented(a []reflect.Value) int {
	s := a[1].String()
	return len(s) + mul(int(a[0].Int()), strings.Count(s, "\n")+1)
}

// regexReplaced bounds what replacing the matches of a regular expression
// makes: each match replaced by the text of repl, whose $1 and ${name} each
// repeat at most what the match held. An empty expression matches between
// any two bytes; matches are counted only when that many would be too many.
func regexReplaced(literal bool) precheck {
	return func(b *budget, a []reflect.Value) error {
		s, repl := a[1].String(), a[2].String()
		refs := 0
		if !literal {
			refs = strings.Count(repl, "$")
		}
		size := func(matches, text int) int { return len(s) + mul(matches, text) + mul(max(refs-1, 0), len(s)) }
		if size(len(s)+1, len(repl)) <= b.limits.MaxOutput {
			return nil
		}
		re, err := regexp.Compile(a[0].String())
		if err != nil {
			return nil // the function says so
		}
		text := len(repl)
		if !literal {
			// repl expanded with every group empty.
			none := make([]int, 2*(re.NumSubexp()+1))
			for i := range none {
				none[i] = -1
			}
			text = len(re.ExpandString(nil, repl, "", none))
		}
		matches := 0
		re.ReplaceAllStringFunc(s, func(string) string { matches++; return "" })
		return b.fits(size(matches, text))
	}
}

// printed bounds what fmt.Sprintf writes: the format, the widths and
// precisions it asks for (fmt takes none over 10^6; * takes one from the
// arguments), what it writes for a verb without argument (%!d(MISSING)) or
// an argument without verb (%!(EXTRA type=value)), and the arguments
// formatted, each once, or each as often as the format refers to them by
// index.
func printed(format string, args reflect.Value, most int) int {
	n, verbs, indexed, number := len(format), 0, false, 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			if c >= '0' && c <= '9' {
				number = min(number*10+int(c-'0'), 1e6)
				continue
			}
			n, number = n+number, 0
			if c == '*' {
				n += 1e6
			} else if c == '[' {
				indexed = true
			} else if !strings.ContainsRune("+-# 0.]", rune(c)) {
				verbs++
				break
			}
		}
	}
	n += number + 16*verbs
	for i := 0; i < args.Len() && n <= most; i++ {
		size := 32 + formatted(args.Index(i).Interface(), most)
		if indexed {
			size = mul(size, verbs)
		}
		n += size
	}
	return n
}

// steps counts the items of sprig's untilStep, whose loop never ends when
// its last step would overflow.
func steps(start, stop, step int) (int, error) {
	var d, s uint64
	switch {
	case start < stop && step > 0:
		d, s = uint64(stop)-uint64(start), uint64(step)
	case stop < start && step < 0:
		d, s = uint64(start)-uint64(stop), -uint64(step)
	default:
		return 0, nil
	}
	n := d / s
	if d%s != 0 {
		n++
	}
	if n > maxItems {
		return int(min(n, math.MaxInt)), nil
	}
	last := start + (int(n)-1)*step
	if step > 0 && last > math.MaxInt-step || step < 0 && last < math.MinInt-step {
		return 0, limitErrorf("the loop would not end: its last step overflows")
	}
	return int(n), nil
}

func sign(n int64) int {
	if n < 0 {
		return -1
	}
	return 1
}

// seqSteps are the items of sprig's seq, which calls untilStep so.
func seqSteps(p []int) (int, error) {
	switch len(p) {
	case 1:
		inc := 1
		if p[0] < 1 {
			inc = -1
		}
		return steps(1, p[0]+inc, inc)
	case 2:
		inc := 1
		if p[1] < p[0] {
			inc = -1
		}
		return steps(p[0], p[1]+inc, inc)
	case 3:
		inc := 1
		if p[2] < p[0] {
			if inc = -1; p[1] > 0 {
				return 0, nil
			}
		}
		return steps(p[0], p[2]+inc, p[1])
	}
	return 0, nil
}

// pieces counts what strings.Split makes.
func pieces(sep, s string) int {
	if sep == "" {
		return utf8.RuneCountInString(s)
	}
	return strings.Count(s, sep) + 1
}

func splitn(_ *budget, a []reflect.Value) error {
	n := pieces(a[0].String(), a[2].String())
	if limit := int(a[1].Int()); limit >= 0 {
		n = min(n, limit)
	}
	return items(n, nil)
}

// atMostItems has a regexp function find one match more than a list may
// hold, not all: what it finds then is refused after the call.
func atMostItems(_ *budget, a []reflect.Value) error {
	if n := a[2].Int(); n < 0 || n > maxItems {
		a[2] = reflect.ValueOf(maxItems + 1)
	}
	return nil
}

func appended(_ *budget, a []reflect.Value) error { return items(lenOf(a[0])+1, nil) }

// lenOf is the length of a list, 0 for what is not one.
func lenOf(v reflect.Value) int {
	if v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
		return v.Len()
	}
	return 0
}

var holdsItself = limitErrorf("the dict would hold itself, which nothing could print")

func setKey(_ *budget, a []reflect.Value) error {
	d := a[0]
	if d.IsNil() {
		return nil
	}
	if !d.MapIndex(a[1]).IsValid() && d.Len() >= maxItems {
		return tooMany(d.Len() + 1)
	}
	if holds(a[2].Interface(), map[uintptr]bool{d.Pointer(): true}) {
		return holdsItself
	}
	return nil
}

// merged refuses to merge into a dict what holds it or a dict it holds.
func merged(_ *budget, a []reflect.Value) error {
	n := a[0].Len()
	for i := 0; i < a[1].Len(); i++ {
		n += a[1].Index(i).Len()
	}
	if n > maxItems {
		return tooMany(n)
	}
	if holds(a[1].Interface(), mapsOf(a[0].Interface())) {
		return holdsItself
	}
	return nil
}

func randomBytes(factor float64) precheck {
	return func(b *budget, a []reflect.Value) error {
		return b.fits(int(min(float64(a[0].Int())*factor, huge)))
	}
}

// huge is more than any limit, and a few of it add up without overflowing.
const huge = math.MaxInt / 8

// mul is a*b, 0 when either is negative, and at most huge.
func mul(a, b int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > huge/b {
		return huge
	}
	return a * b
}

// The functions guard adds calls to (guard.go).

func (s *sandbox) enterTemplate() string {
	b := &s.b
	if b.depth++; b.depth > maxNesting {
		b.stop("", limitErrorf("templates call templates more than %d deep", maxNesting))
	}
	b.checkTime()
	return ""
}

func (s *sandbox) leaveTemplate() string {
	s.b.depth--
	return ""
}

// printValue returns what an action prints, or, when it would write more than
// MaxOutput, nothing and stops the render: the writer returns the error.
func (s *sandbox) printValue(at string, v any) reflect.Value {
	b := &s.b
	if b.err == nil && formatted(v, b.limits.MaxOutput) > b.limits.MaxOutput {
		b.stop(at, b.tooBigFormatted("printing a value of"))
	}
	if b.err != nil {
		return reflect.Value{}
	}
	return reflect.ValueOf(v)
}

// nilArgument is nil as eq and ne see a nil field: text/template hands them
// values as they are, where a pipeline digs an empty interface down to an
// invalid value, which they would refuse. An error interface is not dug.
var nilArgument = reflect.Zero(reflect.TypeFor[error]())

// compareValue returns an argument of eq or ne, refusing one that would
// format to more than MaxOutput.
func (s *sandbox) compareValue(v any) reflect.Value {
	b := &s.b
	if formatted(v, b.limits.MaxOutput) > b.limits.MaxOutput {
		panic(b.tooBigFormatted("comparing a value of"))
	}
	if v == nil {
		return nilArgument
	}
	return reflect.ValueOf(v)
}
