package packages

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// TestInstallRefusesOnlyWhatCannotInstallOrRun: verified to install or
// upgrade, a bad package that breaks only a rule of good packaging, which
// KUDO's install took, has that rule as a warning; every other keeps its one
// error, as in package verify.
func TestInstallRefusesOnlyWhatCannotInstallOrRun(t *testing.T) {
	// The bad packages that install, with the errors left (a template using
	// a parameter params.yaml lacks installs when the use is in a branch
	// that does not run; this one runs).
	installs := map[string][]string{
		"bad-semver-app-version":               nil,
		"bad-semver-kubernetes-version":        nil,
		"bad-semver-kudo-version":              nil,
		"bad-semver-operator-version":          nil,
		"default-outside-enum":                 nil,
		"empty-enum":                           nil,
		"immutable-without-default":            nil,
		"missing-kubernetes-version":           nil,
		"namespace-outside-namespace-manifest": nil,
		"parameter-name-comma":                 nil,
		"parameter-name-semicolon":             nil,
		"trigger-names-no-plan":                nil,
		"undefined-parameter-in-template": {
			`templates/cm.yaml: line 7, column 19: executing "cm.yaml" at <.Params.MISSING>: map has no entry for key "MISSING"`},
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "bad", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		expected, err := os.ReadFile(filepath.Join(dir, "expected.txt"))
		if err != nil {
			t.Fatal(err)
		}
		strict, isError := strings.CutPrefix(strings.TrimSpace(string(expected)), "error: ")
		if !isError {
			continue // not read, or only warned of
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			p, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			r := Verify(p, VerifyOptions{Install: true})
			wantErrors, installable := installs[filepath.Base(dir)]
			if !installable {
				wantErrors = []string{strict}
			}
			if got := issues(r.Errors); !reflect.DeepEqual(got, wantErrors) {
				t.Errorf("errors %q, want %q", got, wantErrors)
			}
			if warned := contains(issues(r.Warnings), strict); warned != installable {
				t.Errorf("warnings %q: %q among them is %t, want %t", issues(r.Warnings), strict, warned, installable)
			}
		})
	}
}

func issues(list []Issue) []string {
	var out []string
	for _, i := range list {
		out = append(out, i.String())
	}
	return out
}

// TestTemplatesRenderWithTheValuesGiven: templates render with the values an
// Instance sets over the defaults. To install, a template that fails for
// want of a value that a required parameter without default has not been
// given (it comes from a Secret, or a parent's KudoOperator task) is a
// warning; so it is for package verify, which gives no value, as KUDO's
// verify took such a package (its simple-op-0.2.0 and immutable-param).
func TestTemplatesRenderWithTheValuesGiven(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Name }}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels:
        app: web
        fixedLabel: {{ .Params.LABEL }}
    spec:
      containers: [{name: web, image: "web:{{ .Params.TAG }}"}]
      {{- if eq .Params.TAG "broken" }}{{ fail "TAG broken has no image" }}{{ end }}
      {{- range .Params.ZONES }}
      nodeSelector: {zone: {{ . }}}
      {{- end }}
