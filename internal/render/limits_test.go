package render

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kudo-ng/kudo/internal/fair"
)

// small are limits that keep each bomb below a megabyte of work.
var small = Limits{MaxOutput: 64 << 10, Timeout: time.Minute}

// TestRenderBombsAreRefused: what would take the manager's memory or time
// is refused with an error naming the template and the limit, the function
// called and where, when a function was.
func TestRenderBombsAreRefused(t *testing.T) {
	const dag = `{{ $l := list "x" }}{{ range until 40 }}{{ $l = list $l $l }}{{ end }}`
	tests := []struct{ name, text, wantErr string }{
		{"repeat", `{{ repeat 100000000 "x" }}`,
			`template: t.yaml:1:3: executing "t.yaml" at <repeat 100000000 "x">: error calling repeat: ` +
				`the result would be 95.4 MiB, more than the 64 KiB a template may render (--render-max-bytes)`},
		{"output of a loop", `{{ range until 1000 }}{{ repeat 1000 "x" }}{{ end }}`,
			`template: t.yaml: rendering stopped at 64 KiB of output, the most a template may render (--render-max-bytes)`},
		{"output of nested loops", `{{ $l := until 10000 }}{{ range $l }}{{ range $l }}x{{ end }}{{ end }}`,
			`template: t.yaml: rendering stopped at 64 KiB of output`},
		{"a list of until", `{{ until 100000000 }}`,
			`error calling until: the list would hold 100000000 items, more than the 10000 a template may make`},
		{"a list of untilStep", `{{ untilStep 0 100000000 1 }}`, `error calling untilStep: the list would hold 100000000 items`},
		{"an untilStep that overflows and never ends", `{{ untilStep 9223372036854775806 9223372036854775807 2 }}`,
			`error calling untilStep: the loop would not end: its last step overflows`},
		{"seq", `{{ seq 100000000 }}`, `error calling seq: the list would hold 100000000 items`},
		{"splitList", `{{ splitList "" (repeat 20000 "x") }}`, `error calling splitList: the list would hold 20000 items`},
		{"regexSplit", `{{ regexSplit "" (repeat 20000 "x") -1 }}`, `error calling regexSplit: the list would hold 10001 items`},
		{"append", `{{ append (until 10000) 1 }}`, `error calling append: the list would hold 10001 items`},
		{"concat doubling", `{{ $l := until 100 }}{{ range until 40 }}{{ $l = concat $l $l }}{{ end }}`,
			`error calling concat: the list would hold 12800 items`},
		{"set in a loop", `{{ $d := dict }}{{ range $i := until 100 }}{{ range $j := until 101 }}` +
			`{{ $_ := set $d (printf "%d-%d" $i $j) 1 }}{{ end }}{{ end }}`,
			`error calling set: the list would hold 10001 items`},
		{"lists kept", `{{ $l := list }}{{ range until 10000 }}{{ $l = append $l (until 10000) }}{{ end }}`,
			`error calling until: the values its functions made come to more than 1 MiB, 16 times the most a template may render (--render-max-bytes)`},
		{"strings kept", `{{ $s := repeat 60000 "x" }}{{ $l := list }}{{ range until 1000 }}{{ $l = append $l (upper $s) }}{{ end }}`,
			`error calling upper: the values its functions made come to more than 1 MiB`},
		{"indent", `{{ indent 100000000 "x" }}`, `error calling indent: the result would be 95.4 MiB`},
		{"nindent", `{{ nindent 100 (repeat 1000 "\n") }}`, `error calling nindent: the result would be 98.7 KiB`},
		{"replace", `{{ replace "" (repeat 1000 "y") (repeat 1000 "x") }}`, `error calling replace: the result would be 978.5 KiB`},
		{"regexReplaceAll", `{{ regexReplaceAll "" (repeat 1000 "x") (repeat 1000 "y") }}`,
			`error calling regexReplaceAll: the result would be 978.5 KiB`},
		{"regexReplaceAll repeating the match", `{{ regexReplaceAll "x+" (repeat 1000 "x") (repeat 100 "$0") }}`,
			`error calling regexReplaceAll: the result would be 97.7 KiB`},
		{"join", `{{ join (repeat 1000 "x") (until 100) }}`, `error calling join: the result would be 97.7 KiB`},
		{"wrapWith", `{{ wrapWith 1 (repeat 1000 "\n") (repeat 1000 "x") }}`, `error calling wrapWith: the result would be 978.5 KiB`},
		{"printf widths", `{{ printf "%01000000d" 1 }}`, `error calling printf: the result would be 976.6 KiB`},
		{"printf repeating an argument", `{{ printf (repeat 100 "%[1]s") (repeat 1000 "x") }}`, `error calling printf: the result would be`},
		{"randAlpha", `{{ randAlpha 1000000000 }}`, `error calling randAlpha: the result would be 953.7 MiB`},
		{"randBytes", `{{ randBytes 1000000000 }}`, `error calling randBytes: the result would be 1.2 GiB`},
		{"printing a list holding a string many times", `{{ $s := repeat 30000 "x" }}{{ list $s $s $s }}`,
			`template: t.yaml:1:31: printing a value of more than 64 KiB formatted, the most a template may render (--render-max-bytes)`},
		{"printing a list holding a list twice, forty times over", dag + `{{ $l }}`, `template: t.yaml:1:73: printing a value of more than 64 KiB`},
		{"formatting it", dag + `{{ toJson $l }}`,
			`error calling toJson: its arguments come to more than 64 KiB formatted, the most a template may render (--render-max-bytes)`},
		{"comparing it", dag + `{{ if eq $l $l }}{{ end }}`,
			`template: t.yaml:1:79: executing "t.yaml" at <bounded>: error calling bounded: comparing a value of more than 64 KiB formatted`},
		{"converting it", dag + `{{ int $l }}`, `error calling int: its arguments come to more than 64 KiB formatted`},
		{"a dict holding itself", `{{ $d := dict }}{{ $_ := set $d "self" (list $d) }}{{ toYaml $d }}`,
			`error calling set: the dict would hold itself, which nothing could print`},
		{"a dict merged to hold itself", `{{ $d := dict "a" (dict) }}{{ $_ := mergeOverwrite $d (dict "a" (dict "c" $d.a)) }}`,
			`error calling mergeOverwrite: the dict would hold itself`},
		{"templates calling themselves", `{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}`,
			`template: t.yaml: templates call templates more than 1000 deep`},
		{"DSA keys", `{{ genPrivateKey "dsa" }}`,
			`error calling genPrivateKey: DSA keys take too long to make, and Go deprecates them: make an ecdsa or ed25519 key`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render("t.yaml", tt.text, &Variables{}, small, time.Now)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one with %q", err, tt.wantErr)
			}
			if limit := (*LimitError)(nil); !errors.As(err, &limit) {
				t.Errorf("%v is no LimitError", err)
			}
		})
	}
}

