package render

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}\ndata:\n  a: {{ .Params.A | quote }}\n",
		"---\n# only a comment\n---\napiVersion: v1\nkind: List\nmetadata:\n  name: x\n",
		"{{ range .Params.LIST }}- {{ . }}\n{{ end }}",
		"{{ toYaml .Params.MAP }}",
		"{{ env \"HOME\" }}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      volumes:\n      - configMap:\n          name: c\n",
	} {
		f.Add(seed)
	}
	vars := &Variables{
		Params: map[string]any{"A": "a", "LIST": []any{"x", 1}, "MAP": map[string]any{"k": "v"}},
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
