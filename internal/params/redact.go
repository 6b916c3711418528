package params

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// minAnywhere is the length from which a sensitive value is hidden wherever
// it appears. A shorter one (a PIN) is hidden only as a whole word, between
// characters that are not letters or digits: hidden in "pin=42", but "420
// replicas" stays as it is.
const minAnywhere = 4

// minEncoded is the length from which a word of base64 characters is
// decoded, to hide it whole when what it encodes shows a sensitive value:
// base64("u:pw"), the shortest HTTP basic auth, has 8.
const minEncoded = 8

// maxNesting bounds how many times base64 is decoded within base64: the
// auth of a docker config, in a Secret's data, is encoded twice over.
const maxNesting = 3

// Redactor hides sensitive values in text meant for people: messages,
// events, logs, the CLI's output.
type Redactor struct {
	// forms are the texts the values appear as, longest first.
	forms []form
}

type form struct {
	text, name string
	// word: the value is shorter than minAnywhere.
	word bool
}

// NewRedactor hides the values of the sensitive parameters: as they are,
// quoted or escaped, URL-encoded and base64-encoded (formsOf), and base64
// words that encode text showing any of these.
func NewRedactor(values map[string]string, sensitive map[string]bool) *Redactor {
	byText := map[string]form{}
	for _, name := range slices.Sorted(maps.Keys(sensitive)) {
		v := values[name]
		if !worthHiding(v) {
			continue
		}
		short := len(v) < minAnywhere
		for _, text := range formsOf(v) {
			f, seen := byText[text]
			if !seen {
				f = form{text: text, name: name, word: short}
			}
			// A form two values share is hidden as the longer needs.
			f.word = f.word && short
			byText[text] = f
		}
	}
	forms := slices.SortedFunc(maps.Values(byText), func(a, b form) int {
		return cmp.Or(len(b.text)-len(a.text), strings.Compare(a.text, b.text))
	})
	return &Redactor{forms: forms}
}

// worthHiding: a short value without a letter or digit (a dash, a dot)
// would hide the punctuation of every message.
func worthHiding(v string) bool {
	return len(v) >= minAnywhere || strings.IndexFunc(v, func(r rune) bool { return r >= utf8.RuneSelf || isWordByte(byte(r)) }) >= 0
}

// formsOf are the texts v appears as: itself; quoted as Go's %q does, or
// escaped as encoding/json does, once or twice over (a message quoting one
// that quoted it); URL-encoded as a password, a query or a path (a
// connection string's); base64-encoded with either alphabet, padded or not
// (a Secret's data, a token). A short value's unpadded base64 is two or
// three letters that ordinary words are made of: it is left out.
func formsOf(v string) []string {
	forms := make([]string, 0, 16)
	forms = append(forms, v, strings.TrimPrefix(url.UserPassword("", v).String(), ":"), url.QueryEscape(v), url.PathEscape(v))
	for _, once := range []string{quoted(v), jsonEscaped(v)} {
		forms = append(forms, once, quoted(once), jsonEscaped(once))
	}
	forms = append(forms, base64.StdEncoding.EncodeToString([]byte(v)), base64.URLEncoding.EncodeToString([]byte(v)))
	if len(v) >= minAnywhere {
		forms = append(forms, base64.RawStdEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v)))
	}
	return forms
}

