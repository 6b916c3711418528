package render

import (
	"bytes"
	"fmt"
	"runtime"
	"time"

	"github.com/kudo-ng/kudo/internal/fair"
)

// Limits bound each render of a template. A template is a program that
// whoever can create an OperatorVersion writes and the manager runs (the
// OperatorVersion controller renders every template of a new one): without
// them, `{{ repeat 100000000 "x" }}` takes the manager's memory and nested
// loops its time.
type Limits struct {
	// MaxOutput is the most bytes a template may render. No string a
	// function makes, and no value printed or formatted, may be larger; the
	// values its functions make may come to madeFactor times as much.
	MaxOutput int
	// Timeout is how long a render may take.
	Timeout time.Duration
	// Share is whose turn at the render slots a render takes: a namespace,
	// so that one namespace's renders, however many, wait for each other
	// and not another's. Empty: the namespace the template renders in.
	Share string
}

// DefaultLimits bound renders that set no limits of their own (the CLI's,
// a Request's without Limits); the manager's come from its flags. 4 MiB is well
// above what the API server takes in one object (etcd's 1.5 MiB), so a
// template of several objects fits; the largest templates of the example and
// conformance packages render in under a millisecond, 2 s is ample.
var DefaultLimits = Limits{MaxOutput: 4 << 20, Timeout: 2 * time.Second}

// orDefault is l, or DefaultLimits when l sets no bound: the zero Limits
// are the defaults, not a bound of nothing.
func (l Limits) orDefault() Limits {
	if l.MaxOutput == 0 && l.Timeout == 0 {
		d := DefaultLimits
		d.Share = l.Share
		return d
	}
	return l
}

const (
	// maxItems is the most items a list or dict a template function makes
	// may hold: `until 100000000` would allocate 800 MB before its first
	// item is used. Loops over replicas or ports need far fewer.
	maxItems = 10000
	// madeFactor bounds, as a multiple of MaxOutput, the bytes of all the
	// values a render's functions make: a loop keeping lists or strings in
	// variables would grow without writing.
	madeFactor = 16
	// maxNesting is how deep templates may call templates: text/template
	// allows 100,000, which takes some 130 MB of stack.
	maxNesting = 1000
	// timeEvery is how many writes pass between looks at the clock.
	timeEvery = 64
)

// renders bounds how many templates render at once, so that what a render
// may take is multiplied by the cores, not by the reconcilers: rendering
// uses the CPU only, so more at once would not be faster. The slots go to
// namespaces in turn, and a render hands its slot on at each look at the
// clock when another waits: a package author's hundred OperatorVersions,
// each rendering until its timeout, hold back his own namespace's renders
// only, even on a manager of one core.
var renders = fair.NewSlots(runtime.GOMAXPROCS(0))

// LimitError is a render stopped by its Limits: rendering again stops again.
type LimitError struct{ msg string }

func (e *LimitError) Error() string { return e.msg }

func limitErrorf(format string, args ...any) *LimitError {
	return &LimitError{msg: fmt.Sprintf(format, args...)}
}

// budget is what one render of a template may still take, and the writer it
// renders into: every write, every function call and every pass of a range
// loop (an empty write, see guard.go) goes through it.
type budget struct {
	name     string
	limits   Limits
	now      func() time.Time
	deadline time.Time
	out      bytes.Buffer
	writes   int
	// made is the bytes of the values the render's functions made.
	made  int
	depth int
	// err is the limit passed outside a function call (which text/template
	// would report with the call's position): the render's error.
	err error
	// share is whose render slot the render holds, handed to another
	// namespace's render waiting at each look at the clock.
	share string
}

func (b *budget) start(name string, l Limits, share string, now func() time.Time) {
	*b = budget{name: name, limits: l, share: share, now: now, deadline: now().Add(l.Timeout)}
}

func (b *budget) Write(p []byte) (int, error) {
	if b.writes++; b.writes%timeEvery == 0 {
		b.checkTime()
	}
	if b.err == nil && b.out.Len()+len(p) > b.limits.MaxOutput {
		b.stop("", limitErrorf("rendering stopped at %s of output, the most a template may render (--render-max-bytes)",
			bytesize(b.limits.MaxOutput)))
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.out.Write(p)
}

// checkTime lets the renders waiting for a slot have the render's in turn,
// and stops the render past its deadline, which the time it waited for
// the slot again does not count towards.
func (b *budget) checkTime() {
	if b.err != nil {
		return
	}
	now := b.now()
	if renders.Yield(b.share) {
		waited := b.now()
		b.deadline = b.deadline.Add(waited.Sub(now))
		now = waited
	}
	if now.After(b.deadline) {
		b.stop("", limitErrorf("rendering took longer than %s, the longest a template may take (--render-timeout)", b.limits.Timeout))
	}
}

// stop records the limit passed, at a position of the template (name:line:col)
// when known, as text/template writes its errors.
func (b *budget) stop(at string, err *LimitError) {
	if at == "" {
		at = b.name
	}
	b.err = fmt.Errorf("template: %s: %w", at, err)
}

// tooBig is the error of a result of n bytes, larger than MaxOutput.
func (b *budget) tooBig(what string, n int) *LimitError {
	return limitErrorf("%s %s, more than the %s a template may render (--render-max-bytes)", what, bytesize(n), bytesize(b.limits.MaxOutput))
}

// tooBigFormatted is the error of a value formatting to more than MaxOutput.
func (b *budget) tooBigFormatted(what string) *LimitError {
	return limitErrorf("%s more than %s formatted, the most a template may render (--render-max-bytes)", what, bytesize(b.limits.MaxOutput))
}

func tooMany(n int) *LimitError {
	return limitErrorf("the list would hold %d items, more than the %d a template may make", n, maxItems)
}

// charge counts n bytes a function made.
func (b *budget) charge(n int) error {
	b.made += n
	if most := madeFactor * b.limits.MaxOutput; b.made > most {
		return limitErrorf("the values its functions made come to more than %s, %d times the most a template may render (--render-max-bytes)",
			bytesize(most), madeFactor)
	}
	return nil
}

// bytesize writes n in the largest binary unit it has at least one of.
func bytesize(n int) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 4 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%s %ciB", trimZero(fmt.Sprintf("%.1f", f)), "KMGT"[i-1])
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
