// Package yamlbound is the one gate every YAML a tenant or a package author
// writes passes before it is parsed into values: rendered templates,
// parameter values and files, package files, repository indexes. YAML
// aliases repeat what their anchor holds without repeating its text, so 70
// KB that alias one 40,000-character scalar 10,000 times expand to 400 MB in
// the parsers that build values (sigs.k8s.io/yaml's JSON, yaml.v3's maps),
// and a list of small maps aliased a few thousand times costs far more in
// Go's maps than its bytes say. Check measures a stream, all its documents
// together, on the parse tree, where an alias is a pointer, before anything
// expands: its bytes, its documents, and the bytes and nodes its aliases
// expand it to.
package yamlbound

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

const (
	// nodeCost is what each node counts beyond its text in the expanded
	// bytes: an alias of an empty collection expands to a few bytes of
	// JSON, and nesting empty ones is the classic billion laughs.
	nodeCost = 2
	// BytesPerNode is how many bytes of a stream's limit buy one node. A
	// parsed node costs 50 to 100 bytes in Go's maps and slices, so a
	// stream of 4 MiB holds at most 262,144 nodes, some 25 MB parsed;
	// Kubernetes manifests run at one node per 10 to 20 bytes.
	BytesPerNode = 16
	// MinNodes is the fewest nodes any stream may hold: a small parameter
	// value may still be a long list.
	MinNodes = 1 << 16
	// MaxDocuments is how many documents a stream may hold: more than the
	// objects an Instance's inventory holds (about 8,500), so that a
	// template rendering too many is told so by the inventory's bound.
	MaxDocuments = 10000
	// nodesPerByte is the most nodes text without aliases can hold per
	// byte of it ("- -" is three nodes in three bytes, "a:" three in two):
	// such text has no more nodes than twice its length, which is measured
	// only when that could be over the limit.
	nodesPerByte = 2
)

// Limits bound one stream of YAML, all its documents together.
type Limits struct {
	// Bytes is the most text the stream may have, and the most bytes its
	// aliases may expand it to (or twice its own size, if that is more: a
	// node counts a little more than its text, so a dense stream measures
	// more than its length without expanding).
	Bytes int
	// Documents is the most documents it may hold.
	Documents int
	// Nodes is the most nodes (scalars, maps, lists) its documents may hold
	// once their aliases expand.
	Nodes int
}

// Within is the limits of a stream of at most n bytes: MaxDocuments, and
// one node for every BytesPerNode of n, at least MinNodes.
func Within(n int) Limits {
	return Limits{Bytes: n, Documents: MaxDocuments, Nodes: max(n/BytesPerNode, MinNodes)}
}

// LimitError is a stream past one of its Limits: parsing it again fails
// again.
type LimitError struct {
	// Document is the document, from 1, where the stream passed the limit.
	Document int
	// Limit is the limit passed, in Unit.
	Limit int
	Unit  Unit
	msg   string
}

// Unit is what a limit counts.
type Unit string

const (
	Bytes     Unit = "bytes"
	Documents Unit = "documents"
	Nodes     Unit = "nodes"
)

func (e *LimitError) Error() string { return e.msg }

// Check refuses YAML, one document or several, that is longer than l.Bytes,
// holds more than l.Documents documents, or whose aliases expand it to more
// than l.Bytes bytes or l.Nodes nodes. YAML whose aliases this parser cannot
// read is refused: another parser might read it, and expand it.
func Check(data []byte, l Limits) error {
	if len(data) > l.Bytes {
		return &LimitError{Document: 1, Limit: l.Bytes, Unit: Bytes, msg: "it has " + bytesize(len(data)) + ", more than " + bytesize(l.Bytes)}
	}
	aliases := bytes.IndexByte(data, '&') >= 0 && bytes.IndexByte(data, '*') >= 0
	if !aliases && nodesPerByte*len(data) <= l.Nodes && separators(data) < l.Documents {
		return nil
	}
	m := &measure{limits: Limits{Bytes: max(l.Bytes, 2*len(data)), Documents: l.Documents, Nodes: l.Nodes}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for doc := 1; ; doc++ {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("its aliases (*name) cannot be measured: %w", err)
		}
		if err := m.document(doc, &root); err != nil {
			return err
		}
	}
}

// separators counts the lines that start a document, as Kubernetes' YAML
// reader splits a stream: no fewer than its documents less one.
func separators(data []byte) int {
	n := 0
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte("---")) {
			n++
		}
	}
	return n
}

// size is what a node expands to.
type size struct{ bytes, nodes int }

// measure sizes a stream's nodes as they expand, each anchored node once,
// and adds up its documents. Sizes saturate just past the limits, so no sum
// overflows.
type measure struct {
	limits Limits
	total  size
	// sizes holds the nodes of the document measured: an alias points
	// within its document.
	sizes map[*yaml.Node]size
}

func (m *measure) document(doc int, root *yaml.Node) error {
	if doc > m.limits.Documents {
		return &LimitError{Document: doc, Limit: m.limits.Documents, Unit: Documents,
			msg: fmt.Sprintf("it has more than %d YAML documents", m.limits.Documents)}
	}
	m.sizes = map[*yaml.Node]size{}
	m.total = m.add(m.total, m.size(root))
	switch {
	case m.total.bytes > m.limits.Bytes:
		return &LimitError{Document: doc, Limit: m.limits.Bytes, Unit: Bytes,
			msg: "its aliases (*name) expand it to more than " + bytesize(m.limits.Bytes)}
	case m.total.nodes > m.limits.Nodes:
		return &LimitError{Document: doc, Limit: m.limits.Nodes, Unit: Nodes,
			msg: fmt.Sprintf("it holds more than %d YAML nodes (scalars, maps and lists, aliases expanded)", m.limits.Nodes)}
	}
	return nil
}

func (m *measure) size(n *yaml.Node) size {
	if n == nil {
		return size{}
	}
	if s, ok := m.sizes[n]; ok {
		return s
	}
	// An alias that reaches itself is a cycle: no parser expands it, and
	// counting it as over the limits stops the walk.
	m.sizes[n] = m.over()
	s := size{bytes: nodeCost + len(n.Value), nodes: 1}
	if n.Kind == yaml.AliasNode {
		s = m.add(size{bytes: nodeCost}, m.size(n.Alias))
	}
	for _, c := range n.Content {
		s = m.add(s, m.size(c))
	}
	m.sizes[n] = s
	return s
}

func (m *measure) over() size {
	return size{bytes: m.limits.Bytes + 1, nodes: m.limits.Nodes + 1}
}

func (m *measure) add(a, b size) size {
	return size{bytes: saturated(a.bytes, b.bytes, m.limits.Bytes), nodes: saturated(a.nodes, b.nodes, m.limits.Nodes)}
}

func saturated(a, b, limit int) int {
	if a > limit || b > limit || a+b > limit {
		return limit + 1
	}
	return a + b
}

// bytesize writes n in the largest binary unit that divides it.
func bytesize(n int) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Unmarshal is sigs.k8s.io/yaml's Unmarshal of the first document of data
// into v, once Check has passed the whole stream within l.
func Unmarshal(data []byte, v any, l Limits, opts ...sigsyaml.JSONOpt) error {
	if err := Check(data, l); err != nil {
		return err
	}
	return sigsyaml.Unmarshal(data, v, opts...)
}
