package params

import (
	"fmt"
	"sort"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Assigned is what a user gave parameters: values, and Secret keys that
// values are taken from (-p NAME=@secret:SECRET/KEY).
type Assigned struct {
	Values  map[string]string
	Secrets map[string]kudov1beta1.SecretKeyReference
}

// Resolve turns parameter values given by a user — values files first, then
// K=V assignments, later ones winning — into the strings an Instance stores,
// checked against the OperatorVersion's parameters: each must be defined and
// of its type, and every required parameter without a default must be set.
// A value @secret:NAME/KEY becomes a Secret reference.
func Resolve(parameters []kudov1beta1.Parameter, files []string, assignments []string) (Assigned, error) {
	byName := make(map[string]*kudov1beta1.Parameter, len(parameters))
	for i := range parameters {
		byName[parameters[i].Name] = &parameters[i]
	}
	raw := map[string]any{}
	for _, f := range files {
		values, err := ReadValuesFile(f)
		if err != nil {
			return Assigned{}, err
		}
		for k, v := range values {
			raw[k] = v
		}
	}
	for _, a := range assignments {
		name, value, err := ParseAssignment(a)
		if err != nil {
			return Assigned{}, err
		}
		raw[name] = value
	}

	out := Assigned{Values: make(map[string]string, len(raw))}
	for _, name := range sortedNames(raw) {
		p, ok := byName[name]
		if !ok {
			return Assigned{}, fmt.Errorf("parameter %s is not defined; the parameters are %s", name, strings.Join(names(parameters), ", "))
		}
		if s, isString := raw[name].(string); isString {
			ref, isRef, err := ParseSecretReference(name, s)
			if err != nil {
				return Assigned{}, err
			}
			if isRef {
				if out.Secrets == nil {
					out.Secrets = map[string]kudov1beta1.SecretKeyReference{}
				}
				out.Secrets[name] = ref
				continue
			}
		}
		s, err := Wrap(raw[name], p.Type)
		if err == nil {
			err = Check(p, s)
		} else {
			err = fmt.Errorf("parameter %s: %w", name, err)
		}
		if err != nil {
			return Assigned{}, err
		}
		out.Values[name] = s
	}
	for i := range parameters {
		p := &parameters[i]
		if _, fromSecret := out.Secrets[p.Name]; NeedsValue(p) && out.Values[p.Name] == "" && !fromSecret {
			return Assigned{}, fmt.Errorf("parameter %s is required and has no default: set it with -p %s=VALUE", p.Name, p.Name)
		}
	}
	return out, nil
}

// ApplyTo sets the assigned parameters in an Instance's spec: a parameter
// given a value no longer comes from a Secret, and one given a Secret key no
// longer has a value.
func (a Assigned) ApplyTo(spec *kudov1beta1.InstanceSpec) {
	for name, v := range a.Values {
		if spec.Parameters == nil {
			spec.Parameters = map[string]string{}
		}
		spec.Parameters[name] = v
		delete(spec.SecretParameters, name)
	}
	for name, ref := range a.Secrets {
		if spec.SecretParameters == nil {
			spec.SecretParameters = map[string]kudov1beta1.SecretKeyReference{}
		}
		spec.SecretParameters[name] = ref
		delete(spec.Parameters, name)
	}
}

// AppliedTo reports whether the Instance has the values and Secret keys.
func (a Assigned) AppliedTo(i *kudov1beta1.Instance) bool {
	for name, v := range a.Values {
		if got, ok := i.Spec.Parameters[name]; !ok || got != v {
			return false
		}
	}
	for name, ref := range a.Secrets {
		if i.Spec.SecretParameters[name] != ref {
			return false
		}
	}
	return true
}

// PlainSensitive lists, sorted, the sensitive parameters given a value
// rather than a Secret key: their values are stored in the Instance's spec.
func (a Assigned) PlainSensitive(parameters []kudov1beta1.Parameter) []string {
	var out []string
	for i := range parameters {
		if _, ok := a.Values[parameters[i].Name]; ok && parameters[i].IsSensitive() {
			out = append(out, parameters[i].Name)
		}
	}
	return out
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
