package healthrule

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Schema is the OpenAPI schema of a kind's objects and where it comes from.
type Schema struct {
	*spec.Schema
	// From names its source: templates/crd.yaml, or "Kubernetes" for a
	// built-in kind.
	From string
}

// Typecheck compiles source with the object's fields typed by s, as the
// API server compiles a CRD's validation rules: a field the schema does not
// have is refused, named ("undefined field 'phasee'"). Fields that hold any
// content (x-kubernetes-preserve-unknown-fields, int-or-string) are of any
// type, as at run time.
func Typecheck(field, source string, s Schema) error {
	if len(source) > MaxExpressionBytes {
		_, err := NewExpression(field, source)
		return err
	}
	var declTypes []*apiservercel.DeclType
	var opts []cel.EnvOption
	for _, v := range variables {
		prop, ok := s.Properties[v]
		if v == "metadata" {
			prop, ok = objectMetaSchema, true
		}
		if !ok {
			// A root that keeps unknown fields, or declares none, holds the
			// variable all the same, of any type.
			if s.Extensions["x-kubernetes-preserve-unknown-fields"] == true || len(s.Properties) == 0 {
				opts = append(opts, cel.Variable(v, cel.DynType))
			}
			continue
		}
		declType := common.SchemaDeclType(&openapi.Schema{Schema: anyContentDynamic(&prop)}, false)
		if declType == nil {
			opts = append(opts, cel.Variable(v, cel.DynType))
			continue
		}
		declType = declType.MaybeAssignTypeName("__" + v)
		declTypes = append(declTypes, declType)
		opts = append(opts, cel.Variable(v, declType.CelType()))
	}
	env, err := cel.NewCustomEnv(envOptions()...)
	if err != nil {
		return err
	}
	providerOpts, err := apiservercel.NewDeclTypeProvider(declTypes...).EnvOptions(env.CELTypeProvider())
	if err != nil {
		return err
	}
	if env, err = env.Extend(append(providerOpts, opts...)...); err != nil {
		return err
	}
	if _, err := compile(env, field, source); err != nil {
		fe := err.(*FieldError) // compile's only error
		fe.Message += " (checked against the schema of " + s.From + ")"
		return fe
	}
	// The manager compiles the rule without the schema: its cost is
	// estimated so, here too.
	_, err = NewExpression(field, source)
	return err
}

// anyContentDynamic returns s with each field that may hold any content
// made an int-or-string, the one kind of field SchemaDeclType declares of
// any type: objects that keep unknown fields or declare none, lists of no
// declared items. Without it they would be objects with no field.
func anyContentDynamic(s *spec.Schema) *spec.Schema {
	out := *s
	isObject := len(s.Type) == 0 || s.Type.Contains("object")
	anyContent := s.Extensions["x-kubernetes-preserve-unknown-fields"] == true ||
		(isObject && len(s.Properties) == 0 && s.AdditionalProperties == nil) ||
		(s.Type.Contains("array") && (s.Items == nil || s.Items.Schema == nil))
	if anyContent {
		out = spec.Schema{}
		out.AddExtension("x-kubernetes-int-or-string", true)
		return &out
	}
	if len(s.Properties) > 0 {
		out.Properties = make(map[string]spec.Schema, len(s.Properties))
		for name, prop := range s.Properties {
			out.Properties[name] = *anyContentDynamic(&prop)
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		out.Items = &spec.SchemaOrArray{Schema: anyContentDynamic(s.Items.Schema)}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		out.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: anyContentDynamic(s.AdditionalProperties.Schema)}
	}
	return &out
}

// CRDSchemas are the schemas of each version a CustomResourceDefinition
// serves, by kind; from names where it is.
func CRDSchemas(obj *unstructured.Unstructured, from string) (map[schema.GroupVersionKind]Schema, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, crd); err != nil {
		return nil, err
	}
	out := map[schema.GroupVersionKind]Schema{}
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		b, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err != nil {
			return nil, err
		}
		s := &spec.Schema{}
		if err := json.Unmarshal(b, s); err != nil {
			return nil, err
		}
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		out[gvk] = Schema{Schema: s, From: fmt.Sprintf("%s %s in %s", gvk.GroupVersion(), gvk.Kind, from)}
	}
	return out, nil
}

var builtinSchemas sync.Map // schema.GroupVersionKind → Schema

// BuiltinSchema is the schema of a built-in kind, made from its Go type
// (kudo-ng carries no OpenAPI document of Kubernetes'): a field per JSON
// field, typed as it encodes.
func BuiltinSchema(gvk schema.GroupVersionKind) (Schema, bool) {
	if s, ok := builtinSchemas.Load(gvk); ok {
		return s.(Schema), true
	}
	obj, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		return Schema{}, false
	}
	s := Schema{Schema: schemaOf(reflect.TypeOf(obj), map[reflect.Type]bool{}), From: "Kubernetes " + gvk.Kind}
	builtinSchemas.Store(gvk, s)
	return s, true
}

var objectMetaSchema = *schemaOf(reflect.TypeOf(metav1.ObjectMeta{}), map[reflect.Type]bool{})

var (
	timeType        = reflect.TypeOf(metav1.Time{})
	microTimeType   = reflect.TypeOf(metav1.MicroTime{})
	durationType    = reflect.TypeOf(metav1.Duration{})
	quantityType    = reflect.TypeOf(resource.Quantity{})
	intOrStringType = reflect.TypeOf(intstr.IntOrString{})
	rawType         = reflect.TypeOf(runtime.RawExtension{})
)

// schemaOf is the schema of values of t as encoding/json writes them; a
// type met again inside itself holds any content.
func schemaOf(t reflect.Type, within map[reflect.Type]bool) *spec.Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType, microTimeType, durationType:
		return spec.StringProperty()
	case quantityType, intOrStringType:
		s := &spec.Schema{}
		s.AddExtension("x-kubernetes-int-or-string", true)
		return s
	case rawType:
		return anyContent()
	}
	switch t.Kind() {
	case reflect.String:
		return spec.StringProperty()
	case reflect.Bool:
		return spec.BoolProperty()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return spec.Int64Property()
	case reflect.Float32, reflect.Float64:
		return spec.Float64Property()
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return spec.StringProperty()
		}
		return spec.ArrayProperty(schemaOf(t.Elem(), within))
	case reflect.Map:
		return spec.MapProperty(schemaOf(t.Elem(), within))
	case reflect.Struct:
		if within[t] {
			return anyContent()
		}
		within[t] = true
		defer delete(within, t)
		s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{}}}
		addFields(s, t, within)
		return s
	}
	return anyContent()
}

// addFields adds the JSON fields of struct type t to s, those of embedded
// structs without a name of their own too.
func addFields(s *spec.Schema, t reflect.Type, within map[reflect.Type]bool) {
	for n := range t.NumField() {
		f := t.Field(n)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(s, ft, within)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		s.Properties[name] = *schemaOf(f.Type, within)
	}
}

func anyContent() *spec.Schema {
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	s.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	return s
}
