package render

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}\ndata:\n  a: {{ .Params.A | quote }}\n",
		"---\n# only a comment\n---\napiVersion: v1\nkind: List\nmetadata:\n  name: x\n",
		"{{ range .Params.LIST }}- {{ . }}\n{{ end }}",
		"{{ toYaml .Params.MAP }}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: &a {{ .Params.A }}\n  b: [*a, *a, *a]\n",
		"{{ env \"HOME\" }}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.S }}\ndata:\n  s: |\n{{ .Params.S | indent 4 }}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      volumes:\n      - configMap:\n          name: c\n",
	} {
		f.Add(seed)
	}
	vars := &Variables{
		// S is not plain: rendering it is checked (injection.go).
		Params: map[string]any{"A": "a", "S": "s: [1]\n---\n&a *a", "LIST": []any{"x", 1}, "MAP": map[string]any{"k": "v"}},
		Name:   "instance", Namespace: "ns",
	}
	served := func(schema.GroupVersionKind) bool { return true }
	f.Fuzz(func(t *testing.T, text string) {
		_, err := Task(&Request{
			Templates: map[string]string{"t.yaml": text}, Resources: []string{"t.yaml"}, Variables: *vars,
			Metadata: Metadata{InstanceName: "instance", Namespace: "ns"}, Served: served, Scope: BuiltinScope,
		})
		_ = err // Errors are fine; panics and hangs are not.
	})
}

// FuzzInjection puts a value in the places templates put values: when the
// value is accepted, the objects are those of a plain value, with the same
// top-level and metadata keys (so no other namespace, owner or annotation).
func FuzzInjection(f *testing.F) {
	for _, seed := range []string{"x", "x\n---\nkind: A", "x\n  namespace: n", "x, namespace: n", "a\"b", "&a x", "&a x\nb: [*a, *a]", "x\n...", "l1\nl2: x"} {
		f.Add(seed)
	}
	templates := []string{
		"metadata:\n  name: {{ .Params.X }}\n",
		"metadata:\n  name: c\n  labels:\n    a: {{ .Params.X }}\n",
		"metadata: {name: {{ .Params.X }}}\n",
		"metadata:\n  name: c\nspec: [a, {{ .Params.X }}]\n",
		"metadata:\n  name: \"{{ .Params.X }}\"\n",
		"metadata:\n  name: {{ .Params.X | squote }}\n",
		"metadata:\n  name: c\ndata:\n  f: |\n{{ .Params.X | indent 4 }}\n",
		"metadata:\n  name: c\ndata:\n  f: |\n{{ .Params.X }}\n",
		"metadata:\n  name: c\nspec:{{ .Params.X | nindent 2 }}\n",
	}
	// What each template makes of a plain value, rendered once: nil where
	// the template needs some YAML there (f: |\n at column 0), leaving
	// nothing to compare with.
	plain := make([][]*unstructured.Unstructured, len(templates))
	for i := range templates {
		templates[i] = "apiVersion: v1\nkind: ConfigMap\n" + templates[i]
		plain[i], _ = DefaultLimits.TemplateObjects("t.yaml", templates[i], &Variables{Params: map[string]any{"X": "plain"}})
	}
	f.Fuzz(func(t *testing.T, value string) {
		for i, text := range templates {
			objs, err := DefaultLimits.TemplateObjects("t.yaml", text, &Variables{Params: map[string]any{"X": value}})
			want := plain[i]
			if err != nil || want == nil {
				continue
			}
			if len(objs) != len(want) {
				t.Fatalf("%q in %q: %d objects, want %d", value, text, len(objs), len(want))
			}
			for i := range objs {
				got, _, _ := unstructured.NestedMap(objs[i].Object, "metadata")
				exp, _, _ := unstructured.NestedMap(want[i].Object, "metadata")
				if !reflect.DeepEqual(sortedKeys(objs[i].Object), sortedKeys(want[i].Object)) || !reflect.DeepEqual(sortedKeys(got), sortedKeys(exp)) {
					t.Fatalf("%q in %q: %v, want the keys of %v", value, text, objs[i].Object, want[i].Object)
				}
			}
		}
	})
}
