package params

import (
	"fmt"
	"maps"
	"strings"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// SecretPrefix marks a command-line value that names a Secret's key:
// -p PASSWORD=@secret:NAME/KEY.
const SecretPrefix = "@secret:"

// ParseSecretReference reads the NAME/KEY of a value given as
// @secret:NAME/KEY; ok is false for any other value.
func ParseSecretReference(parameter, value string) (ref kudov1beta1.SecretKeyReference, ok bool, err error) {
	rest, ok := strings.CutPrefix(value, SecretPrefix)
	if !ok {
		return ref, false, nil
	}
	name, key, found := strings.Cut(rest, "/")
	if !found || name == "" || key == "" || strings.Contains(key, "/") {
		return ref, true, fmt.Errorf("parameter %s: %q names no Secret key: write %sNAME/KEY", parameter, value, SecretPrefix)
	}
	return kudov1beta1.SecretKeyReference{Name: name, Key: key}, true, nil
}

// Sensitive names the parameters whose values are masked: those the
// OperatorVersion marks sensitive and those taken from Secrets.
func Sensitive(defs []kudov1beta1.Parameter, secrets map[string]kudov1beta1.SecretKeyReference) map[string]bool {
	out := map[string]bool{}
	for i := range defs {
		if defs[i].IsSensitive() {
			out[defs[i].Name] = true
		}
	}
	for name := range secrets {
		out[name] = true
	}
	return out
}

// Declared are the parameters a spec sets, as one map: the values, and the
// Secret keys as kubectl kudo takes them (@secret:NAME/KEY), which win over
// a value of the same name; a change of either changes the parameter.
func Declared(values map[string]string, secrets map[string]kudov1beta1.SecretKeyReference) map[string]string {
	if len(secrets) == 0 {
		return values
	}
	out := maps.Clone(values)
	if out == nil {
		out = map[string]string{}
	}
	for name, ref := range secrets {
		out[name] = SecretPrefix + ref.String()
	}
	return out
}
