package typedapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// The spec fields a typed object shares with an Instance's spec (all but
// parameters, which the typed object holds a field each); no parameter's
// field takes their names (FieldOf).
const (
	OperatorVersionField    = "operatorVersion"
	SecretParametersField   = "secretParameters"
	ServiceAccountNameField = "serviceAccountName"
	KubeConfigField         = "kubeConfig"
	planExecutionField      = "planExecution"
)

var reservedFields = []string{OperatorVersionField, SecretParametersField, ServiceAccountNameField, KubeConfigField, planExecutionField}

// OperatorLabel names, on the CustomResourceDefinition, the Operator that
// serves it: a kind is one package's.
const OperatorLabel = "kudo.dev/operator"

var plainField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// celKeywords are the words CEL reserves; a field named one is escaped in
// expressions as __word__.
var celKeywords = []string{
	"as", "break", "const", "continue", "else", "false", "for", "function", "if", "import", "in",
	"let", "loop", "package", "namespace", "null", "return", "true", "var", "void", "while",
}

// FieldOf is the spec field that holds a parameter: its name when that is
// letters, digits and underscores not beginning with a digit (every KUDO
// package's so far: NODE_COUNT stays NODE_COUNT); otherwise each other
// character becomes "_" and a leading digit gets "_" before it
// ("log.level" → log_level, "2FA" → _2FA). A parameter named as a field
// of the Instance's spec (operatorVersion, secretParameters,
// serviceAccountName, kubeConfig, planExecution) gets "_" after it. Two parameters that end with one field
// are refused (Fields).
func FieldOf(param string) string {
	field := param
	if !plainField.MatchString(field) {
		field = strings.Map(func(r rune) rune {
			if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, field)
		if field == "" || field[0] >= '0' && field[0] <= '9' {
			field = "_" + field
		}
	}
	if slices.Contains(reservedFields, field) {
		field += "_"
	}
	return field
}

// Fields maps each parameter to its field, and refuses two parameters that
// would share one.
func Fields(parameters []kudov1beta1.Parameter) (map[string]string, error) {
	fields := make(map[string]string, len(parameters))
	byField := make(map[string]string, len(parameters))
	for _, p := range parameters {
		f := FieldOf(p.Name)
		if other, taken := byField[f]; taken {
			return nil, fmt.Errorf("parameters %q and %q would both be the field %q of the typed API: rename one", other, p.Name, f)
		}
		byField[f], fields[p.Name] = p.Name, f
	}
	return fields, nil
}

func celPath(field string) string {
	if slices.Contains(celKeywords, field) {
		return "__" + field + "__"
	}
	return field
}

// SpecSchema is the schema of a typed object's spec: a field per parameter
// of the newest OperatorVersion, typed as the parameter (string, integer,
// number, boolean; array and map hold any values), its description (with
// its default, which is not written into objects) and enum, required when KUDO requires a value (required with no default),
// immutable parameters kept by CEL transition rules; and the fields of
// parameters that only older versions have, untyped, so that no value of an
// object that still runs one is pruned.
func SpecSchema(newest []kudov1beta1.Parameter, older ...[]kudov1beta1.Parameter) (*apiextensionsv1.JSONSchemaProps, error) {
	fields, err := Fields(newest)
	if err != nil {
		return nil, err
	}
	spec := sharedSpecSchema()
	for i := range newest {
		p := &newest[i]
		if err := addParameter(spec, p, fields[p.Name]); err != nil {
			return nil, err
		}
	}
	if len(spec.Required) == 0 {
		// An object may be written without a spec; with a required field,
		// the spec is required (CRD).
		spec.Default = &apiextensionsv1.JSON{Raw: []byte("{}")}
	}
	keepOlderParameters(spec, older)
	return spec, nil
}

// sharedSpecSchema is the schema of the spec fields a typed object shares
// with an Instance's spec, to which the parameters' fields are added.
func sharedSpecSchema() *apiextensionsv1.JSONSchemaProps {
	return &apiextensionsv1.JSONSchemaProps{
		Type:        "object",
		Description: "The package's parameters, one field each, and the OperatorVersion that runs them.",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			OperatorVersionField: {
				Type: "string", MaxLength: ptr.To(int64(253)),
				Description: "The OperatorVersion that runs this object, in its namespace. Empty: the Operator's newest " +
					"there when the object is created. Changing it upgrades, as kubectl kudo upgrade does.",
			},
			SecretParametersField: {
				Type: "object", MaxProperties: ptr.To(int64(256)),
				Description: "Parameters whose values come from keys of Secrets in the object's namespace, as an Instance's " +
					"spec.secretParameters; a parameter set here takes its value from the Secret, not from its field.",
				AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Required: []string{"name", "key"},
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"name": {Type: "string", MaxLength: ptr.To(int64(253))},
						"key":  {Type: "string", MaxLength: ptr.To(int64(253))},
					},
				}},
			},
			ServiceAccountNameField: {
				Type: "string", MaxLength: ptr.To(int64(253)),
				Description: "The ServiceAccount of the object's namespace its plans run as, as an Instance's spec.serviceAccountName.",
			},
			KubeConfigField: {
				Type: "object", Required: []string{"secretRef"},
				Description: "The cluster the object's plans act on, as an Instance's spec.kubeConfig: a Secret of the object's " +
					"namespace and its key (\"value\" when not set) holding a kubeconfig. It cannot change.",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"secretRef": {
						Type: "object", Required: []string{"name"},
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"name": {Type: "string", MinLength: ptr.To(int64(1)), MaxLength: ptr.To(int64(253))},
							"key":  {Type: "string", MaxLength: ptr.To(int64(253))},
						},
					},
				},
			},
		},
	}
}

