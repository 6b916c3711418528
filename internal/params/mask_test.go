package params

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var (
	droppedKey  = []byte("a key rotated out and then dropped")
	previousKey = []byte("the key before the last rotation")
	currentKey  = []byte("the manager's key, 32 bytes long")
	// keys are an Instance's, whose uid is uid-1.
	keys = MaskKeys{Current: currentKey, Previous: [][]byte{previousKey}}.ForInstance("uid-1")
)

// The attack of issue 33: whoever reads an Instance reads its uid, which
// keyed the masks, and tried every 6-digit PIN against the recorded one in
// 0.4 s. A mask must be none that what the Instance shows can make.
func TestAMaskIsNotTheHMACOfTheInstancesUID(t *testing.T) {
	mac := hmac.New(sha256.New, []byte("uid-1"))
	mac.Write([]byte("123456"))
	byUID := "<sensitive sha256:" + hex.EncodeToString(mac.Sum(nil))[:16] + ">"
	got := keys.Mask("PIN", "123456")
	if got == byUID {
		t.Fatalf("Mask = %q, the HMAC of the value keyed with the Instance's uid", got)
	}
	if !IsMasked(got) || strings.Contains(got, "123456") {
		t.Errorf("Mask = %q", got)
	}
	if !keys.Verify("PIN", byUID, "123456") {
		t.Error("a mask recorded with the uid before the manager had a key does not verify")
	}
}

// scopedMask is the mask of hunter2-long as Mask makes it: keyed for the
// Instance and the parameter.
func scopedMask(key []byte, instance, name string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("mask\x00" + instance + "\x00" + name))
	return mask(mac.Sum(nil), "hunter2-long")
}

// TestMasksDifferByKeyValueInstanceAndParameter: the attack of issue 45,
// equal masks showing a shared password, and an Instance of one's own
// masking guesses to compare with another's masks.
func TestMasksDifferByKeyValueInstanceAndParameter(t *testing.T) {
	m := keys.Mask("PASSWORD", "hunter2-long")
	if keys.Mask("PASSWORD", "hunter2-long") != m || m != scopedMask(currentKey, "uid-1", "PASSWORD") {
		t.Error("a mask differs for one value, key, Instance and parameter")
	}
	other := MaskKeys{Current: currentKey}.ForInstance("uid-2")
	for what, o := range map[string]string{
		"another key":                 scopedMask(previousKey, "uid-1", "PASSWORD"),
		"another value":               keys.Mask("PASSWORD", "hunter3-long"),
		"another parameter":           keys.Mask("ADMIN_PASSWORD", "hunter2-long"),
		"another Instance":            other.Mask("PASSWORD", "hunter2-long"),
		"the unscoped mask of before": mask(currentKey, "hunter2-long"),
	} {
		if o == m {
			t.Errorf("the mask of %s is equal", what)
		}
	}
	if other.Verify("PASSWORD", m, "hunter2-long") {
		t.Error("another Instance verifies this Instance's mask: it could test guesses against it")
	}
	if IsMasked("<sensitive PASSWORD>") || IsMasked("plain") {
		t.Error("IsMasked takes other text for a mask")
	}
}

