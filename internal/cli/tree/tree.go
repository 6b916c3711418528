// Package tree writes the trees kubectl kudo prints as KUDO printed them
// (with treeprint): a root line, then each node on a line below its parent,
// behind ├── or └──, and KUDO's meta nodes as "[meta]  text".
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
		branch, below := "├── ", "│   "
		if k == len(n.Children)-1 {
			branch, below = "└── ", "    "
		}
		b.WriteString(indent + branch + child.Text + "\n")
		child.write(b, indent+below)
	}
}
