package render

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kudo-ng/kudo/internal/yamlbound"
)

// Objects parses rendered text, one or more YAML documents, into objects.
// Documents that are empty or only comments are dropped; every other
// document must be a Kubernetes object with apiVersion and kind. A document
// whose aliases expand it past what a template may render is refused before
// it expands.
func Objects(name, text string) ([]*unstructured.Unstructured, error) {
	return DefaultLimits.Objects(name, text)
}

// Objects is Objects within the limits. The whole text is measured before
// any document is parsed: each document alone may be small, and all of them
// parsed and kept take the memory.
func (l Limits) Objects(name, text string) ([]*unstructured.Unstructured, error) {
	if err := l.bounded([]byte(text)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var objs []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		if isEmpty(raw) {
			continue
		}
		obj := &unstructured.Unstructured{}
		data, err := yaml.YAMLToJSON(raw)
		if err == nil {
			// Unlike encoding/json, integers stay int64, as in objects read from the API.
			err = utiljson.Unmarshal(data, &obj.Object)
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			return nil, fmt.Errorf("%s: document %d is not valid YAML: %s (lines count from the start of the rendered document)", name, doc, msg)
		}
		if obj.Object == nil {
			continue
		}
		switch {
		case obj.GetAPIVersion() == "":
			return nil, fmt.Errorf("%s: document %d has no apiVersion", name, doc)
		case obj.GetKind() == "":
			return nil, fmt.Errorf("%s: document %d has no kind", name, doc)
		}
		objs = append(objs, obj)
	}
}

func isEmpty(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) {
			return false
		}
	}
	return true
}

// bounded refuses a render past what a template may render, as a
// LimitError naming the document where it passed: rendering again passes it
// again. Its aliases may expand it to MaxOutput bytes, and it may hold one
// node for every yamlbound.BytesPerNode of them.
func (l Limits) bounded(data []byte) error {
	l = l.orDefault()
	err := yamlbound.Check(data, yamlbound.Within(l.MaxOutput))
	limit := (*yamlbound.LimitError)(nil)
	switch {
	case !errors.As(err, &limit):
		return err
	case limit.Unit == yamlbound.Documents:
		return limitErrorf("document %d: %s, the most a template may render", limit.Document, limit)
	}
	return limitErrorf("document %d: %s, the most a template may render (--render-max-bytes)", limit.Document, limit)
}
