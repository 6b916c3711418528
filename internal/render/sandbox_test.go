package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// TestEveryFunctionIsBound: templates may call every sprig function but the
// sandboxed ones, and each of the tables that bind them names functions
// that exist.
func TestEveryFunctionIsBound(t *testing.T) {
	for name := range sprig.TxtFuncMap() {
		if _, ok := funcs[name]; ok == (sandboxed[name] != "") {
			t.Errorf("%s: available %t, sandboxed %q", name, ok, sandboxed[name])
		}
	}
	tables := map[string]map[string]bool{"shallow": shallow, "passThrough": passThrough, "deep": deep}
	tables["prechecks"] = map[string]bool{}
	for name := range prechecks {
		tables["prechecks"][name] = true
	}
	for table, names := range tables {
		for name := range names {
			if funcs[name] == nil {
				t.Errorf("%s names %s, which templates cannot call", table, name)
			}
		}
	}
}

// TestBoundFunctionsRenderAsUnbound: bound to a budget and guarded, the
// functions, eq and ne, and printing render what they render alone, errors
// included (but for the guard that eq's and ne's show).
func TestBoundFunctionsRenderAsUnbound(t *testing.T) {
	vars := &Variables{Name: "i", Namespace: "ns", Params: map[string]any{
		"COUNT": "3", "LIST": []any{"a", "b"}, "MAP": map[string]any{"k": "v", "n": int64(2)}, "UNSET": nil,
	}}
	for _, text := range []string{
		`{{ .Params.UNSET }}|{{ .Params.LIST }}|{{ .Params.MAP }}|{{ . | len }}|{{ .Params.MAP.n }}`,
		`{{ eq .Params.UNSET "x" }} {{ eq .Params.COUNT "3" }} {{ ne .Params.COUNT "3" }} {{ eq .Params.MAP.n 2 }} {{ eq .Name "j" "i" }}`,
		`{{ eq (len .Params.LIST) 2 }} {{ eq 3 (int .Params.COUNT) }} {{ if and (eq .Name "i") (ne .Namespace "x") }}yes{{ end }}`,
		`{{ eq .Params.UNSET nil }} {{ eq nil .Params.UNSET }} {{ ne .Params.LIST nil }} {{ eq (index .Params.LIST 0) "a" }}`,
		`{{ $x := .Params.COUNT }}{{ eq $x "3" }} {{ eq $x.Length 1 }}`,
		`{{ eq .Params.LIST .Params.LIST }}`,
		`{{ eq .Params.MAP "x" }}`,
		`{{ eq .Params.UNSET.x "x" }}`,
		`{{ printf "%s-%03d %v %q" .Name 7 .Params.LIST "x" }}|{{ print 1 "a" }}|{{ println "a" }}|{{ html "<a>" }}|{{ js "'" }}|{{ urlquery "a b" }}`,
		`{{ range $i, $v := .Params.LIST }}{{ $i }}={{ $v }};{{ end }}{{ range 3 }}{{ . }}{{ end }}{{ range .Params.UNSET }}x{{ else }}none{{ end }}`,
		`{{ range .Params.LIST }}{{ if eq . "b" }}{{ break }}{{ end }}{{ . }}{{ end }}`,
		`{{ define "x" }}[{{ . }}]{{ end }}{{ template "x" .Name }}{{ template "x" }}`,
		`{{ toYaml .Params.MAP | indent 2 }}|{{ .Params.MAP | toJson }}|{{ toPrettyJson .Params.LIST }}`,
		`{{ until 3 }} {{ seq 5 }} {{ seq 5 1 }} {{ seq 1 2 9 }} {{ untilStep 0 10 3 }} {{ until -2 }}`,
		`{{ splitList "," "a,b" }} {{ split "," "a,b" }} {{ splitn "," 2 "a,b,c" }} {{ regexSplit "," "a,b,c" -1 }} {{ regexFindAll "a." "abacad" 2 }}`,
		`{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }} {{ regexReplaceAllLiteral "a" "aa" "$1" }} {{ replace "a" "bc" "aaa" }}`,
		`{{ join "," (list 1 "b" nil) }} {{ wrapWith 5 "\t" "Hello World" }} {{ wrap 3 "a b c d" }} {{ repeat 3 "ab" }} {{ nindent 2 "a\nb" }}`,
		`{{ $d := dict "a" 1 }}{{ $_ := set $d "k" "v" }}{{ $d }} {{ merge (dict "a" 1) (dict "b" 2) | toJson }} {{ unset $d "a" }}`,
		`{{ concat (list 1) (list 2 3) }} {{ append (list 1) 2 }} {{ prepend (list 1) 2 }} {{ first .Params.LIST }} {{ rest .Params.LIST }}`,
		`{{ semver "1.2.3" }} {{ (semver "1.2.3").Major }} {{ deepCopy .Params.MAP }} {{ fromJson "{\"a\":[1,2]}" }}`,
		`{{ b64enc "x" }} {{ quote 1 "a" nil }} {{ squote "a" }} {{ cat "a" 1 }} {{ .Params.COUNT | atoi | add 1 }} {{ int64 "12" }}`,
		`{{ with .Params.MAP }}{{ .k }}{{ end }} {{ $x := 1 }}{{ $x = add $x 1 }}{{ $x }} {{ index .Params.LIST 1 }} {{ slice .Params.LIST 1 }}`,
		`{{ not true }} {{ or "" "b" }} {{ and 1 0 }} {{ default "d" .Params.UNSET }} {{ ternary "a" "b" true }} {{ list 1 "a" nil }}`,
		`{{ keys .Params.MAP | sortAlpha }} {{ hasKey .Params.MAP "k" }} {{ chunk 2 (list 1 2 3) }} {{ kindOf .Params.LIST }} {{ typeOf 1 }}`,
		`{{ toString 1.5 }} {{ float64 "1.5" }} {{ trunc 2 "abc" }} {{ uniq (list 1 1 2) }} {{ without (list 1 2) 1 }} {{ has 1 (list 1) }}`,
		`{{ dig "a" "b" "d" (dict "a" (dict "b" "c")) }} {{ pluck "k" .Params.MAP }} {{ pick .Params.MAP "k" }} {{ compact (list "" 1) }}`,
		`{{ sha256sum "x" }} {{ toDecimal "777" }} {{ len (randAlpha 5) }} {{ len (randBytes 3) }} {{ len (genPrivateKey "ed25519") }}`,
		`{{ fail "no" }}`,
		`{{ .Params.NOPE }}`,
		`{{ index .Params.LIST 5 }}`,
		`{{ repeat -1 "x" }}`,
		`{{ regexReplaceAll "(" "x" "y" }}`,
	} {
		want, wantErr := unbound(text, vars)
		got, err := render("t.yaml", text, vars, DefaultLimits, time.Now)
		if gotErr := boundedArgument.ReplaceAllString(fmt.Sprint(err), "$1"); gotErr != fmt.Sprint(wantErr) || got != want {
			t.Errorf("%s\n got %q, %v\nwant %q, %v", text, got, err, want, wantErr)
		}
	}
}

