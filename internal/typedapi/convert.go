package typedapi

import (
	"fmt"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// Parameters are the values a typed object's spec sets, as the Instance
// that runs it holds them: each parameter of the OperatorVersion whose field
// the spec has. Fields of no parameter of this version (an older version's,
// kept from pruning) are left out.
func Parameters(spec map[string]any, parameters []kudov1beta1.Parameter) (map[string]string, error) {
	fields, err := Fields(parameters)
	if err != nil {
		return nil, err
	}
	values := make(map[string]string, len(parameters))
	for _, p := range parameters {
		v, ok := spec[fields[p.Name]]
		if !ok {
			continue
		}
		s, err := params.Wrap(v, p.Type)
		if err != nil {
			return nil, fmt.Errorf("spec.%s: %w", fields[p.Name], err)
		}
		values[p.Name] = s
	}
	return values, nil
}

// SpecValues are parameter values as an Instance holds them, as the fields
// of a typed object's spec hold them: what kubectl kudo update writes to a
// typed object.
func SpecValues(values map[string]string, parameters []kudov1beta1.Parameter) (map[string]any, error) {
	fields, err := Fields(parameters)
	if err != nil {
		return nil, err
	}
	spec := make(map[string]any, len(values))
	for _, p := range parameters {
		s, ok := values[p.Name]
		if !ok {
			continue
		}
		v, err := Value(s, p.Type)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		spec[fields[p.Name]] = v
	}
	for name := range values {
		if _, ok := fields[name]; !ok {
			return nil, fmt.Errorf("parameter %s: the OperatorVersion has no such parameter", name)
		}
	}
	return spec, nil
}
