package migrate

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

const (
	intOrString = "x-kubernetes-int-or-string"
	anyOf       = "anyOf"
)

// junctors are the keywords whose branches only validate values: a
// structural schema declares types and fields outside them.
var junctors = []string{"allOf", anyOf, "oneOf", "not"}

// notInJunctors are what a structural schema must not set inside junctors
// (besides type, which may be hoisted out of them).
var notInJunctors = []string{
	"additionalProperties", "default", "nullable",
	preserveUnknownFields, "x-kubernetes-embedded-resource", intOrString,
}

// structural makes an openAPIV3Schema structural, as apiextensions.k8s.io/v1
// requires and v1beta1 did not, following Kubernetes' guidance: anyOf (or
// oneOf) integer or string becomes x-kubernetes-int-or-string; each node gets
// a type, hoisted out of its junctors when their branches agree on one or
// inferred from properties or items; a node that cannot get one, or whose
// junctors cannot be made structural (they are dropped), gets
// x-kubernetes-preserve-unknown-fields; the root's metadata keeps only its
// type and name. It returns what it changed, by path in the schema.
func structural(schema map[string]any) []string {
	var changes []string
	makeStructural(schema, "", true, func(path, format string, args ...any) {
		if path == "" {
			path = "(root)"
		}
		changes = append(changes, "schema "+path+": "+fmt.Sprintf(format, args...))
	})
	return changes
}

type changed func(path, format string, args ...any)

// makeStructural makes s, at path in the schema, and what it nests
// structural, noting each change; root is the schema's root.
func makeStructural(s map[string]any, path string, root bool, note changed) {
	intOrStringJunctor(s, path, note)
	structuralProperties(s, path, root, note)
	if child, ok := s["additionalProperties"].(map[string]any); ok {
		makeStructural(child, path+".*", false, note)
	}
	structuralItems(s, path, note)
	structuralJunctors(s, path, root, note)
	addType(s, path, root, note)
}

// intOrStringJunctor turns a node without a type whose anyOf or oneOf is
// integer or string into x-kubernetes-int-or-string.
func intOrStringJunctor(s map[string]any, path string, note changed) {
	if s["type"] != nil || isIntOrStringPattern(s) {
		return
	}
	for _, junctor := range []string{anyOf, "oneOf"} {
		if isIntOrString(s[junctor]) {
			delete(s, junctor)
			s[anyOf] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
			s[intOrString] = true
			note(path, "%s integer or string is now %s", junctor, intOrString)
			return
		}
	}
}

// structuralProperties makes the properties of s structural. At the root,
// metadata keeps only what v1 allows, and kind and apiVersion get their type.
func structuralProperties(s map[string]any, path string, root bool, note changed) {
	for _, name := range sortedKeys(nested(s, "properties")) {
		if child, ok := nested(s, "properties")[name].(map[string]any); ok {
			childPath := path + "." + name
			if root && name == "metadata" {
				rootMetadata(child, childPath, note)
				continue
			}
			if root && (name == "kind" || name == "apiVersion") && child["type"] == nil {
				child["type"] = "string"
				note(childPath, "type string added")
			}
			makeStructural(child, childPath, false, note)
		}
	}
}

// structuralItems makes the items of s structural: a list of schemas, which
// v1 does not take, becomes its single schema, or any item.
func structuralItems(s map[string]any, path string, note changed) {
	switch items := s["items"].(type) {
	case map[string]any:
		makeStructural(items, path+"[*]", false, note)
	case []any:
		// v1 takes one schema for all items, not one per position.
		if len(items) == 1 {
			if item, ok := items[0].(map[string]any); ok {
				s["items"] = item
				makeStructural(item, path+"[*]", false, note)
				note(path, "items is the single schema of the list it was")
				return
			}
		}
		s["items"] = map[string]any{preserveUnknownFields: true}
		note(path, "items, a list of %d schemas, is now any item with %s", len(items), preserveUnknownFields)
	}
}

// addType gives s the type its fields or items tell, or, when none can be
// told, x-kubernetes-preserve-unknown-fields; an array gets items.
func addType(s map[string]any, path string, root bool, note changed) {
	if s["type"] == nil && s[intOrString] != true && s[preserveUnknownFields] != true {
		switch {
		case root || s["properties"] != nil || s["additionalProperties"] != nil:
			s["type"] = "object"
			note(path, "type object added")
		case s["items"] != nil:
			s["type"] = "array"
			note(path, "type array added")
		default:
			s[preserveUnknownFields] = true
			note(path, "no type can be told, %s added", preserveUnknownFields)
		}
	}
	if s["type"] == "array" && s["items"] == nil {
		s["items"] = map[string]any{preserveUnknownFields: true}
		note(path, "items with %s added to the array", preserveUnknownFields)
	}
}

// isIntOrStringPattern tells whether s is x-kubernetes-int-or-string with
// anyOf a type integer and a type string, in this order: the one place where
// a structural schema may have types inside a junctor.
func isIntOrStringPattern(s map[string]any) bool {
	return s[intOrString] == true && reflect.DeepEqual(s[anyOf], []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}})
}

