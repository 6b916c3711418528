// Package render turns an OperatorVersion's templates into Kubernetes objects,
// as KUDO does: Go text/template with sprig's text functions (less those that
// reach outside the manager's process), within limits of size and time
// (limits.go), parsed into unstructured
// objects, moved off API versions the server no longer serves, and enhanced
// with KUDO's namespace, labels, annotations and dependency hashes. It takes
// plain data and needs no client: what it needs from the cluster is passed in.
package render

import (
	"bytes"
	"fmt"
	"regexp"
	"sync"
	"text/template"
	"time"

	"k8s.io/utils/lru"
	"sigs.k8s.io/yaml"
)

// Variables are what a template sees.
type Variables struct {
	// Params maps every parameter of the OperatorVersion to its value:
	// scalars as strings, arrays and maps decoded (see internal/params).
	Params map[string]any
	// Pipes maps a Pipe task's key to the name of the object holding the file.
	Pipes           map[string]string
	Name            string
	Namespace       string
	OperatorName    string
	OperatorVersion string
	AppVersion      string
	PlanName        string
	PhaseName       string
	StepName        string
}

func (v *Variables) data() map[string]any {
	pipes := v.Pipes
	if pipes == nil {
		pipes = map[string]string{}
	}
	return map[string]any{
		"Params":          v.Params,
		"Pipes":           pipes,
		"Name":            v.Name,
		"Namespace":       v.Namespace,
		"OperatorName":    v.OperatorName,
		"OperatorVersion": v.OperatorVersion,
		"AppVersion":      v.AppVersion,
		"PlanName":        v.PlanName,
		"PhaseName":       v.PhaseName,
		"StepName":        v.StepName,
	}
}

func toYaml(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		// As Helm's toYaml: a template cannot handle an error here.
		return ""
	}
	return string(bytes.TrimSuffix(b, []byte("\n")))
}

var undefinedFunction = regexp.MustCompile(`function "([^"]+)" not defined`)

// Parse parses a template, guarded (guard.go); name is its path in
// templates/, for errors. Template renders it: executed as it is, it would
// find none of its functions. The template is the one the renders of the
// same text use (parsed): read it, do not change it.
func Parse(name, text string) (*template.Template, error) {
	p, err := parseOnce(name, text)
	if err != nil {
		return nil, err
	}
	return p.t, nil
}

func parseGuarded(name, text string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		if m := undefinedFunction.FindStringSubmatch(err.Error()); m != nil && sandboxed[m[1]] != "" {
			return nil, fmt.Errorf("%w: %s is not available to templates, %s", err, m[1], sandboxed[m[1]])
		}
		return nil, err
	}
	guard(t)
	return t, nil
}

// parsed keeps the templates parsed, by name and text: a plan renders the
// same templates on each of its passes, verify reads a template before it
// renders it, and parsing one, with sprig's two hundred functions, costs
// more than executing it. The bound
// keeps the templates of a few dozen operators, at some 20 KiB each.
var parsed = lru.New(256)

type parseKey struct{ name, text string }

// parsedTemplate is a parsed template and its sandboxes: binding the
// functions to a budget costs as much as parsing, so each is reused, by one
// render at a time.
type parsedTemplate struct {
	t         *template.Template
	sandboxes sync.Pool
}

// Template renders one template to text, within the limits; the zero
// Limits are DefaultLimits.
func (l Limits) Template(name, text string, vars *Variables) (string, error) {
	return render(name, text, vars, l.orDefault(), time.Now)
}

func render(name, text string, vars *Variables, l Limits, now func() time.Time) (string, error) {
	p, err := parseOnce(name, text)
	if err != nil {
		return "", err
	}
	share := l.Share
	if share == "" {
		share = vars.Namespace
	}
	defer renders.Acquire(share)()
	s, ok := p.sandboxes.Get().(*sandbox)
	if !ok {
		s = newSandbox(p.t)
	}
	defer p.sandboxes.Put(s)
	b := &s.b
	b.start(name, l, share, now)
	defer func() { *b = budget{} }() // no output kept in the pool
	err = s.t.Execute(b, vars.data())
	if b.err != nil {
		// A limit passed outside a function call, or a function called
		// after it.
		err = b.err
	}
	if err != nil {
		return "", err
	}
	return b.out.String(), nil
}

func parseOnce(name, text string) (*parsedTemplate, error) {
	key := parseKey{name, text}
	if p, ok := parsed.Get(key); ok {
		return p.(*parsedTemplate), nil
	}
	t, err := parseGuarded(name, text)
	if err != nil {
		return nil, err
	}
	p := &parsedTemplate{t: t}
	parsed.Add(key, p)
	return p, nil
}