func TestAMaskVerifiesWithTheKeysTheManagerKnows(t *testing.T) {
	tests := []struct {
		name string
		mask string
		want bool
	}{
		{"made with the current key", scopedMask(currentKey, "uid-1", "PASSWORD"), true},
		{"made with the current key, before masks were scoped", mask(currentKey, "hunter2-long"), true},
		{"made with the current key for another parameter", scopedMask(currentKey, "uid-1", "PIN"), false},
		{"made with the current key for another Instance", scopedMask(currentKey, "uid-2", "PASSWORD"), false},
		{"made with the key before the rotation", mask(previousKey, "hunter2-long"), true},
		{"made with the Instance's uid, before the manager had a key", mask([]byte("uid-1"), "hunter2-long"), true},
		{"made with a key dropped since", mask(droppedKey, "hunter2-long"), false},
		{"made with another Instance's uid", mask([]byte("uid-2"), "hunter2-long"), false},
		{"of another value", mask(currentKey, "hunter3-long"), false},
		{"of another value, with the uid", mask([]byte("uid-1"), "hunter3-long"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keys.Verify("PASSWORD", tt.mask, "hunter2-long"); got != tt.want {
				t.Errorf("Verify = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestMaskedAndUnmask(t *testing.T) {
	values := map[string]string{"USER": "admin", "PASSWORD": "hunter2-long"}
	recorded := Masked(values, map[string]bool{"PASSWORD": true}, keys)
	if recorded["USER"] != "admin" || recorded["PASSWORD"] != scopedMask(currentKey, "uid-1", "PASSWORD") || values["PASSWORD"] != "hunter2-long" {
		t.Fatalf("Masked = %v (input now %v)", recorded, values)
	}
	for _, key := range [][]byte{currentKey, previousKey, []byte("uid-1")} {
		recorded["PASSWORD"] = mask(key, "hunter2-long")
		got, err := Unmask(recorded, map[string]string{"USER": "root", "PASSWORD": "hunter2-long"}, keys)
		if err != nil || !reflect.DeepEqual(got, values) {
			t.Errorf("Unmask of a mask made with %q = %v, %v; want the recorded values, the masked one recovered", key, got, err)
		}
	}
	if _, err := Unmask(recorded, map[string]string{"PASSWORD": "changed-value"}, keys); !errors.Is(err, ErrMaskedChanged) ||
		!strings.Contains(err.Error(), "parameter PASSWORD") {
		t.Errorf("Unmask of a changed value: %v", err)
	}
	recorded["PASSWORD"] = mask(droppedKey, "hunter2-long")
	if _, err := Unmask(recorded, values, keys); !errors.Is(err, ErrMaskedChanged) {
		t.Errorf("Unmask of a mask made with a dropped key: %v", err)
	}
}

func TestRekeyMakesTheMasksOfKnownValuesWithTheCurrentKey(t *testing.T) {
	values := map[string]string{"PASSWORD": "hunter2-long", "PIN": "123456", "USER": "admin"}
	current := scopedMask(currentKey, "uid-1", "PASSWORD")
	tests := []struct {
		name     string
		recorded string
		want     string
	}{
		{"a mask made with the current key stays", current, current},
		{"a mask made with the current key, before masks were scoped, is made again", mask(currentKey, "hunter2-long"), current},
		{"a mask made with the previous key is made again", scopedMask(previousKey, "uid-1", "PASSWORD"), current},
		{"a mask made with the uid is made again", mask([]byte("uid-1"), "hunter2-long"), current},
		{"a mask of another value stays, whatever its key", mask([]byte("uid-1"), "older-value"), mask([]byte("uid-1"), "older-value")},
		{"a mask made with a dropped key stays", mask(droppedKey, "hunter2-long"), mask(droppedKey, "hunter2-long")},
		{"a value recorded as it is stays", "hunter2-long", "hunter2-long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recorded := map[string]string{"PASSWORD": tt.recorded, "USER": "admin"}
			got := Rekey(recorded, values, keys)
			want := map[string]string{"PASSWORD": tt.want, "USER": "admin"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Rekey = %v, want %v", got, want)
			}
			if recorded["PASSWORD"] != tt.recorded {
				t.Error("Rekey changed the map it was given")
			}
		})
	}
	t.Run("a mask whose value is not known stays", func(t *testing.T) {
		recorded := map[string]string{"TOKEN": mask([]byte("uid-1"), "from a Secret not readable now")}
		if got := Rekey(recorded, values, keys); !reflect.DeepEqual(got, recorded) {
			t.Errorf("Rekey = %v, want %v", got, recorded)
		}
	})
}
