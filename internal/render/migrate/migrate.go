// Package migrate moves rendered objects off built-in API versions that
// Kubernetes no longer serves. KUDO packages were written for Kubernetes
// 1.15–1.20, so their templates still use versions such as policy/v1beta1;
// where the successor can express the same object, the renderer migrates it
// and reports the migration, otherwise it fails with an error saying what to
// use instead. It works on plain unstructured objects and needs no client.
package migrate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Served reports whether the target API server serves a kind at a group/version.
type Served func(gvk schema.GroupVersionKind) bool

// Migration records one object moved from a removed API version to its
// successor, or one field dropped from an object because Kubernetes does not
// declare it (any more).
type Migration struct {
	Kind string
	Name string
	From string // old apiVersion, e.g. "policy/v1beta1"
	To   string // new apiVersion, e.g. "policy/v1"; the same as From for a dropped field
	// Dropped is the path of the field dropped, e.g.
	// "spec.template.metadata.initializers"; empty for a version migration.
	Dropped string
	// Changes are what else a version migration changed that a user may
	// notice, e.g. an annotation it added.
	Changes []string
}

func (m Migration) String() string {
	if m.Dropped != "" {
		return fmt.Sprintf("%s %q: dropped field %s, which Kubernetes does not declare in %s", m.Kind, m.Name, m.Dropped, m.From)
	}
	s := fmt.Sprintf("%s %q: %s → %s", m.Kind, m.Name, m.From, m.To)
	if len(m.Changes) > 0 {
		s += " (" + strings.Join(m.Changes, "; ") + ")"
	}
	return s
}

// Object migrates obj in place when its kind is not served at its apiVersion
// and a safe mapping to a served successor is known. It returns nil, nil when
// obj's version is served or is not a built-in one (custom resources are left
// alone), the migration when it migrated, and an error when the version is not
// served and cannot be migrated safely. On error obj is unchanged.
func Object(obj *unstructured.Unstructured, served Served) (*Migration, error) {
	gvk := obj.GroupVersionKind()
	if !builtin[gvk.GroupVersion()] || served(gvk) {
		return nil, nil
	}
	kind, name, from := gvk.Kind, obj.GetName(), obj.GetAPIVersion()
	r, ok := removed[gvk]
	if !ok {
		return nil, fmt.Errorf("%s %q: %s is not served and no successor is known", kind, name, from)
	}
	notServed := fmt.Sprintf("%s %q: %s is not served (removed in Kubernetes 1.%d)", kind, name, from, r.removedIn)
	switch {
	case r.to == "":
		return nil, fmt.Errorf("%s and has no successor; %s", notServed, r.why)
	case r.convert == nil && r.why == "":
		return nil, fmt.Errorf("%s and is not migrated automatically; use %s instead", notServed, r.to)
	case r.convert == nil:
		return nil, fmt.Errorf("%s and is not migrated automatically because %s; use %s instead", notServed, r.why, r.to)
	}
	to := schema.FromAPIVersionAndKind(r.to, kind)
	if !served(to) {
		return nil, fmt.Errorf("%s %q: %s is not served and its successor %s is not served either", kind, name, from, r.to)
	}

	// Convert a copy so that a failure half way leaves obj as it was.
	work := obj.DeepCopy()
	changes, err := r.convert(work.Object, gvk)
	if err != nil {
		return nil, fmt.Errorf("%s %q: cannot migrate %s to %s: %w", kind, name, from, r.to, err)
	}
	work.SetAPIVersion(r.to)
	obj.Object = work.Object
	return &Migration{Kind: kind, Name: name, From: from, To: r.to, Changes: changes}, nil
}

var kubernetesVersion = regexp.MustCompile(`^v?1\.(\d+)(\.\d+)?([-+].*)?$`)

// ServedBy returns what a Kubernetes server of the given version ("1.34",
// "v1.34.4") serves, for checking packages without a cluster: every kind
// except the built-in ones removed at or before that version.
func ServedBy(version string) (Served, error) {
	m := kubernetesVersion.FindStringSubmatch(version)
	if m == nil {
		return nil, fmt.Errorf("invalid Kubernetes version %q: want 1.<minor>[.<patch>], e.g. 1.34", version)
	}
	minor, err := strconv.Atoi(m[1])
	if err != nil {
		return nil, fmt.Errorf("invalid Kubernetes version %q: %w", version, err)
	}
	return func(gvk schema.GroupVersionKind) bool {
		r, ok := removed[gvk]
		return !ok || minor < r.removedIn
	}, nil
}

// ServedByMapper is what the cluster mapper maps serves.
func ServedByMapper(mapper meta.RESTMapper) Served {
	return func(gvk schema.GroupVersionKind) bool {
		_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		return err == nil
	}
}
