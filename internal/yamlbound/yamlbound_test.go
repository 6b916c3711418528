package yamlbound

import (
	"errors"
	"fmt"
	"runtime"
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
			err := Check([]byte(tc.yaml), Within(limit))
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
	if err := Check(doc, Within(10000)); err != nil {
		t.Fatalf("5,000 bytes expanded, limit 10,000: %v", err)
	}
	err := Check(doc, Within(4000))
	var expansion *LimitError
	if !errors.As(err, &expansion) || expansion.Limit != 4000 {
		t.Fatalf("5,000 bytes expanded, limit 4,000: %v, want a LimitError", err)
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
		_ = Check([]byte(doc), Within(1<<16)) // Errors are fine; panics and hangs are not.
	})
}

// TestADenseDocumentIsNoBomb: a document of many small items measures more
// than its length; without aliases that expand, it passes at its own size.
func TestADenseDocumentIsNoBomb(t *testing.T) {
	doc := []byte("a: &a x\nb: *a\nc: [" + strings.Repeat("1,", 5000) + "1]\n")
	if err := Check(doc, Within(len(doc))); err != nil {
		t.Fatalf("a dense document of %d bytes: %v", len(doc), err)
	}
}

// smallMapsBomb is one document of issue 62's attack: a list of small maps
// aliased n times, well under the bytes it may expand to, and many nodes.
func smallMapsBomb(n int) string {
	var b strings.Builder
	b.WriteString("m: &m [")
	for i := range 64 {
		fmt.Fprintf(&b, "{k%d: v},", i)
	}
	b.WriteString("{}]\nl: [")
	b.WriteString(strings.Repeat("*m,", n-1))
	b.WriteString("*m]\n")
	return b.String()
}

// TestTheStreamIsMeasuredWhole is issue 62's first attack: documents each
// within the limits, which together are not.
func TestTheStreamIsMeasuredWhole(t *testing.T) {
	l := Limits{Bytes: 4 << 20, Documents: 1024, Nodes: 262144}
	doc := smallMapsBomb(1500) // 1500 × 64 maps × 3 nodes: 288,000 nodes, 1.1 MB
	for _, tc := range []struct {
		name, yaml string
		want       string
	}{
		{name: "one document of small maps past the nodes", yaml: doc,
			want: "it holds more than 262144 YAML nodes (scalars, maps and lists, aliases expanded)"},
		{name: "seven documents, each within the limits alone", yaml: strings.Repeat(smallMapsBomb(300)+"---\n", 7),
			want: "it holds more than 262144 YAML nodes"},
		{name: "documents past the bytes together", yaml: strings.Repeat("a: &a "+strings.Repeat("x", 40000)+"\nb: ["+strings.Repeat("*a,", 20)+"*a]\n---\n", 6),
			want: "its aliases (*name) expand it to more than 4 MiB"},
		{name: "too many documents", yaml: strings.Repeat("a: 1\n---\n", 1100), want: "it has more than 1024 YAML documents"},
		{name: "too many documents with an alias", yaml: "a: &a 1\nb: *a\n" + strings.Repeat("---\na: 1\n", 1100),
			want: "it has more than 1024 YAML documents"},
		{name: "too many bytes", yaml: strings.Repeat("a", 4<<20+1), want: "it has 4194305 bytes, more than 4 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.yaml), l)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want %q", err, tc.want)
			}
			if !errors.As(err, new(*LimitError)) {
				t.Fatalf("%v is no LimitError", err)
			}
		})
	}
}

func TestTheDocumentPastTheLimitIsNamed(t *testing.T) {
	stream := "a: 1\n---\nb: 2\n---\n" + smallMapsBomb(1500)
	var limit *LimitError
	if err := Check([]byte(stream), Within(4<<20)); !errors.As(err, &limit) || limit.Document != 3 {
		t.Fatalf("Check = %v, want the third document named", err)
	}
}

// TestDenseTextWithoutAliasesIsCountedToo: without aliases a stream holds
// at most two nodes a byte, and is parsed to count them only when that
// could pass the limit.
func TestDenseTextWithoutAliasesIsCountedToo(t *testing.T) {
	dense := "[" + strings.Repeat("1,", 40000) + "1]"
	if err := Check([]byte(dense), Limits{Bytes: 1 << 20, Documents: 1, Nodes: 1 << 20}); err != nil {
		t.Fatalf("40,001 nodes, limit 1Mi: %v", err)
	}
	if err := Check([]byte(dense), Limits{Bytes: 1 << 20, Documents: 1, Nodes: 40000}); err == nil {
		t.Fatal("40,002 nodes passed a limit of 40,000")
	}
}

// FuzzStreamMemory feeds Check streams of many documents and asserts what
// parsing what it passes takes: never more than the limits allow.
func FuzzStreamMemory(f *testing.F) {
	for _, seed := range []string{smallMapsBomb(40), "a: &a [1,2]\n---\nb: [*a, *a]\n", billionLaughs(), "a: 1\n---\n---\nb: 2\n"} {
		f.Add(seed, uint8(4))
	}
	const ceiling = 64 << 20
	l := Within(1 << 20) // 65,536 nodes at most
	f.Fuzz(func(t *testing.T, doc string, copies uint8) {
		stream := []byte(strings.Repeat(doc+"\n---\n", int(copies%32)+1))
		if Check(stream, l) != nil {
			return
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, d := range strings.Split(string(stream), "\n---\n") {
			var v any
			_ = yaml.Unmarshal([]byte(d), &v)
		}
		runtime.ReadMemStats(&after)
		if grown := after.TotalAlloc - before.TotalAlloc; grown > ceiling {
			t.Fatalf("a stream of %d bytes that passed took %d MB to parse", len(stream), grown>>20)
		}
	})
}
