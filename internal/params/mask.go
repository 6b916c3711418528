package params

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// A mask is what kudo-ng records of a sensitive value in an Instance's status
// (appliedParameters, revisions): an HMAC of the value keyed with a key only
// the manager holds, derived for the Instance and the parameter. It tells
// that a value changed and nothing of the value: whoever reads the Instance
// cannot make a mask to try a guess against, equal masks of two Instances
// or parameters do not show a shared password, and an Instance made to mask
// a guess masks it with a key of its own.

const (
	maskPrefix = "<sensitive sha256:"
	maskSuffix = ">"
)

// MaskKeys are the keys the manager masks with. Current makes every mask;
// a mask made with a Previous key (one rotated out) still verifies, and is
// made again with Current once the value it masks is known (Rekey).
type MaskKeys struct {
	Current  []byte
	Previous [][]byte
	// instance scopes the keys to one Instance, its uid (ForInstance).
	instance types.UID
}

// ForInstance are the keys of one Instance's masks: also its uid, the key of
// the masks recorded before the manager had a key of its own. Anyone who
// reads the Instance reads the uid, so it verifies old masks and makes none.
func (k MaskKeys) ForInstance(uid types.UID) MaskKeys {
	return MaskKeys{Current: k.Current, Previous: append(slices.Clone(k.Previous), []byte(uid)), instance: uid}
}

// Mask masks a parameter's value with the current key.
func (k MaskKeys) Mask(name, value string) string {
	return mask(k.scoped(k.Current, name), value)
}

// scoped is the key of one parameter's masks of the Instance.
func (k MaskKeys) scoped(key []byte, name string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("mask\x00" + string(k.instance) + "\x00" + name))
	return mac.Sum(nil)
}

// Derive is a key for another purpose, made from the current key: what it
// keys changes when the mask key is rotated.
func (k MaskKeys) Derive(purpose string) []byte {
	mac := hmac.New(sha256.New, k.Current)
	mac.Write([]byte(purpose))
	return mac.Sum(nil)
}

// SecretDigestKey keys the digests the manager's cache holds of Secrets'
// data (objects.Trim).
func (k MaskKeys) SecretDigestKey() []byte {
	return k.Derive("digests of Secrets' data")
}

// Verify reports whether m is the mask of the parameter's value made with
// any of the keys, scoped or as masks were made before they were scoped
// (one HMAC of the value, the same in every Instance), which Rekey makes
// again.
func (k MaskKeys) Verify(name, m, value string) bool {
	return slices.ContainsFunc(append([][]byte{k.Current}, k.Previous...), func(key []byte) bool {
		return m == mask(k.scoped(key, name), value) || m == mask(key, value)
	})
}

// mask is the HMAC-SHA256 of value, shortened: 64 bits tell a change.
func mask(key []byte, value string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(value))
	return maskPrefix + hex.EncodeToString(mac.Sum(nil))[:16] + maskSuffix
}

// IsMasked reports whether a recorded value is a mask.
func IsMasked(s string) bool {
	return strings.HasPrefix(s, maskPrefix) && strings.HasSuffix(s, maskSuffix)
}

// Masked copies values with the sensitive ones masked.
func Masked(values map[string]string, sensitive map[string]bool, keys MaskKeys) map[string]string {
	if values == nil {
		return nil
	}
	out := maps.Clone(values)
	for name, v := range out {
		if sensitive[name] {
			out[name] = keys.Mask(name, v)
		}
	}
	return out
}

// ErrMaskedChanged says that a masked value cannot be recovered: the value
// it was taken from has changed since.
var ErrMaskedChanged = errors.New("a sensitive value changed since it was recorded")

// Unmask recovers recorded values (appliedParameters) whose masked ones the
// current values still match.
func Unmask(recorded, current map[string]string, keys MaskKeys) (map[string]string, error) {
	if recorded == nil {
		return nil, nil
	}
	out := maps.Clone(recorded)
	for name, v := range out {
		if !IsMasked(v) {
			continue
		}
		now, ok := current[name]
		if !ok || !keys.Verify(name, v, now) {
			return nil, fmt.Errorf("parameter %s: %w", name, ErrMaskedChanged)
		}
		out[name] = now
	}
	return out, nil
}

// Rekey makes again with the current key, scoped, each mask of recorded that
// another key, or the unscoped form, made of the value values hold now. A
// mask of any other value stays as it is: it verifies only while its key is
// known, and once that key is dropped it tells nothing, not even that a
// value is the same again. Rekey returns recorded itself when no mask
// changes.
func Rekey(recorded, values map[string]string, keys MaskKeys) map[string]string {
	var out map[string]string
	for name, m := range recorded {
		v, ok := values[name]
		if !ok || !IsMasked(m) || m == keys.Mask(name, v) || !keys.Verify(name, m, v) {
			continue
		}
		if out == nil {
			out = maps.Clone(recorded)
		}
		out[name] = keys.Mask(name, v)
	}
	if out == nil {
		return recorded
	}
	return out
}
