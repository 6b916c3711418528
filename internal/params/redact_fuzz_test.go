package params

import (
	"strings"
	"testing"
)

// FuzzRedactor: text holding a sensitive value of minAnywhere bytes or
// more, in any of the forms formsOf lists, never shows one of those forms
// once redacted, unless the form overlaps a replacement "<sensitive NAME>"
// of either value (the value "sens", or "WORD" of PASSWORD), which
// redacting would write back; and text the Redactor says reveals nothing is left as it is.
func FuzzRedactor(f *testing.F) {
	for _, seed := range []struct {
		name, value, name2, value2, prefix, suffix string
		form                                       uint8
	}{
		{"PASSWORD", "hunter2-long", "TOKEN", "s3cr3t", "apply failed: value ", " is bad", 0},
		{"PASSWORD", "hunter2-long", "TOKEN", "hunter2", "data: {password: ", "}", 1},
		{"KEY", "line1\nline2", "PIN", "42", `invalid value: "`, `"`, 2},
		{"A", "abcd", "B", "bcde", "x", "ef", 0},
		{"A", "aaaa", "B", "aaaaa", "aaa", "aaaaaa", 0},
		{"A", "x<sen", "B", "itive A>", "xx<sen", "", 0},
		{"A", "xx", "B", "ve A", " ", "", 0},
	} {
		f.Add(seed.name, seed.value, seed.name2, seed.value2, seed.prefix, seed.suffix, seed.form)
	}
	f.Fuzz(func(t *testing.T, name, value, name2, value2, prefix, suffix string, form uint8) {
		values := map[string]string{name: value, name2: value2}
		r := NewRedactor(values, map[string]bool{name: true, name2: true})
		var redacted, replacements []string
		for n := range map[string]bool{name: true, name2: true} {
			// A short value is hidden too, as a word, and its replacement may
			// show the other value.
			replacements = append(replacements, "<sensitive "+n+">")
			if len(values[n]) >= minAnywhere {
				redacted = append(redacted, values[n])
			}
		}

		plain := prefix + suffix
		if !r.Reveals(plain) {
			if got := r.String(plain); got != plain {
				t.Fatalf("%q reveals no sensitive value, and was redacted to %q", plain, got)
			}
		}

		forms := formsOf(value)
		text := prefix + forms[int(form)%len(forms)] + suffix
		got := r.String(text)
		for _, v := range redacted {
			for _, shown := range formsOf(v) {
				if strings.Contains(got, shown) && !overlapsAny(shown, replacements) {
					t.Fatalf("%q redacted is %q, which still holds %q", text, got, shown)
				}
			}
		}
	})
}

// overlapsAny reports whether s could be made, in part or whole, by one of
// the replacements: s is in it, holds it, or begins with its end or ends
// with its beginning.
func overlapsAny(s string, replacements []string) bool {
	for _, r := range replacements {
		if strings.Contains(r, s) || strings.Contains(s, r) {
			return true
		}
		for k := 1; k < len(r) && k < len(s); k++ {
			if strings.HasSuffix(s, r[:k]) || strings.HasPrefix(s, r[len(r)-k:]) {
				return true
			}
		}
	}
	return false
}