// addParameter adds to spec the field of a parameter of the newest
// OperatorVersion: required when the parameter needs a value, and kept from
// being set or unset when it is immutable.
func addParameter(spec *apiextensionsv1.JSONSchemaProps, p *kudov1beta1.Parameter, field string) error {
	prop, err := parameterSchema(p)
	if err != nil {
		return fmt.Errorf("parameter %s: %w", p.Name, err)
	}
	spec.Properties[field] = prop
	if params.NeedsValue(p) {
		spec.Required = append(spec.Required, field)
	}
	if immutableByCEL(p) {
		// The property's rule holds while the field is there; this one
		// keeps it from being added or removed.
		spec.XValidations = append(spec.XValidations, apiextensionsv1.ValidationRule{
			Rule:    fmt.Sprintf("has(self.%s) == has(oldSelf.%s)", celPath(field), celPath(field)),
			Message: fmt.Sprintf("parameter %s is immutable: it cannot be set or unset after creation", p.Name),
		})
	}
	return nil
}

// keepOlderParameters adds to spec, untyped, the fields of the parameters
// that only older versions have, so that no value of an object that still
// runs one is pruned.
func keepOlderParameters(spec *apiextensionsv1.JSONSchemaProps, older [][]kudov1beta1.Parameter) {
	for _, version := range older {
		for _, p := range version {
			if field := FieldOf(p.Name); spec.Properties[field].Type == "" {
				spec.Properties[field] = apiextensionsv1.JSONSchemaProps{
					XPreserveUnknownFields: ptr.To(true),
					Description:            "Parameter " + p.Name + " of an older version of the package.",
				}
			}
		}
	}
}

// maxDefaultShown is the longest default, as JSON, a field's description
// shows: a configuration file's is for the package's docs.
const maxDefaultShown = 80

func parameterSchema(p *kudov1beta1.Parameter) (apiextensionsv1.JSONSchemaProps, error) {
	t := params.TypeOf(p.Type)
	prop := apiextensionsv1.JSONSchemaProps{Description: describe(p)}
	switch t {
	case kudov1beta1.ArrayValueType:
		prop.Type = "array"
		prop.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptr.To(true)}}
	case kudov1beta1.MapValueType:
		prop.Type = "object"
		prop.XPreserveUnknownFields = ptr.To(true)
	default:
		prop.Type = string(t)
	}
	// The default is told, not written into objects: the kind is
	// cluster-wide and its schema one namespace's newest OperatorVersion,
	// while an object runs the OperatorVersion it names, whose default its
	// Instance takes.
	if p.Default != nil && *p.Default != "null" && *p.Default != "" {
		value, err := JSONValue(*p.Default, t)
		if err != nil {
			return prop, fmt.Errorf("default: %w", err)
		}
		if len(value.Raw) <= maxDefaultShown {
			prop.Description = strings.TrimSpace(prop.Description + " Default of the newest version: " + string(value.Raw) + ".")
		}
	}
	if p.Enum != nil {
		for _, e := range *p.Enum {
			value, err := JSONValue(e, t)
			if err != nil {
				return prop, fmt.Errorf("enum: %w", err)
			}
			prop.Enum = append(prop.Enum, *value)
		}
	}
	if immutableByCEL(p) {
		prop.XValidations = apiextensionsv1.ValidationRules{{
			Rule: "self == oldSelf", Message: fmt.Sprintf("parameter %s is immutable", p.Name),
		}}
	}
	return prop, nil
}

// immutableByCEL: CEL cannot read an array or map of values of any type,
// which the admission webhook keeps from changing instead.
func immutableByCEL(p *kudov1beta1.Parameter) bool {
	t := params.TypeOf(p.Type)
	return p.Immutable != nil && *p.Immutable && t != kudov1beta1.ArrayValueType && t != kudov1beta1.MapValueType
}

