package task

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// Rendered is a task as a plan renders it, for Kind.Access: the objects it
// acts on, and what a Pipe or KudoOperator task makes besides.
type Rendered struct {
	Objects []*unstructured.Unstructured
	// Pipes are the objects, ConfigMaps or Secrets, a Pipe task stores its
	// files in.
	Pipes []PipeFile
	// Child is the Instance a KudoOperator task makes; ChildSecret says that
	// it applies a Secret of the child's sensitive values too.
	Child       string
	ChildSecret bool
}

// PipeFile is an object a Pipe task stores a file in.
type PipeFile struct {
	Kind, Name string
}

// Access is what a task needs of the API server as the Instance's account:
// verbs on an object of a kind, in the Instance's namespace unless it says
// another, by name unless Name is empty.
type Access struct {
	Kind        schema.GroupKind
	Subresource string
	// Namespace is where the object is: "" for the Instance's namespace,
	// or a cluster-scoped kind's object.
	Namespace string
	Name      string
	Verbs     []string
	// Why says why Name is empty: the name is known only when the plan
	// runs.
	Why string
	// Object is the rendered object, when the access writes one: who
	// writes RBAC must hold, or bind, what it grants.
	Object *unstructured.Unstructured
}

// The verbs each kind needs. Server-side apply is a patch, authorized as
// create of that name too when the object is missing; neither list nor
// watch is needed, as the manager reads through its own cache.
var (
	// applyVerbs, on what a task applies: pruning, the cleanup plan and
	// uninstall delete; get and update let the account's other users
	// (kubectl, tools) read and edit what it made.
	applyVerbs = []string{"get", "create", "update", "patch", "delete"}
	// deleteVerbs, on what a Delete task deletes, and on what an Instance
	// holds, which pruning deletes when new parameters rename it.
	deleteVerbs = []string{"get", "delete"}
	// pipePodVerbs, on a Pipe task's pod, server-side applied then deleted.
	pipePodVerbs = []string{"get", "create", "patch", "delete"}
	// execVerbs, on its pods/exec: the files are copied out with exec, as
	// kubectl cp does; exec over WebSocket asks for get.
	execVerbs = []string{"create", "get"}
)

var (
	podKind         = schema.GroupKind{Kind: "Pod"}
	secretGroupKind = schema.GroupKind{Kind: secretKind}
	instanceKind    = kudov1beta1.GroupVersion.WithKind("Instance").GroupKind()
)

// Held is the access pruning needs on an object an Instance holds.
func Held(ref kudov1beta1.ObjectRef) Access {
	return Access{Kind: schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind(), Namespace: ref.Namespace,
		Name: ref.Name, Verbs: deleteVerbs}
}

// applying is the access of applying objects.
func applying(objs []*unstructured.Unstructured) []Access {
	out := make([]Access, 0, len(objs))
	for _, obj := range objs {
		out = append(out, Access{Kind: obj.GroupVersionKind().GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Verbs: applyVerbs, Object: obj})
	}
	return out
}

func (apply) Access(r *Rendered) []Access  { return applying(r.Objects) }
func (toggle) Access(r *Rendered) []Access { return applying(r.Objects) }
func (dummy) Access(*Rendered) []Access    { return nil }

func (deletion) Access(r *Rendered) []Access {
	out := make([]Access, 0, len(r.Objects))
	for _, obj := range r.Objects {
		out = append(out, Access{Kind: obj.GroupVersionKind().GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Verbs: deleteVerbs})
	}
	return out
}

func (pipe) Access(r *Rendered) []Access {
	out := make([]Access, 0, 2*len(r.Objects)+len(r.Pipes))
	for _, pod := range r.Objects {
		out = append(out,
			Access{Kind: podKind, Namespace: pod.GetNamespace(), Name: pod.GetName(), Verbs: pipePodVerbs},
			Access{Kind: podKind, Subresource: "exec", Namespace: pod.GetNamespace(), Name: pod.GetName(), Verbs: execVerbs})
	}
	for _, f := range r.Pipes {
		out = append(out, Access{Kind: schema.GroupKind{Kind: f.Kind}, Name: f.Name, Verbs: applyVerbs})
	}
	return out
}

// Access of a KudoOperator task: the child Instance, whose OperatorVersion
// and the parents the cycle check walks are read from the manager's cache;
// and the Secret of the child's sensitive values, applied as the parent and
// read as the child (the same account), named after the plan run, so that
// its name is unknown until it runs.
func (kudoOperator) Access(r *Rendered) []Access {
	out := []Access{{Kind: instanceKind, Name: r.Child, Verbs: applyVerbs}}
	if r.ChildSecret {
		out = append(out, Access{Kind: secretGroupKind, Verbs: applyVerbs,
			Why: "the Secret of the child's sensitive values is named after the plan run"})
	}
	return out
}

// Rerenders says whether the task's objects are what a rendering says, so
// that drift correction and adoption render them again: a Pipe's files and
// a child Instance come from a plan's run.
func Rerenders(t *kudov1beta1.Task) bool {
	kind, err := For(t.Kind)
	return err == nil && kind.Rerenders()
}

func (apply) Rerenders() bool        { return true }
func (toggle) Rerenders() bool       { return true }
func (deletion) Rerenders() bool     { return false }
func (pipe) Rerenders() bool         { return false }
func (kudoOperator) Rerenders() bool { return false }
func (dummy) Rerenders() bool        { return false }
