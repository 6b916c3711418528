package params

import (
	"fmt"
	"sort"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Resolve turns parameter values given by a user — values files first, then
// K=V assignments, later ones winning — into the strings an Instance stores,
// checked against the OperatorVersion's parameters: each must be defined and
// of its type, and every required parameter without a default must be set.
func Resolve(parameters []kudov1beta1.Parameter, files []string, assignments []string) (map[string]string, error) {
	byName := make(map[string]*kudov1beta1.Parameter, len(parameters))
	for i := range parameters {
		byName[parameters[i].Name] = &parameters[i]
	}
	raw := map[string]any{}
	for _, f := range files {
		values, err := ReadValuesFile(f)
		if err != nil {
			return nil, err
		}
		for k, v := range values {
			raw[k] = v
		}
	}
	for _, a := range assignments {
		name, value, err := ParseAssignment(a)
		if err != nil {
			return nil, err
		}
		raw[name] = value
	}

	out := make(map[string]string, len(raw))
	for _, name := range sortedNames(raw) {
		p, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("parameter %s is not defined; the parameters are %s", name, strings.Join(names(parameters), ", "))
		}
		s, err := Wrap(raw[name], p.Type)
		if err == nil {
			err = Check(p, s)
		} else {
			err = fmt.Errorf("parameter %s: %w", name, err)
		}
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	for i := range parameters {
		p := &parameters[i]
		if NeedsValue(p) && out[p.Name] == "" {
			return nil, fmt.Errorf("parameter %s is required and has no default: set it with -p %s=VALUE", p.Name, p.Name)
		}
	}
	return out, nil
}

func sortedNames(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func names(parameters []kudov1beta1.Parameter) []string {
	out := make([]string, 0, len(parameters))
	for _, p := range parameters {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// Optional makes every parameter optional, for a change that sets some of
// them while the others keep their values.
func Optional(parameters []kudov1beta1.Parameter) []kudov1beta1.Parameter {
	out := make([]kudov1beta1.Parameter, len(parameters))
	no := false
	for i, p := range parameters {
		p.Required = &no
		out[i] = p
	}
	return out
}
