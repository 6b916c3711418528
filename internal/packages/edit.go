package packages

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kudo-ng/kudo/internal/yamlbound"
)

// EditFile changes operator.yaml or params.yaml in place, keeping what the
// author wrote — comments, order, quoting — around the change: edit gets
// the document's top mapping.
func EditFile(path string, edit func(top *yaml.Node) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(data) > MaxFileSize {
		return fmt.Errorf("%s is %d bytes, more than the limit of %d", path, len(data), MaxFileSize)
	}
	if err := yamlbound.Check(data, yamlbound.Within(MaxFileSize)); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	doc := &yaml.Node{}
	if err := yaml.Unmarshal(data, doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return fmt.Errorf("%s is not a mapping of fields", path)
	}
	if err := edit(top); err != nil {
		return err
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// Append adds value at the end of the sequence under key, which it makes
// when it is missing or empty.
func Append(top *yaml.Node, key string, value any) error {
	node, err := nodeOf(value)
	if err != nil {
		return err
	}
	list := child(top, key, yaml.SequenceNode)
	if list.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s is not a list", key)
	}
	list.Content = append(list.Content, node)
	return nil
}

// Set sets name, in the mapping under key, to value; the mapping is made
// when it is missing.
func Set(top *yaml.Node, key, name string, value any) error {
	node, err := nodeOf(value)
	if err != nil {
		return err
	}
	m := child(top, key, yaml.MappingNode)
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("%s is not a mapping", key)
	}
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == name {
			m.Content[k+1] = node
			return nil
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, node)
	return nil
}

// child is the node under key, made of kind when it is missing or null,
// in block style: what is added to it takes lines of its own, and a
// comment on the line of an inline [] or {} moves to its key's.
func child(top *yaml.Node, key string, kind yaml.Kind) *yaml.Node {
	for k := 0; k+1 < len(top.Content); k += 2 {
		name, v := top.Content[k], top.Content[k+1]
		if name.Value != key {
			continue
		}
		if v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == "") {
			v = &yaml.Node{Kind: kind, LineComment: v.LineComment}
			top.Content[k+1] = v
		}
		if v.Style&yaml.FlowStyle != 0 {
			v.Style &^= yaml.FlowStyle
			if name.LineComment == "" {
				name.LineComment, v.LineComment = v.LineComment, ""
			}
		}
		return v
	}
	node := &yaml.Node{Kind: kind}
	top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, node)
	return node
}

// nodeOf is value as YAML, by its JSON field names, its name first as
// authors write it.
func nodeOf(value any) (*yaml.Node, error) {
	data, err := sigsyaml.Marshal(value)
	if err != nil {
		return nil, err
	}
	doc := &yaml.Node{}
	if err := yaml.Unmarshal(data, doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("nothing to write")
	}
	node := doc.Content[0]
	if node.Kind == yaml.MappingNode {
		for k := 2; k+1 < len(node.Content); k += 2 {
			if node.Content[k].Value == "name" {
				name := append([]*yaml.Node{}, node.Content[k:k+2]...)
				node.Content = append(name, append(node.Content[:k:k], node.Content[k+2:]...)...)
				break
			}
		}
	}
	return node, nil
}