// boundedArgument is an argument of eq or ne as their errors show it.
var boundedArgument = regexp.MustCompile(`\(((?:[^()]|\([^()]*\))*) \| bounded\)`)

// unbound renders as templates rendered before they were bound: parsed with
// the functions as they are, not guarded.
func unbound(text string, vars *Variables) (string, error) {
	tmpl, err := template.New("t.yaml").Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, vars.data()); err != nil {
		return "", err
	}
	return out.String(), nil
}

// TestSandbox: the sprig functions that reach outside the manager's process
// are not available, and the error says why.
func TestSandbox(t *testing.T) {
	for fn, why := range map[string]string{
		"env": "cannot read the manager's environment or files", "expandenv": "cannot read the manager's environment or files",
		"base": "cannot read the manager's environment or files", "dir": "cannot read the manager's environment or files",
		"clean": "cannot read the manager's environment or files", "ext": "cannot read the manager's environment or files",
		"isAbs":         "cannot read the manager's environment or files",
		"getHostByName": "cannot reach the network from the manager (a DNS query would send what the name holds out of the cluster)",
	} {
		_, err := DefaultLimits.Template("t.yaml", `{{ `+fn+` "HOME" }}`, &Variables{})
		want := `template: t.yaml:1: function "` + fn + `" not defined: ` + fn + ` is not available to templates, which ` + why
		if err == nil || err.Error() != want {
			t.Errorf("%s: error = %v, want %q", fn, err, want)
		}
	}
}