// TestRenderStopsAtTheDeadline: loops and recursion that neither call a
// function nor write stop at the deadline all the same. The clock moves a
// second each time it is read.
func TestRenderStopsAtTheDeadline(t *testing.T) {
	for _, text := range []string{
		`{{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}`,
		`{{ range 1000000000000 }}{{ end }}`,
		`{{ $l := until 10000 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}`,
		`{{ define "a" }}{{ if lt (len .) 40 }}{{ template "a" (append . 1) }}{{ template "a" (append . 1) }}{{ end }}{{ end }}` +
			`{{ template "a" list }}`,
		`{{ $s := repeat 60000 "x" }}{{ $_ := list (sha256sum $s) (sha256sum $s) (sha256sum $s) (sha256sum $s) }}`,
	} {
		now := time.Unix(0, 0)
		clock := func() time.Time { now = now.Add(time.Second); return now }
		_, err := render("t.yaml", text, &Variables{}, Limits{MaxOutput: 1 << 20, Timeout: 2 * time.Second}, clock)
		want := "template: t.yaml: rendering took longer than 2s, the longest a template may take (--render-timeout)"
		if err == nil || err.Error() != want {
			t.Errorf("%s: error = %v, want %q", text, err, want)
		}
	}
}

// TestARenderToItsTimeoutSharesItsSlot is issue 62's third attack on a
// manager of one core: another namespace's render runs while a flood's
// renders on to its timeout, not after it.
func TestARenderToItsTimeoutSharesItsSlot(t *testing.T) {
	saved := renders
	renders = fair.NewSlots(1)
	t.Cleanup(func() { renders = saved })
	started := make(chan struct{})
	calls := 0
	// The budget reads the clock when it starts, holding the slot, and
	// next at its first look at the clock.
	clock := func() time.Time {
		if calls++; calls == 2 {
			close(started)
		}
		return time.Now()
	}
	flood := make(chan error, 1)
	go func() {
		_, err := render("flood.yaml", `{{ range 1000000000000 }}{{ end }}`, &Variables{Namespace: "flood"},
			Limits{MaxOutput: 1 << 20, Timeout: 2 * time.Second}, clock)
		flood <- err
	}()
	<-started
	got, err := render("victim.yaml", `victim`, &Variables{Namespace: "victim"}, DefaultLimits, time.Now)
	if err != nil || got != "victim" {
		t.Fatalf("the victim's render: %q, %v", got, err)
	}
	select {
	case err := <-flood:
		t.Fatalf("the flood's render ended before the victim's did: %v", err)
	default:
	}
	if err := <-flood; err == nil || !strings.Contains(err.Error(), "rendering took longer than 2s") {
		t.Fatalf("the flood's render: %v", err)
	}
}

