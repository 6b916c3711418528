package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	// The scheme of the built-in kinds only, no client.
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kudo-ng/kudo/internal/render/migrate"
)

// Request is everything needed to render the resources of one task.
type Request struct {
	// Templates are all the OperatorVersion's templates by path.
	Templates map[string]string
	// Resources are the paths of the templates the task renders, in order.
	Resources []string
	Variables Variables
	Metadata  Metadata
	// Served says what the target server serves (from discovery, or
	// migrate.ServedBy a Kubernetes version offline).
	Served migrate.Served
	Scope  Scope
	// Dependencies looks up mounted ConfigMaps and Secrets the task does not
	// render; nil when there is no cluster to ask.
	Dependencies Dependencies
	// Limits bound each render; none set: DefaultLimits.
	Limits Limits
}

// Migration is an object of a template moved off a removed API version, or
// a field dropped from it because Kubernetes does not declare it.
type Migration struct {
	Template string
	migrate.Migration
}

func (m Migration) String() string { return m.Template + ": " + m.Migration.String() }

// Result is what a task applies, and what had to change on the way.
type Result struct {
	Objects    []*unstructured.Unstructured
	Migrations []Migration
}

// Task renders, parses, migrates and enhances the templates of a task:
// migrating moves objects off removed API versions and drops the fields
// Kubernetes does not declare, as KUDO's typed objects did. A parameter
// value that changes more than its own YAML value is refused.
func Task(req *Request) (*Result, error) {
	rendered := make([]Rendered, 0, len(req.Resources))
	for _, name := range req.Resources {
		text, ok := req.Templates[name]
		if !ok {
			return nil, fmt.Errorf("template %s: not found in the OperatorVersion", name)
		}
		objs, err := req.Limits.TemplateObjects(name, text, &req.Variables)
		if err != nil {
			return nil, err
		}
		rendered = append(rendered, Rendered{Name: name, Objects: objs})
	}
	return Prepare(req, rendered)
}

// Rendered are the objects a template, or a chart's manifest, rendered.
type Rendered struct {
	Name    string
	Objects []*unstructured.Unstructured
}

// Prepare checks, migrates and enhances what was rendered, in its order:
// the templates of a task (Task), or the manifests of a chart.
func Prepare(req *Request, rendered []Rendered) (*Result, error) {
	result := &Result{}
	for _, r := range rendered {
		for i, obj := range r.Objects {
			if obj.GetName() == "" {
				return nil, fmt.Errorf("%s: object %d (%s) has no metadata.name", r.Name, i+1, obj.GetKind())
			}
			m, err := migrate.Object(obj, req.Served)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.Name, err)
			}
			if m != nil {
				result.Migrations = append(result.Migrations, Migration{Template: r.Name, Migration: *m})
			}
			for _, d := range migrate.Undeclared(obj, scheme.Scheme) {
				result.Migrations = append(result.Migrations, Migration{Template: r.Name, Migration: d})
			}
		}
		result.Objects = append(result.Objects, r.Objects...)
	}
	if err := Enhance(result.Objects, &req.Metadata, req.Scope, req.Dependencies); err != nil {
		return nil, err
	}
	return result, nil
}
