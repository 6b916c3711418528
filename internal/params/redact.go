package params

import (
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// minRedacted is the shortest value a Redactor hides: shorter ones would
// garble every message that happens to contain them, and hide nothing.
const minRedacted = 4

// Redactor hides sensitive values in text meant for people: messages,
// events, logs, the CLI's output.
type Redactor struct {
	replacer *strings.Replacer
}

// NewRedactor hides the values of the sensitive parameters, as they are and
// as they appear base64-encoded (a Secret's data) or quoted.
func NewRedactor(values map[string]string, sensitive map[string]bool) *Redactor {
	type form struct{ text, name string }
	var forms []form
	for name := range sensitive {
		v := values[name]
		if len(v) < minRedacted {
			continue
		}
		quoted := strconv.Quote(v)
		for _, text := range []string{v, base64.StdEncoding.EncodeToString([]byte(v)), quoted[1 : len(quoted)-1]} {
			forms = append(forms, form{text, name})
		}
	}
	if len(forms) == 0 {
		return &Redactor{}
	}
	// The replacer tries its pairs in order: longer values first, so that
	// one containing another is hidden whole.
	slices.SortFunc(forms, func(a, b form) int { return len(b.text) - len(a.text) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f.text, "<sensitive "+f.name+">")
	}
	return &Redactor{replacer: strings.NewReplacer(pairs...)}
}

// String hides the sensitive values in s.
func (r *Redactor) String(s string) string {
	if r == nil || r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// Error hides the sensitive values in an error's message.
func (r *Redactor) Error(err error) error {
	if err == nil || r == nil || r.replacer == nil {
		return err
	}
	if msg := err.Error(); r.String(msg) != msg {
		return errors.New(r.String(msg))
	}
	return err
}