// isIntOrString tells whether a junctor's branches are exactly a type
// integer and a type string.
func isIntOrString(junctor any) bool {
	branches, ok := junctor.([]any)
	if !ok || len(branches) != 2 {
		return false
	}
	types := map[any]bool{}
	for _, b := range branches {
		branch, ok := b.(map[string]any)
		if !ok || len(branch) != 1 {
			return false
		}
		types[branch["type"]] = true
	}
	return types["integer"] && types["string"]
}

// structuralJunctors hoists the type of junctor branches that agree on it,
// drops titles and descriptions from branches, and drops the junctors that
// still cannot be structural, giving their node preserve-unknown-fields.
func structuralJunctors(s map[string]any, path string, root bool, note changed) {
	var branches []map[string]any
	for _, junctor := range junctors {
		if junctor == anyOf && isIntOrStringPattern(s) {
			continue
		}
		branches = append(branches, branchesOf(s[junctor])...)
	}
	if len(branches) == 0 {
		return
	}

	types := map[any]bool{}
	for _, b := range branches {
		if t, ok := b["type"]; ok {
			types[t] = true
		}
	}
	if t := s["type"]; len(types) == 1 && (t == nil || types[t]) {
		for hoisted := range types {
			s["type"] = hoisted
			for _, b := range branches {
				delete(b, "type")
			}
			note(path, "type %v moved out of its junctors", hoisted)
		}
	}

	if junctorsStructural(branches, s, root) {
		docs := false
		for _, b := range branches {
			docs = dropDocs(b) || docs
		}
		if docs {
			note(path, "titles and descriptions inside its junctors dropped")
		}
		return
	}
	var dropped []string
	for _, junctor := range junctors {
		if junctor == anyOf && isIntOrStringPattern(s) {
			continue
		}
		if _, ok := s[junctor]; ok {
			delete(s, junctor)
			dropped = append(dropped, junctor)
		}
	}
	if s[intOrString] != true {
		s[preserveUnknownFields] = true
	}
	note(path, "%s dropped, which cannot be made structural, and %s added", strings.Join(dropped, " and "), preserveUnknownFields)
}

// dropDocs deletes title and description from a junctor branch and what it
// nests, and tells whether there were any.
func dropDocs(v map[string]any) bool {
	found := false
	for _, key := range []string{"title", "description"} {
		if _, ok := v[key]; ok {
			delete(v, key)
			found = true
		}
	}
	for _, child := range children(v) {
		found = dropDocs(child) || found
	}
	return found
}

// junctorsStructural tells whether junctor branches, and all they nest, set
// nothing a structural schema forbids there; at the root, also whether they
// name only fields and items that s declares. (Kubernetes checks that only
// for the root's junctors.)
func junctorsStructural(branches []map[string]any, s map[string]any, root bool) bool {
	for _, b := range branches {
		if !valueValidationOnly(b) || (root && !declares(s, b)) {
			return false
		}
	}
	return true
}

func valueValidationOnly(v map[string]any) bool {
	for _, key := range append([]string{"type"}, notInJunctors...) {
		if _, ok := v[key]; ok {
			return false
		}
	}
	if items, ok := v["items"].([]any); ok && len(items) > 0 {
		return false
	}
	for _, child := range children(v) {
		if !valueValidationOnly(child) {
			return false
		}
	}
	return true
}

// declares tells whether s declares the fields and items that junctor branch
// v names.
func declares(s, v map[string]any) bool {
	for name, p := range nested(v, "properties") {
		declared, ok := nested(s, "properties")[name].(map[string]any)
		child, isMap := p.(map[string]any)
		if !ok || !isMap || !declares(declared, child) {
			return false
		}
	}
	if item, ok := v["items"].(map[string]any); ok {
		declared, isMap := s["items"].(map[string]any)
		if !isMap || !declares(declared, item) {
			return false
		}
	}
	for _, key := range junctors {
		for _, b := range branchesOf(v[key]) {
			if !declares(s, b) {
				return false
			}
		}
	}
	return true
}

// branchesOf are the schemas of a junctor: a list, or one for not.
func branchesOf(junctor any) []map[string]any {
	switch j := junctor.(type) {
	case map[string]any:
		return []map[string]any{j}
	case []any:
		return maps(j)
	}
	return nil
}

// children are the schemas a schema nests.
func children(s map[string]any) []map[string]any {
	var out []map[string]any
	for _, name := range sortedKeys(nested(s, "properties")) {
		if child, ok := nested(s, "properties")[name].(map[string]any); ok {
			out = append(out, child)
		}
	}
	for _, key := range append([]string{"additionalProperties", "items"}, junctors...) {
		switch v := s[key].(type) {
		case map[string]any:
			out = append(out, v)
		case []any:
			out = append(out, maps(v)...)
		}
	}
	return out
}

// rootMetadata reduces the root's metadata schema to what v1 allows: type
// object, and properties name and generateName only.
func rootMetadata(s map[string]any, path string, note changed) {
	allowed := map[string]any{"type": "object"}
	if props := nested(s, "properties"); len(props) > 0 {
		onlyNames := true
		for name := range props {
			onlyNames = onlyNames && (name == "name" || name == "generateName")
		}
		if onlyNames {
			allowed["properties"] = props
		}
	}
	if reflect.DeepEqual(s, allowed) {
		return
	}
	for k := range s {
		delete(s, k)
	}
	for k, v := range allowed {
		s[k] = v
	}
	note(path, "all but its type and name dropped, as v1 allows no more for metadata")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