`
	nilLabel := `templates/app.yaml: Deployment "bad-instance": .spec.template.metadata.labels accessor error: ` +
		`contains non-string value in the map under key "fixedLabel": <nil> is of the type <nil>, expected string`
	tests := []struct {
		name         string
		opts         VerifyOptions
		wantErrors   []string
		wantWarnings []string
	}{
		{"package verify, with the defaults", VerifyOptions{}, nil,
			[]string{nilLabel + " (rendered without a value for LABEL, which the Instance must set)"}},
		{"to install, with the value given", VerifyOptions{Install: true, Values: map[string]string{"LABEL": "fixed"}}, nil, nil},
		{"to install, without it", VerifyOptions{Install: true}, nil,
			[]string{nilLabel + " (rendered without a value for LABEL, which the Instance must set)"}},
		{"to install, with a value that fails the template", VerifyOptions{Install: true, Values: map[string]string{"LABEL": "fixed", "TAG": "broken"}},
			[]string{`templates/app.yaml: line 14, column 42: executing "app.yaml" at <fail "TAG broken has no image">: error calling fail: TAG broken has no image`}, nil},
		{"to install, with a value not of its parameter's type", VerifyOptions{Install: true, Values: map[string]string{"LABEL": "fixed", "ZONES": "a: b"}},
			[]string{`spec.parameters: ZONES: "a: b" is not an array: line 1: cannot unmarshal !!map into []interface {}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Read(filepath.Join("testdata", "good"))
			if err != nil {
				t.Fatal(err)
			}
			p.Templates = map[string]string{"app.yaml": deployment}
			p.Operator.Tasks[0].Spec.Resources = []string{"app.yaml"}
			p.Params.Parameters = append(p.Params.Parameters,
				Parameter{Name: "LABEL", Required: ptr.To(true)},
				Parameter{Name: "TAG", Default: "1.0"},
				Parameter{Name: "ZONES", Type: kudov1beta1.ArrayValueType, Default: []any{}})
			r := Verify(p, tt.opts)
			if got := issues(r.Errors); !reflect.DeepEqual(got, tt.wantErrors) {
				t.Errorf("errors\n  %q\nwant\n  %q", got, tt.wantErrors)
			}
			wantWarnings := append(tt.wantWarnings, "params.yaml: parameters[0] GREETING: no template uses this parameter")
			if got := issues(r.Warnings); !reflect.DeepEqual(got, wantWarnings) {
				t.Errorf("warnings\n  %q\nwant\n  %q", got, wantWarnings)
			}
		})
	}
}

// TestClusterScopedNamesDependOnTheInstance: a cluster-scoped object named
// the same for two Instances of the package (their name and namespace
// differ, their operator's name does not) is a warning; one whose name
// holds either is not, nor is a namespaced object, nor a kind whose API
// fixes its name.
func TestClusterScopedNamesDependOnTheInstance(t *testing.T) {
	const warning = `templates/obj.yaml: %s %q is cluster-scoped and its name does not depend on the Instance: ` +
		`a second Instance of this package cannot apply it; name it after the Instance ({{ .Name }}, {{ .Namespace }})`
	tests := []struct {
		name, object string
		want         []string
	}{
		{"a fixed name", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: reader}",
			[]string{fmt.Sprintf(warning, "ClusterRole", "reader")}},
		{"the operator's name", "kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nvalue: 1\nmetadata: {name: '{{ .OperatorName }}-high'}",
			[]string{fmt.Sprintf(warning, "PriorityClass", "bad-high")}},
		{"the Instance's name", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: '{{ .Name }}-reader'}", nil},
		{"its namespace", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: '{{ .Namespace }}-reader'}", nil},
		{"a namespaced object", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: fixed}", nil},
		{"a CustomResourceDefinition", "kind: CustomResourceDefinition\napiVersion: apiextensions.k8s.io/v1\nmetadata: {name: probes.example.com}\n" +
			"spec: {group: example.com, scope: Namespaced, names: {plural: probes, kind: Probe}, versions: [{name: v1, served: true, storage: true, " +
			"schema: {openAPIV3Schema: {type: object}}}]}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Read(filepath.Join("testdata", "good"))
			if err != nil {
				t.Fatal(err)
			}
			p.Templates["obj.yaml"] = tt.object
			p.Operator.Tasks[0].Spec.Resources = append(p.Operator.Tasks[0].Spec.Resources, "obj.yaml")
			r := Verify(p, VerifyOptions{})
			if len(r.Errors) > 0 {
				t.Fatalf("errors %q", issues(r.Errors))
			}
			if got := issues(r.Warnings); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("warnings\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

// TestAParameterThatTriggersAPlanIsUsed: as KUDO's verify, a parameter no
// template uses is a warning unless it triggers a plan, which is a use.
func TestAParameterThatTriggersAPlanIsUsed(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "good"))
	if err != nil {
		t.Fatal(err)
	}
	p.Params.Parameters = append(p.Params.Parameters, Parameter{Name: "RESTART", Trigger: "deploy"}, Parameter{Name: "IDLE"})
	r := Verify(p, VerifyOptions{})
	errs, warnings := r.AsKUDOSaid()
	want := []string{`parameter "IDLE" defined but not used.`}
	if len(errs) != 0 || !reflect.DeepEqual(warnings, want) {
		t.Errorf("errors %q, warnings %q; want no error and %q", errs, warnings, want)
	}
}
