// Package task runs the tasks of a plan step. Each kind of task — Apply,
// Delete, Toggle, Pipe, KudoOperator, Dummy — is one unit, in a file of its
// own, behind the Kind interface: how its spec is checked (admission and
// package verify), what it would do (the preview, and the controller before
// it acts) and its run against the cluster. Runs are idempotent: the
// controller runs the tasks of a due step on every pass until they are done,
// so a task applies what is missing and reports what it waits for.
package task

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
)

// Kind is one kind of task.
type Kind interface {
	// Validate checks a task's spec, found at at, against what its
	// OperatorVersion or package defines. field.Required errors mark a spec
	// the kind cannot run without, which admission refuses; the others only
	// package verify reports, as KUDO installed such packages.
	Validate(spec *kudov1beta1.TaskSpec, defs *Definitions, at *field.Path) field.ErrorList
	// Uses names the templates and parameters the spec refers to.
	Uses(spec *kudov1beta1.TaskSpec) Uses
	// Build says what the task would do, without a cluster.
	Build(t *kudov1beta1.Task, in *Input) (*Intent, error)
	// Run does it against the cluster, and reports whether it is done.
	Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error)
	// Access is what a task needs of the API server as the Instance's
	// account, as a plan renders it (kubectl kudo rbac).
	Access(r *Rendered) []Access
	// Rerenders says whether its objects are what a rendering says, which
	// drift correction and adoption render again.
	Rerenders() bool
}

// kinds is the registry of task kinds: a kind of the API missing here fails
// TestEveryKindIsRegistered.
var kinds = map[kudov1beta1.TaskKind]Kind{
	kudov1beta1.ApplyTaskKind:        apply{},
	kudov1beta1.DeleteTaskKind:       deletion{},
	kudov1beta1.ToggleTaskKind:       toggle{},
	kudov1beta1.PipeTaskKind:         pipe{readTimeout: pipeReadTimeout},
	kudov1beta1.KudoOperatorTaskKind: kudoOperator{},
	kudov1beta1.DummyTaskKind:        dummy{},
	kudov1beta1.HelmTaskKind:         helm{},
}

// For returns the unit of a task kind.
func For(kind kudov1beta1.TaskKind) (Kind, error) {
	if k, ok := kinds[kind]; ok {
		return k, nil
	}
	names := make([]string, 0, len(kinds))
	for _, k := range kudov1beta1.TaskKinds {
		names = append(names, string(k))
	}
	return nil, fmt.Errorf("kind %q is not one of %s", kind, strings.Join(names, ", "))
}

// Definitions are what a task's spec may refer to.
type Definitions struct {
	Templates map[string]string
	// Charts are the package's charts, by name.
	Charts map[string][]byte
	// Parameters maps each parameter to its type, "" when untyped (a string).
	Parameters map[string]kudov1beta1.ParameterType
}

// DefinitionsOf are the definitions of an OperatorVersion.
func DefinitionsOf(ov *kudov1beta1.OperatorVersion) *Definitions {
	defs := &Definitions{Templates: ov.Spec.Templates, Charts: ov.Spec.Charts, Parameters: map[string]kudov1beta1.ParameterType{}}
	for _, p := range ov.Spec.Parameters {
		defs.Parameters[p.Name] = p.Type
	}
	return defs
}

// template checks that a template the spec names exists.
func (d *Definitions) template(name string, at *field.Path) field.ErrorList {
	if _, ok := d.Templates[name]; !ok {
		return field.ErrorList{field.Invalid(at, name, fmt.Sprintf("template %q is not in templates/", name))}
	}
	return nil
}

// Uses are what a task's spec refers to. Its templates render into Objects
// that it applies or deletes, each on its own, or into what the kind makes
// of Others itself (a Pipe's pod, a KudoOperator's parameters), which only
// its Build can check. Parameters are those it reads itself (a Toggle's).
type Uses struct {
	Objects    []string
	Others     []string
	Parameters []string
}

// Input is what Build needs: where the task renders, and what the target
// server serves.
type Input struct {
	Site   render.Site
	Served migrate.Served
	Scope  render.Scope
	// Dependencies looks up the ConfigMaps and Secrets pods mount; nil offline.
	Dependencies render.Dependencies
	// Redactor hides the Instance's sensitive values; nil hides nothing.
	Redactor *params.Redactor
	// Capabilities are what a Helm chart's .Capabilities says of the
	// cluster its objects go to; nil offline, where Helm's defaults hold.
	Capabilities func() (*chartrender.Capabilities, error)
}

// Action is what a task does to the objects of its Intent.
type Action string

const (
	ActionApply   Action = "apply"
	ActionDelete  Action = "delete"
	ActionRun     Action = "run"
	ActionInstall Action = "install"
	ActionNone    Action = "none"
)

// Intent is what a task would do.
type Intent struct {
	Action  Action
	Objects []*unstructured.Unstructured
	// Waves, when set, are Objects in the order they are applied, each
	// healthy before the next: a Helm task's pre hooks, its chart's objects,
	// its post hooks.
	Waves [][]*unstructured.Unstructured
	// Hooks are the objects a plan run applies as Helm runs a chart's
	// hooks, not as it applies the others.
	Hooks      map[kudov1beta1.ObjectRef]HookRun
	Migrations []render.Migration
	// Note says what the objects do not show.
	Note string
	// Child is the Instance a KudoOperator task makes.
	Child *Child
}

// HookRun is how plan runs apply a chart's hook, which Helm runs at some
// events only.
type HookRun int

const (
	// KeptHook is made by the first run that renders it, then kept as it
	// is (objects.Manager.Keep): a hook of installs.
	KeptHook HookRun = iota + 1
	// RemadeHook is made anew by each run after the one that made it
	// (objects.Manager.Remake): a hook of upgrades.
	RemadeHook
)

