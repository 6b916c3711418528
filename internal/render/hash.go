package render

import (
	"bytes"
	"crypto/md5" //nolint:gosec // KUDO's algorithm, not a security measure
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"

	yamlv2 "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// dependency is a ConfigMap or Secret a pod template uses.
type dependency struct{ kind, namespace, name string }

// dependencyHasher computes kudo.dev/dependencies-hash exactly as KUDO v0.19
// did (pkg/engine/renderer/dependencies.go), so that pods KUDO started are not
// restarted by the first plan kudo-ng runs.
type dependencyHasher struct {
	rendered []*unstructured.Unstructured
	deps     Dependencies
	sums     map[dependency][md5.Size]byte
}

func newDependencyHasher(rendered []*unstructured.Unstructured, deps Dependencies) *dependencyHasher {
	return &dependencyHasher{rendered: rendered, deps: deps, sums: map[dependency][md5.Size]byte{}}
}

// hash returns the annotation value for the pod template podTemplate of an
// object in namespace, and false when it uses no ConfigMap or Secret.
func (h *dependencyHasher) hash(podTemplate map[string]any, namespace string) (string, bool, error) {
	deps := dependenciesOf(podTemplate, namespace)
	if len(deps) == 0 {
		return "", false, nil
	}
	// KUDO sorted by group, kind, version, namespace and name; all are core v1.
	sort.SliceStable(deps, func(i, j int) bool {
		a, b := deps[i], deps[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	})
	all := md5.New() //nolint:gosec
	for _, d := range deps {
		sum, err := h.sum(d)
		if err != nil {
			return "", false, fmt.Errorf("reading %s %q: %w", d.kind, d.name, err)
		}
		all.Write(sum[:])
	}
	return hex.EncodeToString(all.Sum(nil)), true, nil
}

// dependenciesOf lists, duplicates kept, the Secrets of imagePullSecrets and
// the ConfigMaps and Secrets of volumes: not those of env, envFrom or
// projected volumes, which KUDO did not count.
func dependenciesOf(podTemplate map[string]any, namespace string) []dependency {
	var deps []dependency
	pullSecrets, _, _ := unstructured.NestedSlice(podTemplate, "spec", "imagePullSecrets")
	for _, s := range maps(pullSecrets) {
		name, _, _ := unstructured.NestedString(s, "name")
		deps = append(deps, dependency{"Secret", namespace, name})
	}
	volumes, _, _ := unstructured.NestedSlice(podTemplate, "spec", "volumes")
	for _, v := range maps(volumes) {
		// A source that is present counts even without a name, as in the typed
		// Volume KUDO read, where it is a non-nil pointer.
		if cm, ok := v["configMap"].(map[string]any); ok {
			name, _, _ := unstructured.NestedString(cm, "name")
			deps = append(deps, dependency{"ConfigMap", namespace, name})
		}
		if secret, ok := v["secret"].(map[string]any); ok {
			name, _, _ := unstructured.NestedString(secret, "secretName")
			deps = append(deps, dependency{"Secret", namespace, name})
		}
	}
	return deps
}

// sum is the MD5 of one dependency as KUDO applied it: 16 zero bytes when it
// does not exist or carries the skip annotation.
func (h *dependencyHasher) sum(d dependency) ([md5.Size]byte, error) {
	if sum, ok := h.sums[d]; ok {
		return sum, nil
	}
	obj, err := h.find(d)
	if err != nil {
		return [md5.Size]byte{}, err
	}
	var sum [md5.Size]byte
	if obj != nil {
		if _, skip := nestedStringMap(obj, "metadata", "annotations")[kudov1beta1.SkipHashAnnotation]; !skip {
			text, err := kudoYAML(sanitized(obj))
			if err != nil {
				return sum, err
			}
			sum = md5.Sum(text) //nolint:gosec
		}
	}
	h.sums[d] = sum
	return sum, nil
}

// find returns the dependency as KUDO would have it: the object the task
// renders, read through its Go type as KUDO parsed templates; else the one in
// the cluster as KUDO last applied it; nil when there is none.
func (h *dependencyHasher) find(d dependency) (map[string]any, error) {
	for _, obj := range h.rendered {
		if obj.GetAPIVersion() == "v1" && obj.GetKind() == d.kind && obj.GetNamespace() == d.namespace && obj.GetName() == d.name {
			return typedRoundTrip(obj), nil
		}
	}
	// Without a name there is nothing to read (and the API server refuses
	// the pod template).
	if h.deps == nil || d.name == "" {
		return nil, nil
	}
	live, found, err := h.deps(d.kind, d.namespace, d.name)
	if err != nil || !found {
		return nil, err
	}
	return lastApplied(live.Object), nil
}

// typedRoundTrip is obj converted to its Go type and back, which drops
// empty fields as KUDO's typed objects did; obj as it is when it does not
// convert, as KUDO then parsed it as unstructured.
func typedRoundTrip(obj *unstructured.Unstructured) map[string]any {
	var typed any = &corev1.ConfigMap{}
	if obj.GetKind() == "Secret" {
		typed = &corev1.Secret{}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return obj.Object
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return obj.Object
	}
	return out
}

// lastApplied is the object KUDO recorded in kudov1beta1.LastAppliedAnnotation, which
// KUDO hashed instead of the live object, as long as it still describes the
// live object's labels and data: kudo-ng does not update the annotation, so
// once it changes the object the annotation is stale and the live object
// counts.
func lastApplied(live map[string]any) map[string]any {
	text, ok := nestedStringMap(live, "metadata", "annotations")[kudov1beta1.LastAppliedAnnotation]
	if !ok {
		return live
	}
	var last map[string]any
	if err := utiljson.Unmarshal([]byte(text), &last); err != nil || !reflect.DeepEqual(content(last), content(live)) {
		return live
	}
	return last
}

// content is what of a ConfigMap or Secret kudo-ng may change: labels and
// data, with a Secret's stringData folded into data as the API server does.
func content(obj map[string]any) map[string]map[string]any {
	data := map[string]any{}
	for k, v := range nestedMap(obj, "data") {
		data[k] = v
	}
	for k, v := range nestedMap(obj, "stringData") {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	labels := map[string]any{}
	for k, v := range nestedMap(obj, "metadata", "labels") {
		labels[k] = v
	}
	binaryData := map[string]any{}
	for k, v := range nestedMap(obj, "binaryData") {
		binaryData[k] = v
	}
	return map[string]map[string]any{"labels": labels, "data": data, "binaryData": binaryData}
}

// sanitized is a copy of obj without what changes from write to write, left
// exactly as KUDO's sanitizeAndSerialize left it with the Unstructured
// setters of apimachinery v0.19: empty strings, zero generation and zero
// creationTimestamp remove their field; empty lists, zero pointers, the empty
// apiVersion and kind and the empty annotations are set.
func sanitized(obj map[string]any) map[string]any {
	out := runtime.DeepCopyJSON(obj)
	out["apiVersion"], out["kind"] = "", ""
	md, ok := out["metadata"].(map[string]any)
	if !ok {
		if out["metadata"] != nil {
			return out // the setters fail on a metadata that is not an object
		}
		md = map[string]any{}
		out["metadata"] = md
	}
	for _, field := range []string{
		"namespace", "resourceVersion", "clusterName", "continue", "creationTimestamp",
		"generateName", "generation", "selfLink", "uid",
	} {
		delete(md, field)
	}
	md["ownerReferences"] = []any{}
	md["finalizers"] = []any{}
	md["managedFields"] = []any{}
	md["deletionGracePeriodSeconds"] = int64(0)
	md["remainingItemCount"] = int64(0)
	md["annotations"] = map[string]any{}
	return out
}

// kudoYAML serializes obj as KUDO did: gopkg.in/yaml.v2 v2.3.0 marshalled
// the Unstructured struct itself, so the object is the value of a key
// "object". go.yaml.in/yaml/v2 is the same code but for one default: it
// folds a long string at a space past the 80th column, which v2.3.0 never
// did. So each string that could be folded is marshalled alone and
// unfolded, and put in the document in place of a placeholder.
func kudoYAML(obj map[string]any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	prefix := "kudoNgScalar"
	for bytes.Contains(raw, []byte(prefix)) {
		prefix += "X"
	}
	u := &unfolding{prefix: prefix}
	placed := map[string]any{"object": u.place(obj)}
	if u.err != nil {
		return nil, u.err
	}
	out, err := yamlv2.Marshal(placed)
	if err != nil {
		return nil, err
	}
	return u.unplace(out), nil
}

// unfolding holds the strings kudoYAML marshals alone: each is the YAML of
// a string that could be folded, put in the document in place of the
// placeholder prefix<index>x, which appears nowhere else.
type unfolding struct {
	prefix  string
	scalars [][]byte
	// err is the last error of marshalling a string.
	err error
}

// placeholder stands for the ith string in the document.
func (u *unfolding) placeholder(i int) string {
	return fmt.Sprintf("%s%dx", u.prefix, i)
}

// place is a copy of v with each string that could be folded replaced by
// its placeholder.
func (u *unfolding) place(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = u.place(e)
		}
		return out
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = u.place(e)
		}
		return out
	case string:
		return u.placeString(v)
	}
	return v
}

