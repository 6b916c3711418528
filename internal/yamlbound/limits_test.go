package yamlbound

import (
	"errors"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

func TestWithinBuysOneNodeForEverySixteenBytes(t *testing.T) {
	for _, tc := range []struct {
		n     int
		nodes int
	}{
		{0, MinNodes},
		{MinNodes * BytesPerNode, MinNodes},
		{MinNodes*BytesPerNode + BytesPerNode - 1, MinNodes},
		{MinNodes*BytesPerNode + BytesPerNode, MinNodes + 1},
		{4 << 20, 262144},
	} {
		want := Limits{Bytes: tc.n, Documents: MaxDocuments, Nodes: tc.nodes}
		if got := Within(tc.n); got != want {
			t.Errorf("Within(%d) = %+v, want %+v", tc.n, got, want)
		}
	}
}

// TestEachLimitHoldsAtItsEdge: a stream at a limit passes, one past it is
// refused, naming the limit, what it counts and the document past it.
func TestEachLimitHoldsAtItsEdge(t *testing.T) {
	// Aliases count the nodes they repeat: the document, the map, a, the
	// list and its two items, b, its list and two lists of three.
	const aliased = "a: &a [1, 2]\nb: [*a, *a]\n"
	for _, tc := range []struct {
		name   string
		yaml   string
		limits Limits
		// want is the error, nil for none.
		want *LimitError
	}{
		{"as many bytes as the limit", "a: 12345", Limits{Bytes: 8, Documents: 1, Nodes: 100}, nil},
		{"a byte more", "a: 123456", Limits{Bytes: 8, Documents: 1, Nodes: 100},
			&LimitError{Document: 1, Limit: 8, Unit: Bytes, msg: "it has 9 bytes, more than 8 bytes"}},
		{"as many documents as the limit, measured", "a: &x 1\nb: *x\n---\nc: 2\n", Limits{Bytes: 100, Documents: 2, Nodes: 100}, nil},
		{"a leading separator starts no document", "---\na: 1\n", Limits{Bytes: 100, Documents: 1, Nodes: 100}, nil},
		{"a document more", "a: &x 1\nb: *x\n---\nc: 2\n---\nd: 3\n", Limits{Bytes: 100, Documents: 2, Nodes: 100},
			&LimitError{Document: 3, Limit: 2, Unit: Documents, msg: "it has more than 2 YAML documents"}},
		{"as many nodes as the limit, aliases expanded", aliased, Limits{Bytes: 100, Documents: 1, Nodes: 14}, nil},
		{"a node more", aliased, Limits{Bytes: 100, Documents: 1, Nodes: 13},
			&LimitError{Document: 1, Limit: 13, Unit: Nodes, msg: "it holds more than 13 YAML nodes (scalars, maps and lists, aliases expanded)"}},
		{"a dense list without aliases, counted", "[1,2,3]", Limits{Bytes: 100, Documents: 1, Nodes: 4},
			&LimitError{Document: 1, Limit: 4, Unit: Nodes, msg: "it holds more than 4 YAML nodes (scalars, maps and lists, aliases expanded)"}},
		{"an alias of what holds it", "a: &a {b: *a}", Limits{Bytes: 100, Documents: 1, Nodes: 100},
			&LimitError{Document: 1, Limit: 100, Unit: Bytes, msg: "its aliases (*name) expand it to more than 100 bytes"}},
		{"an alias of nothing anchored, which nothing expands", "a: *nowhere", Limits{Bytes: 100, Documents: 1, Nodes: 100}, nil},
		{"nothing at all", "", Limits{Bytes: 0, Documents: 1, Nodes: 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.yaml), tc.limits)
			var got *LimitError
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("Check = %v, no LimitError", err)
			}
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("Check = %q, want it passed", got)
			case tc.want != nil && (got == nil || *got != *tc.want):
				t.Errorf("Check = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestALimitIsToldInTheLargestUnitThatDividesIt(t *testing.T) {
	for n, want := range map[int]string{
		0: "0 bytes", 1: "1 bytes", 1024: "1 KiB", 1536: "1536 bytes", 3 << 20: "3 MiB", 1<<20 + 1024: "1025 KiB",
	} {
		if got := bytesize(n); got != want {
			t.Errorf("bytesize(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestUnmarshalMeasuresTheWholeStreamFirst: a bomb is refused before a
// value is built, even after a first document that is fine, and what passes
// decodes as sigs.k8s.io/yaml decodes it, with its options.
func TestUnmarshalMeasuresTheWholeStreamFirst(t *testing.T) {
	type widget struct {
		Size int `json:"size"`
	}
	var w widget
	err := Unmarshal([]byte("size: 1\n---\n"+AliasBomb()), &w, Within(1<<20))
	if !errors.As(err, new(*LimitError)) || w.Size != 0 {
		t.Fatalf("Unmarshal of a bomb in a later document = %v, decoded %+v; want a LimitError and nothing decoded", err, w)
	}
	if err := Unmarshal([]byte("size: 3\n---\nsize: 4\n"), &w, Within(1<<20)); err != nil || w.Size != 3 {
		t.Errorf("Unmarshal = %v, decoded %+v; want the first document's size 3", err, w)
	}
	err = Unmarshal([]byte("size: 5\ncolour: red\n"), &w, Within(1<<20), sigsyaml.DisallowUnknownFields)
	if err == nil || !strings.Contains(err.Error(), `unknown field "colour"`) {
		t.Errorf("Unmarshal with DisallowUnknownFields = %v, want the unknown field refused", err)
	}
}