// TestStepsCountsUntilStepAndSeq: the items counted before calling until,
// untilStep and seq are those they make.
func TestStepsCountsUntilStepAndSeq(t *testing.T) {
	untilStep := sprig.TxtFuncMap()["untilStep"].(func(int, int, int) []int)
	seq := sprig.TxtFuncMap()["seq"].(func(...int) string)
	for start := -4; start <= 4; start++ {
		for stop := -4; stop <= 4; stop++ {
			for step := -3; step <= 3; step++ {
				if n, err := steps(start, stop, step); err != nil || n != len(untilStep(start, stop, step)) {
					t.Errorf("steps(%d, %d, %d) = %d, %v; untilStep makes %d", start, stop, step, n, err, len(untilStep(start, stop, step)))
				}
				for _, p := range [][]int{{start}, {start, stop}, {start, step, stop}} {
					if n, err := seqSteps(p); err != nil || n != len(strings.Fields(seq(p...))) {
						t.Errorf("seqSteps(%v) = %d, %v; seq makes %q", p, n, err, seq(p...))
					}
				}
			}
		}
	}
}

// TestFormattedBoundsWhatFormattingWrites: formatted is at least what fmt,
// encoding/json and YAML write.
func TestFormattedBoundsWhatFormattingWrites(t *testing.T) {
	nested := map[string]any{"a": []any{"x", 1, 2.5, nil, true, map[string]any{"b": []any{[]any{"deep", int64(-12)}}}}}
	for _, v := range []any{"", "abc", 12345, -1, 1.0 / 3, []any{}, []int{1, 22, 333}, []byte("hi"), nested,
		map[string]string{"k": "v"}, time.Unix(0, 0).UTC(), []any{[]any{[]any{[]any{"x"}}}}} {
		n := formatted(v, 1<<20)
		js, _ := json.Marshal(v)
		pretty, _ := json.MarshalIndent(v, "", "  ")
		ym, _ := yaml.Marshal(v)
		for how, s := range map[string]string{"fmt": fmt.Sprint(v), "json": string(js),
			"indented json": string(pretty), "yaml": string(ym)} {
			if len(s) > n {
				t.Errorf("formatted(%#v) = %d, but %s writes %d: %s", v, n, how, len(s), s)
			}
		}
	}
}

// TestPrintedBoundsWhatPrintfWrites: printed is at least what fmt.Sprintf
// writes.
func TestPrintedBoundsWhatPrintfWrites(t *testing.T) {
	for _, tt := range []struct {
		format string
		args   []any
	}{
		{"%s-%d", []any{"abc", 12}},
		{"%10.3f|%-8s|%+q", []any{3.14159, "x", "é"}},
		{"%*d", []any{20, 1}},
		{"%[1]s%[1]s%[1]s", []any{"abcdef"}},
		{"%v %% %x", []any{[]any{"a", 1}, "hi"}},
		{"%d", []any{}},
		{"no verbs", []any{"extra"}},
	} {
		want := fmt.Sprintf(tt.format, tt.args...)
		if n := printed(tt.format, reflect.ValueOf(tt.args), 1<<20); n < len(want) {
			t.Errorf("printed(%q, %v) = %d, but Sprintf writes %d: %q", tt.format, tt.args, n, len(want), want)
		}
	}
}