// renderObjects renders templates into the objects an Intent acts on.
func renderObjects(action Action, templates []string, in *Input) (*Intent, error) {
	site := &in.Site
	result, err := render.Task(&render.Request{
		Templates: site.OperatorVersion.Spec.Templates, Resources: templates,
		Variables: site.Variables(), Metadata: site.Metadata(),
		Served: in.Served, Scope: in.Scope, Dependencies: in.Dependencies, Limits: site.Limits,
	})
	if err != nil {
		return nil, err
	}
	return &Intent{Action: action, Objects: result.Objects, Migrations: result.Migrations}, nil
}

// Env is what a run needs: the cluster, the Instance and where in its plan
// the task runs.
type Env struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// SecretReader reads Secrets, whose data the cache does not hold, from
	// the API server; nil: Client reads them.
	SecretReader client.Reader
	Instance     *kudov1beta1.Instance
	// Site is where the task renders; its Owner is the Instance.
	Site   render.Site
	Served migrate.Served
	Scope  render.Scope
	// Objects applies, deletes and judges the objects the task renders.
	Objects *objects.Manager
	// Home and HomeObjects are Client and Objects in the manager's own
	// cluster, where child Instances live: the same, unless the Instance
	// acts on another cluster (spec.kubeConfig).
	Home        client.Client
	HomeObjects *objects.Manager
	// Files copies files out of a running pod, for Pipe tasks.
	Files FileCopier
	// Admit, when set, sees what an Apply or Toggle task is about to apply,
	// and may refuse it, writing nothing: the controller checks there that
	// the Instance's inventory can hold the objects, and that it holds its
	// cleanup finalizer when they need it. The task returns the refusal.
	Admit func(task string, objs []*unstructured.Unstructured) error
	// Redactor hides the Instance's sensitive values; nil hides nothing.
	Redactor *params.Redactor
	// Capabilities are what a Helm chart's .Capabilities says of the
	// cluster the objects go to.
	Capabilities func() (*chartrender.Capabilities, error)
}

// atHome is env in the manager's own cluster: where the Instance and its
// children live, and what of theirs must be beside them.
func (env *Env) atHome() *Env {
	if !env.Site.Remote {
		return env
	}
	home := *env
	home.Client, home.SecretReader, home.Objects, home.Site.Remote = env.Home, nil, env.HomeObjects, false
	return &home
}

// input is what the task's Build sees of the run.
func (env *Env) input() *Input {
	return &Input{Site: env.Site, Served: env.Served, Scope: env.Scope, Redactor: env.Redactor, Capabilities: env.Capabilities}
}

// build builds the task against the cluster: pods' ConfigMaps and Secrets
// are read from it. What does not build fails the plan, unless reading the
// cluster failed, which a retry may fix.
func (env *Env) build(ctx context.Context, kind Kind, t *kudov1beta1.Task) (*Intent, error) {
	var lookupErr error
	in := env.input()
	in.Dependencies = func(kind, namespace, name string) (*unstructured.Unstructured, bool, error) {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: kind})
		key := client.ObjectKey{Namespace: namespace, Name: name}
		var err error
		switch {
		case kind == secretKind && env.SecretReader != nil:
			err = env.SecretReader.Get(ctx, key, obj)
		case env.Objects != nil:
			// A ConfigMap of the user's is not in a shard's cache.
			err = env.Objects.Read(ctx, key, obj)
		default:
			err = env.Client.Get(ctx, key, obj)
		}
		if client.IgnoreNotFound(err) != nil {
			lookupErr = err
			return nil, false, err
		}
		return obj, err == nil, nil
	}
	intent, err := kind.Build(t, in)
	switch {
	case lookupErr != nil:
		return nil, err
	case err != nil && !IsFatal(err):
		return nil, &FatalError{Err: err}
	}
	return intent, err
}

// Render says what a task would do, against the cluster, as its run does:
// drift correction applies again what it renders.
func Render(ctx context.Context, t *kudov1beta1.Task, env *Env) (*Intent, error) {
	kind, err := For(t.Kind)
	if err != nil {
		return nil, err
	}
	return env.build(ctx, kind, t)
}

// Run runs a task of any kind.
func Run(ctx context.Context, t *kudov1beta1.Task, env *Env) (Result, error) {
	kind, err := For(t.Kind)
	if err != nil {
		return Result{}, &FatalError{Err: fmt.Errorf("task %s: %w", t.Name, err)}
	}
	return kind.Run(ctx, t, env)
}

// Result is the outcome of one run of a task.
type Result struct {
	Done bool
	// Message says what the task waits for, or notes how it finished.
	Message string
	// Waiting are the verdicts on the objects it waits for.
	Waiting    []kudov1beta1.ObjectHealth
	Migrations []render.Migration
	// Applied are the objects the run applied, or found applied: what the
	// Instance's inventory records. Deleted are those it deleted, or found gone.
	Applied []objects.Change
	Deleted []*unstructured.Unstructured
}

// FatalError is an error no retry can fix: it fails the plan.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Fatalf makes a FatalError.
func Fatalf(format string, args ...any) error {
	return &FatalError{Err: fmt.Errorf(format, args...)}
}

// IsFatal reports whether err fails the plan.
func IsFatal(err error) bool {
	var f *FatalError
	return errors.As(err, &f)
}

// Required keeps the errors of a spec that cannot run: what admission refuses.
func Required(errs field.ErrorList) field.ErrorList {
	var required field.ErrorList
	for _, e := range errs {
		if e.Type == field.ErrorTypeRequired {
			required = append(required, e)
		}
	}
	return required
}
