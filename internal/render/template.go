// Package render turns an OperatorVersion's templates into Kubernetes objects,
// as KUDO does: Go text/template with sprig's text functions (less those that
// read the manager's environment or file system), parsed into unstructured
// objects, moved off API versions the server no longer serves, and enhanced
// with KUDO's namespace, labels, annotations and dependency hashes. It takes
// plain data and needs no client: what it needs from the cluster is passed in.
package render

import (
	"bytes"
	"fmt"
	"regexp"
	"text/template"

	"github.com/Masterminds/sprig/v3"
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

// sandboxed are sprig functions a template must not call: they read the
// manager's environment or its file system paths.
var sandboxed = []string{"env", "expandenv", "base", "dir", "clean", "ext", "isAbs"}

var funcs = func() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range sandboxed {
		delete(f, name)
	}
	f["toYaml"] = toYaml
	return f
}()

func toYaml(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		// As Helm's toYaml: a template cannot handle an error here.
		return ""
	}
	return string(bytes.TrimSuffix(b, []byte("\n")))
}

var undefinedFunction = regexp.MustCompile(`function "([^"]+)" not defined`)

// Parse parses a template; name is its path in templates/, for errors.
func Parse(name, text string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		if m := undefinedFunction.FindStringSubmatch(err.Error()); m != nil && isSandboxed(m[1]) {
			return nil, fmt.Errorf("%w: %s is not available to templates, which cannot read the manager's environment or files", err, m[1])
		}
		return nil, err
	}
	return t, nil
}

// parsed keeps the templates Template parsed, by name and text: a plan
// renders the same templates on each of its passes, and parsing one, with
// sprig's two hundred functions, costs more than executing it. A parsed
// template is safe to execute concurrently. The bound keeps the templates of
// a few dozen operators, at some 20 KiB each.
var parsed = lru.New(256)

type parseKey struct{ name, text string }

// Template renders one template to text.
func Template(name, text string, vars *Variables) (string, error) {
	t, err := parseOnce(name, text)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, vars.data()); err != nil {
		return "", err
	}
	return out.String(), nil
}

func parseOnce(name, text string) (*template.Template, error) {
	key := parseKey{name, text}
	if t, ok := parsed.Get(key); ok {
		return t.(*template.Template), nil
	}
	t, err := Parse(name, text)
	if err == nil {
		parsed.Add(key, t)
	}
	return t, err
}

func isSandboxed(name string) bool {
	for _, s := range sandboxed {
		if s == name {
			return true
		}
	}
	return false
}