// TestWithinTheLimits: what fits renders as it did.
func TestWithinTheLimits(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{`{{ repeat 3 "ab" }}`, "ababab"},
		{`{{ len (until 10000) }}`, "10000"},
		{`{{ len (repeat 65536 "x") }}`, "65536"},
		{`{{ repeat 65536 "x" | len }}`, "65536"},
		{`{{ define "a" }}{{ if lt . 999 }}{{ template "a" (add . 1) }}{{ else }}{{ . }}{{ end }}{{ end }}{{ template "a" 1 }}`, "999"},
		{`{{ $d := dict }}{{ $_ := set $d "k" (dict "a" 1) }}{{ $_ := set $d "j" $d.k }}{{ toJson $d }}`, `{"j":{"a":1},"k":{"a":1}}`},
		{`{{ regexReplaceAll "(a+)" (repeat 30000 "ab") "${1}c" | len }}`, "90000"},
	} {
		got, err := render("t.yaml", tt.text, &Variables{}, Limits{MaxOutput: 128 << 10, Timeout: time.Minute}, time.Now)
		if err != nil || got != tt.want {
			t.Errorf("%s = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
}

func TestBytesize(t *testing.T) {
	for n, want := range map[int]string{100: "100 bytes", 1024: "1 KiB", 4 << 20: "4 MiB", 100000000: "95.4 MiB", 3 << 30: "3 GiB"} {
		if got := bytesize(n); got != want {
			t.Errorf("bytesize(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestConcurrentRenders: renders of one template at once each have their own
// budget and output.
func TestConcurrentRenders(t *testing.T) {
	const text = `{{ range until 100 }}{{ $.Name }}{{ end }}`
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			name := strings.Repeat("n", i+1)
			got, err := DefaultLimits.Template("t.yaml", text, &Variables{Name: name})
			if err == nil && got != strings.Repeat(name, 100) {
				err = errors.New("rendered another's output: " + got)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestAnAliasBombInAParameterIsRefusedBeforeItExpands: issue 45's attack, a
// string parameter holding 70 KB of YAML whose aliases expand to 400 MB,
// put where a template puts a value, is refused naming the parameter, and
// nothing expands.
func TestAnAliasBombInAParameterIsRefusedBeforeItExpands(t *testing.T) {
	bomb := "&a " + strings.Repeat("x", 40000) + "\n  b: [" + strings.Repeat("*a,", 9999) + "*a]"
	text := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: {{ .Params.VALUE }}\n"
	_, err := DefaultLimits.TemplateObjects("cm.yaml", text, &Variables{Params: map[string]any{"VALUE": bomb}})
	want := "cm.yaml: parameter VALUE's value breaks the template's YAML: document 1: its aliases (*name) expand it to more than 4 MiB, " +
		"the most a template may render (--render-max-bytes): a parameter value must stay inside the YAML value the template puts it in"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

// TestAMultiDocumentBombInAParameterIsRefusedBeforeItExpands: issue 62's
// first attack, hello's image set to seven documents, each a list of small
// maps aliased a few thousand times and each within the limits alone,
// which parsed together took 500 MB. The stream is measured whole: refused
// naming the parameter, having allocated little.
func TestAMultiDocumentBombInAParameterIsRefusedBeforeItExpands(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("kind: ConfigMap\napiVersion: v1\nm: &m [")
	for i := range 64 {
		fmt.Fprintf(&doc, "{k%d: v},", i)
	}
	doc.WriteString("{}]\nl: [" + strings.Repeat("*m,", 1000) + "*m]\n")
	image := "nginx\n" + strings.Repeat("---\n"+doc.String(), 7)
	if len(image) > 128<<10 {
		t.Fatalf("the value has %d bytes, more than a parameter may", len(image))
	}
	text := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: hello\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: {{ .Params.image }}\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := DefaultLimits.TemplateObjects("deployment.yaml", text, &Variables{Params: map[string]any{"image": image}})
	runtime.ReadMemStats(&after)
	want := "deployment.yaml: parameter image's value breaks the template's YAML: document 3: it holds more than 262144 YAML nodes"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error = %v, want %q", err, want)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 128<<20 {
		t.Fatalf("refusing it allocated %d MB", grown>>20)
	}
}

// TestEachRenderHasItsCallersLimits: limits are the caller's, none set
// being DefaultLimits; nothing process-wide decides them.
func TestEachRenderHasItsCallersLimits(t *testing.T) {
	text := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: {{ repeat 100000 \"x\" | quote }}}\n"
	if _, err := (Limits{}).TemplateObjects("c.yaml", text, &Variables{}); err != nil {
		t.Errorf("the zero Limits refused 100 KB: %v", err)
	}
	if _, err := small.TemplateObjects("c.yaml", text, &Variables{}); !errors.As(err, new(*LimitError)) {
		t.Errorf("limits of %d bytes let 100 KB through: %v", small.MaxOutput, err)
	}
	if _, err := (Limits{}).TemplateObjects("c.yaml", text, &Variables{}); err != nil {
		t.Errorf("a render with smaller limits changed the defaults: %v", err)
	}
}
