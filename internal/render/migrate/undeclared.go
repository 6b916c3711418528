package migrate

import (
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Undeclared drops from obj the fields that its kind's Go type in scheme does
// not declare, such as spec.template.metadata.initializers, which
// Kubernetes removed, and returns a Migration for each. KUDO converted the
// objects of built-in kinds to their Go types before writing them, which
// dropped such fields silently; server-side apply refuses them.
//
// Only those fields go; the rest of obj stays as it is, without the zero
// values a round trip through the Go type would add, so that what is applied
// of an object without such fields does not change. The fields are the ones
// the unstructured converter reports as unknown while it reads obj into its
// Go type: a diff of the round trip could not tell them from declared fields
// that are empty, which the way back omits. Objects of kinds scheme does not
// know, and objects that do not convert (a value of the wrong type, which the
// API server then reports), are left alone.
func Undeclared(obj *unstructured.Unstructured, scheme *runtime.Scheme) []Migration {
	typed, err := scheme.New(obj.GroupVersionKind())
	if err != nil {
		return nil
	}
	err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, typed, true)
	strict, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return nil
	}
	unknown := map[string]bool{}
	for _, e := range strict.Errors() {
		if path, ok := strings.CutPrefix(e.Error(), `unknown field "`); ok {
			unknown[strings.TrimSuffix(path, `"`)] = true
		}
	}
	var dropped []Migration
	dropUnknown(obj.Object, "", unknown, func(path string) {
		dropped = append(dropped, Migration{
			Kind: obj.GetKind(), Name: obj.GetName(), From: obj.GetAPIVersion(), To: obj.GetAPIVersion(), Dropped: path,
		})
	})
	return dropped
}

// dropUnknown deletes from v the fields whose path, written as the converter
// writes it (keys joined by dots, list indexes in brackets), is unknown.
func dropUnknown(v any, path string, unknown map[string]bool, dropped func(path string)) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if unknown[p] {
				delete(v, k)
				dropped(p)
				continue
			}
			dropUnknown(v[k], p, unknown, dropped)
		}
	case []any:
		for i, e := range v {
			dropUnknown(e, path+"["+strconv.Itoa(i)+"]", unknown, dropped)
		}
	}
}
