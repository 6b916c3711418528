// Package tree writes the trees kubectl kudo prints as KUDO printed them
// (with treeprint v1.0.0): a root line, then each node on a line below its
// parent, behind ├── or └──, and KUDO's meta nodes as "[meta]  text".
// treeprint itself is not used: the version Kubernetes' libraries require
// (v1.2.0) indents with other bytes than KUDO's.
package tree

import "strings"

// Node is a line of a tree and the lines below it.
type Node struct {
	Text     string
	Children []*Node
}

// New is a tree whose root line is text; KUDO's trees without one show ".".
func New(text string) *Node { return &Node{Text: text} }

// Add adds a node below n and returns it.
func (n *Node) Add(text string) *Node {
	child := &Node{Text: text}
	n.Children = append(n.Children, child)
	return child
}

// AddMeta adds a node "[meta]  text", as treeprint's meta branches.
func (n *Node) AddMeta(meta, text string) *Node { return n.Add("[" + meta + "]  " + text) }

// String is the tree, a line each, ended by a newline.
func (n *Node) String() string {
	var b strings.Builder
	b.WriteString(n.Text + "\n")
	n.write(&b, "")
	return b.String()
}

func (n *Node) write(b *strings.Builder, indent string) {
	for k, child := range n.Children {
		last := k == len(n.Children)-1
		b.WriteString(indent + Branch(last) + child.Text + "\n")
		child.write(b, indent+Indent(last))
	}
}

// Branch is what stands before a node: └── before the last of its parent's.
func Branch(last bool) string {
	if last {
		return "└── "
	}
	return "├── "
}

// Indent is what stands below a node, before its children's lines: KUDO's
// │ and two no-break spaces while the parent has more nodes after it.
func Indent(last bool) string {
	if last {
		return "    "
	}
	return "│\u00a0\u00a0 "
}
