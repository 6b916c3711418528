package yamlbound

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// AliasBomb is the attack of issue 45: one 40,000-character scalar aliased
// 10,000 times, 70 KB of text that expand to 400 MB.
func AliasBomb() string {
	return "a: &a " + strings.Repeat("x", 40000) + "\nb: [" + strings.Repeat("*a,", 9999) + "*a]\n"
}

// billionLaughs nests lists of aliases: ten levels of ten make 10^10 leaves.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol]\n")
	for i := 1; i <= 10; i++ {
		prev := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s%s]\n", i, i, strings.Repeat(prev+",", 9), prev)
	}
	return b.String()
}

func TestAliasesExpandWithinTheLimit(t *testing.T) {
	const limit = 4 << 20
	for _, tc := range []struct {
		name, yaml string
		refused    bool
	}{
		{name: "plain", yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a*b&c\n"},
		{name: "an anchor used a few times", yaml: "a: &env {name: X, value: y}\nb: [*env, *env]\nc:\n  <<: *env\n"},
		{name: "several documents", yaml: "a: &x 1\nb: *x\n---\nc: &y 2\nd: *y\n"},
		{name: "an alias bomb", yaml: AliasBomb(), refused: true},
		{name: "an alias bomb in a later document", yaml: "a: 1\n---\n" + AliasBomb(), refused: true},
		{name: "billion laughs", yaml: billionLaughs(), refused: true},
		{name: "a bomb through a merge key", yaml: "a: &a {k: " + strings.Repeat("x", 40000) + "}\nb: [" + strings.Repeat("{<<: *a},", 9999) + "{<<: *a}]\n", refused: true},
		{name: "an alias this parser cannot read", yaml: "a: &a [\nb: *a\n", refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.yaml), limit)
			if tc.refused != (err != nil) {
				t.Fatalf("Check = %v, want refused %v", err, tc.refused)
			}
			if !tc.refused {
				var v any
				if err := yaml.Unmarshal([]byte(tc.yaml), &v); err != nil && !strings.Contains(tc.yaml, "---") {
					t.Fatalf("accepted YAML does not parse: %v", err)
				}
			}
		})
	}
}

func TestTheLimitIsTheExpandedSize(t *testing.T) {
	doc := []byte("a: &a " + strings.Repeat("x", 1000) + "\nb: [*a, *a, *a, *a]\n")
	if err := Check(doc, 10000); err != nil {
		t.Fatalf("5,000 bytes expanded, limit 10,000: %v", err)
	}
	err := Check(doc, 4000)
	var expansion *ExpansionError
	if !errors.As(err, &expansion) || expansion.Limit != 4000 {
		t.Fatalf("5,000 bytes expanded, limit 4,000: %v, want an ExpansionError", err)
	}
	if want := "its aliases (*name) expand it to more than 4000 bytes"; !strings.Contains(err.Error(), want) {
		t.Fatalf("%q does not say %q", err, want)
	}
}

func FuzzCheck(f *testing.F) {
	for _, seed := range []string{"a: &a x\nb: *a\n", AliasBomb()[:200], "&a [*a]", "a: &a {<<: *a}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		_ = Check([]byte(doc), 1<<16) // Errors are fine; panics and hangs are not.
	})
}

// TestADenseDocumentIsNoBomb: a document of many small items measures more
// than its length; without aliases that expand, it passes at its own size.
func TestADenseDocumentIsNoBomb(t *testing.T) {
	doc := []byte("a: &a x\nb: *a\nc: [" + strings.Repeat("1,", 5000) + "1]\n")
	if err := Check(doc, len(doc)); err != nil {
		t.Fatalf("a dense document of %d bytes: %v", len(doc), err)
	}
}