func quoted(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func jsonEscaped(s string) string {
	// Marshalling a string cannot fail.
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// String hides the sensitive values in s. Where forms of values overlap,
// what they cover together is hidden, named after the one that starts first
// (the longest of those).
func (r *Redactor) String(s string) string {
	if r == nil || len(r.forms) == 0 {
		return s
	}
	found := r.find(s, 0)
	if len(found) == 0 {
		return s
	}
	slices.SortFunc(found, func(a, b match) int { return cmp.Or(a.start-b.start, b.end-a.end) })
	var out strings.Builder
	last := 0
	for n := 0; n < len(found); {
		m := found[n]
		end := m.end
		for n++; n < len(found) && found[n].start < end; n++ {
			end = max(end, found[n].end)
		}
		out.WriteString(s[last:m.start])
		out.WriteString("<sensitive " + m.name + ">")
		last = end
	}
	out.WriteString(s[last:])
	return out.String()
}

// Reveals reports whether s shows a sensitive value, in any form String
// hides.
func (r *Redactor) Reveals(s string) bool {
	return r != nil && len(r.forms) > 0 && len(r.find(s, 0)) > 0
}

// Error hides the sensitive values in an error's message.
func (r *Redactor) Error(err error) error {
	if err == nil || r == nil || len(r.forms) == 0 {
		return err
	}
	if msg := err.Error(); r.String(msg) != msg {
		return errors.New(r.String(msg))
	}
	return err
}

// match is a stretch of text that shows the value of parameter name.
type match struct {
	start, end int
	name       string
}

// find finds the forms of the values in s, and the base64 words that encode
// text showing one; nesting counts the base64 that s was decoded from.
func (r *Redactor) find(s string, nesting int) []match {
	var found []match
	for _, f := range r.forms {
		for at := 0; at < len(s); {
			i := strings.Index(s[at:], f.text)
			if i < 0 {
				break
			}
			start, end := at+i, at+i+len(f.text)
			if f.word && (!wordStartsAt(s, start) || !wordEndsAt(s, end)) {
				at = start + 1
				continue
			}
			found = append(found, match{start, end, f.name})
			at = end
		}
	}
	if nesting < maxNesting {
		found = append(found, r.encoded(s, nesting)...)
	}
	return found
}

// encoded finds the words of s that look base64-encoded and decode to text
// that shows a value. Only text counts: a value found in the bytes ordinary
// words decode to, a short one above all, would hide those words.
func (r *Redactor) encoded(s string, nesting int) []match {
	var found []match
	for start := 0; start < len(s); {
		if base64Chars[s[start]] == 0 {
			start++
			continue
		}
		end, alphabet := start, uint8(0)
		for end < len(s) && base64Chars[s[end]] != 0 {
			alphabet |= base64Chars[s[end]]
			end++
		}
		for pad := 0; pad < 2 && end < len(s) && s[end] == '='; pad++ {
			end++
		}
		word := s[start:end]
		if start > 0 && s[start-1] == '\\' {
			// The word starts with the letter of an escape (\n, \u00e9).
			word = word[min(escapeLen(word), len(word)):]
		}
		if len(word) >= minEncoded {
			if name, ok := r.decodedShows(word, alphabet, nesting); ok {
				found = append(found, match{end - len(word), end, name})
			}
		}
		start = end
	}
	return found
}

// The characters of base64 words: those of both alphabets, and those of
// the standard one or the URL one only.
const (
	bothAlphabets uint8 = 1 << iota
	stdAlphabet
	urlAlphabet
)

var base64Chars = func() (chars [256]uint8) {
	for c := range chars {
		if isWordByte(byte(c)) {
			chars[c] = bothAlphabets
		}
	}
	chars['+'], chars['/'], chars['-'], chars['_'] = stdAlphabet, stdAlphabet, urlAlphabet, urlAlphabet
	return chars
}()

// decodedShows reports the parameter whose value the base64 word, made of
// the alphabet's characters, encodes, if it decodes to text showing one. It
// decodes a chunk at a time on the stack, and stops at the first that is
// not text, as most words of a message are not.
func (r *Redactor) decodedShows(word string, alphabet uint8, nesting int) (string, bool) {
	enc := base64.RawStdEncoding
	switch alphabet & (stdAlphabet | urlAlphabet) {
	case stdAlphabet | urlAlphabet:
		return "", false
	case urlAlphabet:
		enc = base64.RawURLEncoding
	}
	data := strings.TrimRight(word, "=")
	if len(data)%4 == 1 {
		return "", false
	}
	var buf [192]byte
	decoded := buf[:0]
	var chunk [64]byte // whole quads, but for the last
	var out [48]byte
	for len(data) > 0 {
		k := copy(chunk[:], data)
		n, err := enc.Decode(out[:], chunk[:k])
		if err != nil || hasControl(out[:n]) {
			return "", false
		}
		decoded = append(decoded, out[:n]...)
		data = data[k:]
	}
	if !utf8.Valid(decoded) {
		return "", false
	}
	found := r.find(string(decoded), nesting+1)
	if len(found) == 0 {
		return "", false
	}
	return found[0].name, true
}

// hasControl reports whether b holds a control character other than tabs
// and line ends: text does not.
func hasControl(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
			return true
		}
	}
	return false
}

// escapeLen is how much of a word an escape's backslash precedes takes:
// \uXXXX or one letter.
func escapeLen(word string) int {
	if word[0] == 'u' {
		return 5
	}
	return 1
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// wordStartsAt reports whether no letter or digit comes right before i: a
// letter after a backslash is an escape's (\n).
func wordStartsAt(s string, i int) bool {
	return i == 0 || !isWordChar(s[i-1]) || (i >= 2 && s[i-2] == '\\')
}

// wordEndsAt reports whether no letter or digit comes at i.
func wordEndsAt(s string, i int) bool {
	return i == len(s) || !isWordChar(s[i])
}

// isWordChar: bytes of multibyte characters belong to words, as letters do.
func isWordChar(c byte) bool {
	return isWordByte(c) || c >= utf8.RuneSelf
}