// placeString is the placeholder of s, or s when it is never folded.
func (u *unfolding) placeString(s string) any {
	if !strings.Contains(s, " ") || strings.ContainsAny(s, "\u0085\u2028\u2029") {
		// Folding happens only at spaces. Line breaks other than \n
		// are written followed by the indentation of the place in the
		// document, so such a rare string stays where it is.
		return s
	}
	text, err := unfoldedScalar(s)
	if err != nil {
		u.err = err
	}
	if text == nil {
		return s // a literal block, never folded
	}
	u.scalars = append(u.scalars, text)
	return u.placeholder(len(u.scalars) - 1)
}

// unplace puts the unfolded strings in the document out in place of their
// placeholders.
func (u *unfolding) unplace(out []byte) []byte {
	for i, text := range u.scalars {
		out = bytes.Replace(out, []byte(u.placeholder(i)), text, 1)
	}
	return out
}

// unfoldedScalar is the YAML of s as a value, on one line as yaml.v2 v2.3.0
// wrote it; nil when s is written as a literal block. Alone in a document,
// yaml.v2 folds by replacing a space with a line break and two spaces of
// indentation; in a double-quoted string, a space after the break is
// escaped with a backslash.
func unfoldedScalar(s string) ([]byte, error) {
	out, err := yamlv2.Marshal(s)
	if err != nil {
		return nil, err
	}
	out = bytes.TrimSuffix(out, []byte("\n"))
	switch {
	case len(out) > 0 && out[0] == '|':
		return nil, nil
	case len(out) > 0 && out[0] == '"':
		out = bytes.ReplaceAll(out, []byte("\n  \\ "), []byte("  "))
	}
	return bytes.ReplaceAll(out, []byte("\n  "), []byte(" ")), nil
}

func nestedMap(obj map[string]any, fields ...string) map[string]any {
	m, _, _ := unstructured.NestedMap(obj, fields...)
	return m
}

func nestedStringMap(obj map[string]any, fields ...string) map[string]string {
	m, _, _ := unstructured.NestedStringMap(obj, fields...)
	return m
}
