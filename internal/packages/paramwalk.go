package packages

import (
	"fmt"
	"text/template"
	"text/template/parse"
)

// unused warns of the tasks no plan runs, the templates no task names, and
// the parameters no template uses (found by walking the templates' parse
// trees) unless they trigger a plan: as in KUDO, a parameter may be there
// only to trigger one.
func (v *verifier) unused() {
	used := map[string]bool{}
	for _, plan := range v.p.Operator.Plans {
		for _, step := range plan.Steps() {
			for _, name := range step.Tasks {
				used[name] = true
			}
		}
	}
	for i, t := range v.p.Operator.Tasks {
		if t.Name != "" && !used[t.Name] {
			v.r.warnf(OperatorFileName, fmt.Sprintf("tasks[%d] %s", i, t.Name), "no plan uses this task")
			v.r.kudoSaid(kudoTaskReferences, "task %q defined but not used", t.Name)
		}
	}
	for i, p := range v.p.Params.Parameters {
		if p.Name != "" && p.Trigger == "" && !v.paramUse[p.Name] && !v.unparsed {
			v.r.warnf(ParamsFileName, fmt.Sprintf("parameters[%d] %s", i, p.Name), "no template uses this parameter")
			v.r.kudoSaid(kudoTemplateParameters, "parameter %q defined but not used.", p.Name)
		}
	}
	for _, name := range sortedKeys(v.p.Templates) {
		if !v.templateUse[name] {
			v.r.warnf(TemplatesDir+name, "", "no task uses this template")
			v.r.kudoSaid(kudoTemplateReferences, "template %q is not referenced from any task", name)
		}
	}
}

type paramRef struct{ name, position string }

// usedParams lists the parameters a template refers to as .Params.X,
// $.Params.X or index .Params "X", with the line and column of the first use
// of each.
func usedParams(t *template.Template) []paramRef {
	seen := map[string]bool{}
	var refs []paramRef
	for _, tmpl := range t.Templates() {
		if tmpl.Tree == nil || tmpl.Root == nil {
			continue
		}
		walk(tmpl.Root, func(n parse.Node) {
			var ident []string
			switch n := n.(type) {
			case *parse.FieldNode:
				ident = n.Ident
			case *parse.VariableNode:
				if len(n.Ident) > 0 && n.Ident[0] == "$" {
					ident = n.Ident[1:]
				}
			case *parse.CommandNode:
				ident = indexedParam(n)
			}
			if len(ident) < 2 || ident[0] != "Params" || seen[ident[1]] {
				return
			}
			seen[ident[1]] = true
			location, _ := tmpl.ErrorContext(n)
			refs = append(refs, paramRef{name: ident[1], position: position(location)})
		})
	}
	return refs
}

// indexedParam reads `index .Params "X"` as the identifier Params.X.
func indexedParam(n *parse.CommandNode) []string {
	if len(n.Args) < 3 {
		return nil
	}
	fn, ok := n.Args[0].(*parse.IdentifierNode)
	if !ok || fn.Ident != "index" {
		return nil
	}
	var collection []string
	switch m := n.Args[1].(type) {
	case *parse.FieldNode:
		collection = m.Ident
	case *parse.VariableNode:
		if len(m.Ident) > 0 && m.Ident[0] == "$" {
			collection = m.Ident[1:]
		}
	}
	key, ok := n.Args[2].(*parse.StringNode)
	if len(collection) != 1 || collection[0] != "Params" || !ok {
		return nil
	}
	return []string{"Params", key.Text}
}

// walk calls visit on every node of a template's parse tree.
func walk(node parse.Node, visit func(parse.Node)) {
	if node == nil {
		return
	}
	visit(node)
	switch n := node.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, visit)
		}
	case *parse.ActionNode:
		walk(n.Pipe, visit)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, d := range n.Decl {
			walk(d, visit)
		}
		for _, c := range n.Cmds {
			walk(c, visit)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walk(a, visit)
		}
	case *parse.ChainNode:
		walk(n.Node, visit)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, visit)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, visit)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, visit)
	case *parse.TemplateNode:
		walk(n.Pipe, visit)
	}
}

func walkBranch(b *parse.BranchNode, visit func(parse.Node)) {
	walk(b.Pipe, visit)
	walk(b.List, visit)
	if b.ElseList != nil {
		walk(b.ElseList, visit)
	}
}
