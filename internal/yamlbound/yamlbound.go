// Package yamlbound is the one gate every YAML a tenant or a package author
// writes passes before it is parsed: rendered templates, parameter values
// and files, package files. YAML aliases repeat what their anchor holds
// without repeating its text, so 70 KB that alias one 40,000-character
// scalar 10,000 times expand to 400 MB in the parsers that build values
// (sigs.k8s.io/yaml's JSON, yaml.v3's maps). Check measures the expansion
// on the parse tree, where an alias is a pointer, before anything expands.
package yamlbound

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// nodeCost is what each node counts beyond its text: an alias of an empty
// collection expands to a few bytes of JSON, and nesting empty ones is the
// classic billion laughs.
const nodeCost = 2

// ExpansionError is YAML whose aliases expand it past the limit: parsing it
// again fails again.
type ExpansionError struct {
	Limit int
}

func (e *ExpansionError) Error() string {
	limit := fmt.Sprintf("%d bytes", e.Limit)
	switch {
	case e.Limit%(1<<20) == 0:
		limit = fmt.Sprintf("%d MiB", e.Limit>>20)
	case e.Limit%(1<<10) == 0:
		limit = fmt.Sprintf("%d KiB", e.Limit>>10)
	}
	return "its aliases (*name) expand it to more than " + limit
}

// Check refuses YAML, one document or several, whose aliases expand it to
// more than limit bytes, or to more than twice its own size if that is
// larger: a node counts a little more than its text, so that a document
// dense with small items measures more than its length without expanding.
// YAML without both an anchor and an alias cannot expand and is not parsed
// here. YAML with both that this parser cannot read is refused: another
// parser might read it, and expand it.
func Check(data []byte, limit int) error {
	if bytes.IndexByte(data, '&') < 0 || bytes.IndexByte(data, '*') < 0 {
		return nil
	}
	limit = max(limit, 2*len(data))
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("its aliases (*name) cannot be measured: %w", err)
		}
		m := &measure{limit: limit, sizes: map[*yaml.Node]int{}}
		if m.size(&doc) > limit {
			return &ExpansionError{Limit: limit}
		}
	}
}

// measure sizes nodes as they expand, each anchored node once: sizes
// saturate just past the limit, so no sum overflows.
type measure struct {
	limit int
	sizes map[*yaml.Node]int
}

func (m *measure) size(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	if s, ok := m.sizes[n]; ok {
		return s
	}
	// An alias that reaches itself is a cycle: no parser expands it, and
	// counting it as over the limit stops the walk.
	m.sizes[n] = m.limit + 1
	s := nodeCost + len(n.Value)
	if n.Kind == yaml.AliasNode {
		s = m.add(s, m.size(n.Alias))
	}
	for _, c := range n.Content {
		s = m.add(s, m.size(c))
	}
	m.sizes[n] = s
	return s
}

func (m *measure) add(a, b int) int {
	if a > m.limit || b > m.limit || a+b > m.limit {
		return m.limit + 1
	}
	return a + b
}
