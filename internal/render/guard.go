package render

import (
	"reflect"
	"strconv"
	"text/template"
	"text/template/parse"
)

// The functions guard adds calls to. Templates cannot name them: they are
// bound to a render (sandbox.go), not among the functions parsing knows.
const (
	enterFunc = "kudoEnter"
	leaveFunc = "kudoLeave"
	printFunc = "kudoPrint"
	// eq's and ne's errors show it: `at <eq (.A | bounded) "x">`.
	compareFunc = "bounded"
)

// guard rewrites a parsed template so that what text/template does without
// calling a function or writing goes through the render's budget too:
//
//   - every template starts with {{kudoEnter}} and ends with {{kudoLeave}}:
//     templates calling templates nest at most maxNesting deep;
//   - the body of every range loop starts with an empty text, written on each
//     pass, so that the budget looks at the clock: {{range 1000000000000}}{{end}}
//     stops at the deadline;
//   - every action printing a value ends with `| kudoPrint "name:line:col"`,
//     and every argument of eq and ne that is not a literal is piped to
//     bounded: fmt formats a value whole before the writer sees any of it,
//     and eq and ne format what they cannot compare in their error, so a
//     list holding the same list twice, forty times over, would take
//     terabytes.
func guard(t *template.Template) {
	for _, tmpl := range t.Templates() {
		if tmpl.Tree == nil || tmpl.Root == nil {
			continue
		}
		g := guarder{tree: tmpl.Tree}
		g.list(tmpl.Root)
		root := tmpl.Root
		root.Nodes = append(append([]parse.Node{g.call(root.Pos, enterFunc)}, root.Nodes...), g.call(root.Pos, leaveFunc))
	}
}

type guarder struct{ tree *parse.Tree }

func (g *guarder) list(l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.ActionNode:
			g.pipe(n.Pipe)
			if len(n.Pipe.Decl) == 0 && !scalar(n.Pipe) {
				at, _ := g.tree.ErrorContext(n)
				n.Pipe.Cmds = append(n.Pipe.Cmds, g.command(n.Pos, printFunc, at))
			}
		case *parse.IfNode:
			g.branch(&n.BranchNode)
		case *parse.WithNode:
			g.branch(&n.BranchNode)
		case *parse.RangeNode:
			g.branch(&n.BranchNode)
			n.List.Nodes = append([]parse.Node{&parse.TextNode{NodeType: parse.NodeText, Pos: n.List.Pos}}, n.List.Nodes...)
		case *parse.TemplateNode:
			g.pipe(n.Pipe)
		}
	}
}

func (g *guarder) branch(b *parse.BranchNode) {
	g.pipe(b.Pipe)
	g.list(b.List)
	g.list(b.ElseList)
}

func (g *guarder) pipe(p *parse.PipeNode) {
	if p == nil {
		return
	}
	for _, c := range p.Cmds {
		for _, arg := range c.Args {
			switch arg := arg.(type) {
			case *parse.PipeNode:
				g.pipe(arg)
			case *parse.ChainNode:
				if inner, ok := arg.Node.(*parse.PipeNode); ok {
					g.pipe(inner)
				}
			}
		}
		if fn, ok := c.Args[0].(*parse.IdentifierNode); ok && (fn.Ident == "eq" || fn.Ident == "ne") {
			for i, arg := range c.Args[1:] {
				c.Args[i+1] = g.compared(arg)
			}
		}
	}
}

// compared is (arg | bounded), or a literal as it is.
func (g *guarder) compared(arg parse.Node) parse.Node {
	switch arg.(type) {
	case *parse.StringNode, *parse.NumberNode, *parse.BoolNode, *parse.NilNode:
		return arg
	}
	pos := arg.Position()
	return &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{
		{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{arg}},
		g.command(pos, compareFunc),
	}}
}

// call is the action {{fn}}.
func (g *guarder) call(pos parse.Pos, fn string) *parse.ActionNode {
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos,
		Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{g.command(pos, fn)}}}
}

// command is the command `fn "arg"...`.
func (g *guarder) command(pos parse.Pos, fn string, args ...string) *parse.CommandNode {
	c := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{parse.NewIdentifier(fn).SetTree(g.tree).SetPos(pos)}}
	for _, a := range args {
		c.Args = append(c.Args, &parse.StringNode{NodeType: parse.NodeString, Pos: pos, Quoted: strconv.Quote(a), Text: a})
	}
	return c
}

// scalar reports whether a pipeline ends calling a function that returns a
// string, a number or a boolean: the functions check the strings they make,
// so printing those needs no guard.
func scalar(p *parse.PipeNode) bool {
	last := p.Cmds[len(p.Cmds)-1]
	fn, ok := last.Args[0].(*parse.IdentifierNode)
	if !ok {
		return false
	}
	switch fn.Ident {
	case "len", "eq", "ne", "lt", "le", "gt", "ge", "not":
		return true
	}
	f, ok := funcs[fn.Ident]
	if !ok {
		return false
	}
	switch reflect.TypeOf(f).Out(0).Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return true
	}
	return false
}