// describe is what kubectl explain prints of a parameter: its description
// (its display name when it has none), the parameter's name when the field's
// differs, and the plan a change runs.
func describe(p *kudov1beta1.Parameter) string {
	parts := []string{sentence(cmpOr(p.Description, p.DisplayName))}
	if FieldOf(p.Name) != p.Name {
		parts = append(parts, fmt.Sprintf("Parameter %q.", p.Name))
	}
	if p.Trigger != "" {
		parts = append(parts, fmt.Sprintf("A change runs the plan %q.", p.Trigger))
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.ContainsAny(s[len(s)-1:], ".!?:") {
		s += "."
	}
	return s
}

// JSONValue is a parameter's value, as the Instance holds it (a string),
// as the typed object's field holds it.
func JSONValue(value string, t kudov1beta1.ParameterType) (*apiextensionsv1.JSON, error) {
	v, err := Value(value, t)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &apiextensionsv1.JSON{Raw: raw}, nil
}

// Value is a parameter's value, as the Instance holds it, decoded as the
// typed object's field holds it.
func Value(value string, t kudov1beta1.ParameterType) (any, error) {
	switch params.TypeOf(t) {
	case kudov1beta1.IntegerValueType:
		return strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	case kudov1beta1.NumberValueType:
		return strconv.ParseFloat(strings.TrimSpace(value), 64)
	case kudov1beta1.BooleanValueType:
		return strconv.ParseBool(strings.TrimSpace(value))
	}
	return params.Unwrap(value, t)
}

// CRD is the CustomResourceDefinition of the Operator's typed API as one
// package version serves it: one API version, typed by newest.
func CRD(names Names, operator string, newest []kudov1beta1.Parameter, older ...[]kudov1beta1.Parameter) (
	*apiextensionsv1.CustomResourceDefinition, error,
) {
	version, err := crdVersion(names, operator, names.Version, newest, older...)
	if err != nil {
		return nil, err
	}
	version.Storage = true
	return newCRD(names, operator, version), nil
}

// ServedCRD is the CustomResourceDefinition of the Operator's typed API as
// its OperatorVersions serve it: a version for each API version of e, each
// typed by its newest OperatorVersion, the newest the storage version; with
// more than one, converted by the webhook conversion names.
func ServedCRD(names Names, operator string, e Evolution, conversion *apiextensionsv1.WebhookClientConfig) (
	*apiextensionsv1.CustomResourceDefinition, error,
) {
	versions := make([]apiextensionsv1.CustomResourceDefinitionVersion, 0, len(e))
	for i := range e {
		var older [][]kudov1beta1.Parameter
		for _, ov := range e[i].Versions[:len(e[i].Versions)-1] {
			older = append(older, ov.Spec.Parameters)
		}
		version, err := crdVersion(names, operator, e[i].Name, e[i].Newest().Spec.Parameters, older...)
		if err != nil {
			return nil, fmt.Errorf("OperatorVersion %s: %w", e[i].Newest().Name, err)
		}
		versions = append(versions, version)
	}
	versions[len(versions)-1].Storage = true
	crd := newCRD(names, operator, versions...)
	if len(versions) > 1 {
		if conversion == nil {
			return nil, fmt.Errorf("its API versions %s need the manager's conversion webhook, which the webhook %s does not say how to reach",
				strings.Join(e.names(), ", "), TypedWebhook)
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook:  &apiextensionsv1.WebhookConversion{ClientConfig: conversion, ConversionReviewVersions: []string{"v1"}},
		}
	}
	return crd, nil
}

// crdVersion is one served version of the kind, typed by the parameters
// of newest, keeping the fields of older ones.
func crdVersion(names Names, operator, name string, newest []kudov1beta1.Parameter, older ...[]kudov1beta1.Parameter) (
	apiextensionsv1.CustomResourceDefinitionVersion, error) {
	spec, err := SpecSchema(newest, older...)
	if err != nil {
		return apiextensionsv1.CustomResourceDefinitionVersion{}, err
	}
	var required []string
	if len(spec.Required) > 0 {
		required = []string{"spec"}
	}
	return apiextensionsv1.CustomResourceDefinitionVersion{
		Name: name, Served: true,
		Subresources:             &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		AdditionalPrinterColumns: printerColumns,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object",
			Description: fmt.Sprintf("%s runs the package %s, as an Instance of it would: kubectl kudo plan status "+
				"--instance NAME shows its plans.", names.Kind, operator),
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"apiVersion": {Type: "string"},
				"kind":       {Type: "string"},
				"metadata":   {Type: "object"},
				"spec":       *spec,
				"status": {
					Type: "object", XPreserveUnknownFields: ptr.To(true),
					Description: "The plans and conditions of the Instance that runs the object.",
				},
			},
			Required: required,
		}},
	}, nil
}

func newCRD(names Names, operator string, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   names.CRDName(),
			Labels: map[string]string{OperatorLabel: operator, "app.kubernetes.io/managed-by": "kudo-ng"},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: names.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: names.Kind, ListKind: names.Kind + "List", Plural: names.Plural, Singular: names.Singular,
				ShortNames: names.ShortNames, Categories: []string{Category},
			},
			Scope:    apiextensionsv1.NamespaceScoped,
			Versions: versions,
		},
	}
}

var printerColumns = []apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Operator Version", Type: "string", JSONPath: ".status.operatorVersion"},
	{Name: "Plan", Type: "string", JSONPath: ".status.activePlan.name"},
	{Name: "Plan Status", Type: "string", JSONPath: ".status.activePlan.status"},
	{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
	{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
}
