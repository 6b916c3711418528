package packages

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// Convert converts the package to the Operator and OperatorVersion that
// install it in a namespace.
func (p *Package) Convert(namespace string) (*kudov1beta1.Operator, *kudov1beta1.OperatorVersion, error) {
	o := p.Operator
	operator := &kudov1beta1.Operator{
		TypeMeta:   metav1.TypeMeta{APIVersion: kudov1beta1.GroupVersion.String(), Kind: "Operator"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: namespace},
		Spec: kudov1beta1.OperatorSpec{
			Description:       o.Description,
			KudoVersion:       o.KUDOVersion,
			KubernetesVersion: o.KubernetesVersion,
			Maintainers:       o.Maintainers,
			URL:               o.URL,
			NamespaceManifest: o.NamespaceManifest,
		},
	}
	parameters, err := p.apiParameters()
	if err != nil {
		return nil, nil, err
	}
	ov := &kudov1beta1.OperatorVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: kudov1beta1.GroupVersion.String(), Kind: "OperatorVersion"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      kudov1beta1.OperatorVersionName(o.Name, o.AppVersion, o.OperatorVersion),
			Namespace: namespace,
		},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator:     corev1.ObjectReference{Name: o.Name, Kind: "Operator"},
			Version:      o.OperatorVersion,
			AppVersion:   o.AppVersion,
			Templates:    p.Templates,
			Charts:       p.Charts,
			Tasks:        o.Tasks,
			Parameters:   parameters,
			Plans:        o.Plans,
			HealthChecks: o.HealthChecks,
			TypedAPI:     o.TypedAPI,
		},
	}
	if p.Origin != "" {
		ov.Annotations = map[string]string{kudov1beta1.PackageDigestAnnotation: p.Origin}
	}
	return operator, ov, nil
}

// apiParameters converts params.yaml's parameters: required defaults to
// true, defaults and enum values are serialized as KUDO stores them.
func (p *Package) apiParameters() ([]kudov1beta1.Parameter, error) {
	out := make([]kudov1beta1.Parameter, 0, len(p.Params.Parameters))
	for i := range p.Params.Parameters {
		in := &p.Params.Parameters[i]
		param := kudov1beta1.Parameter{
			Name:        in.Name,
			DisplayName: in.DisplayName,
			Description: in.Description,
			Required:    ptr.To(in.IsRequired()),
			Trigger:     in.Trigger,
			Type:        in.Type,
			Immutable:   in.Immutable,
			Sensitive:   in.Sensitive,
			OldName:     in.OldName,
		}
		switch {
		case in.Default != nil:
			d, err := params.Wrap(in.Default, in.Type)
			if err != nil {
				return nil, fmt.Errorf("%s: parameter %s: default: %w", ParamsFileName, in.Name, err)
			}
			param.Default = &d
		case params.TypeOf(in.Type) == kudov1beta1.ArrayValueType || params.TypeOf(in.Type) == kudov1beta1.MapValueType:
			// KUDO wrote the absent default of an array or map as YAML: such
			// a parameter is never missing, even when required.
			param.Default = ptr.To("null")
		}
		conversion, err := in.Conversion.api(in.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: parameter %s: conversion: %w", ParamsFileName, in.Name, err)
		}
		param.Conversion = conversion
		if in.Enum != nil {
			enum := make([]string, 0, len(*in.Enum))
			for _, e := range *in.Enum {
				v, err := params.Wrap(e, in.Type)
				if err != nil {
					return nil, fmt.Errorf("%s: parameter %s: enum: %w", ParamsFileName, in.Name, err)
				}
				enum = append(enum, v)
			}
			param.Enum = &enum
		}
		out = append(out, param)
	}
	return out, nil
}

// api is the rule as the OperatorVersion holds it: the values of the
// parameter, of type t, as KUDO stores them.
func (c *Conversion) api(t kudov1beta1.ParameterType) (*kudov1beta1.ParameterConversion, error) {
	if c == nil {
		return nil, nil
	}
	out := &kudov1beta1.ParameterConversion{Expression: c.Expression, Reverse: c.Reverse}
	if c.Default != nil {
		d, err := params.Wrap(c.Default, t)
		if err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
		out.Default = &d
	}
	if len(c.Values) > 0 {
		out.Values = make(map[string]string, len(c.Values))
		for from, to := range c.Values {
			v, err := params.Wrap(to, t)
			if err != nil {
				return nil, fmt.Errorf("values[%s]: %w", from, err)
			}
			out.Values[from] = v
		}
	}
	return out, nil
}
