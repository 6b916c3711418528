package params

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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

const (
	maskPrefix = "<sensitive sha256:"
	maskSuffix = ">"
)

// Mask is what kudo-ng records of a sensitive value: its SHA-256 HMAC keyed
// with key (the Instance's uid), shortened. It tells that a value changed
// and nothing of the value, and differs between Instances.
func Mask(key, value string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(value))
	return maskPrefix + hex.EncodeToString(mac.Sum(nil))[:16] + maskSuffix
}

// IsMasked reports whether a recorded value is a Mask.
func IsMasked(s string) bool {
	return strings.HasPrefix(s, maskPrefix) && strings.HasSuffix(s, maskSuffix)
}

// Masked copies values with the sensitive ones masked.
func Masked(values map[string]string, sensitive map[string]bool, key string) map[string]string {
	if values == nil {
		return nil
	}
	out := maps.Clone(values)
	for name, v := range out {
		if sensitive[name] {
			out[name] = Mask(key, v)
		}
	}
	return out
}

// ErrMaskedChanged says that a masked value cannot be recovered: the value
// it was taken from has changed since.
var ErrMaskedChanged = errors.New("a sensitive value changed since it was recorded")

// Unmask recovers recorded values (appliedParameters) whose masked ones the
// current values still match.
func Unmask(recorded, current map[string]string, key string) (map[string]string, error) {
	if recorded == nil {
		return nil, nil
	}
	out := maps.Clone(recorded)
	for name, v := range out {
		if !IsMasked(v) {
			continue
		}
		now, ok := current[name]
		if !ok || Mask(key, now) != v {
			return nil, fmt.Errorf("parameter %s: %w", name, ErrMaskedChanged)
		}
		out[name] = now
	}
	return out, nil
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
