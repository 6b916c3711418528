// Package objects is kudo-ng's one layer for the objects packages render,
// as fluxcd/pkg/ssa's ResourceManager is Flux's: it reads them from the
// manager's cache, applies them with server-side apply as field manager
// kudo-ng, compares them with what kudo-ng applied (a server-side dry run),
// deletes them with the guards users rely on, and judges their health. Each
// operation says what it did as plain data (a Change); its callers — the
// task kinds, drift correction, pruning, uninstall — decide what that means
// for a plan and which events to emit. Nothing else talks server-side apply.
//
// Objects are compared as the cache holds them (Observe): the cache trims
// what nothing reads (Trim.ForCache), so what is noted of an object the API
// server answered is trimmed the same way first.
package objects

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/healthrule"
	"github.com/kudo-ng/kudo/internal/inventory"
)

// The field managers of kudo-ng's server-side applies: each owns what its
// writer sets, and takes it over from anyone else.
const (
	// FieldOwner is the manager's: an Instance's objects, the CRDs of typed
	// APIs.
	FieldOwner = "kudo-ng"
	// TypedAPIFieldOwner is the typed objects' controller's, which applies
	// the Instance of each: what it sets is the typed object's, and wins.
	TypedAPIFieldOwner = "kudo-ng-typed-api"
	// CLIFieldOwner is kubectl kudo init's.
	CLIFieldOwner = "kubectl-kudo"
)

// ServerSideApply is the one server-side apply of kudo-ng: obj, as
// fieldOwner, taking over the fields it sets from other managers; obj
// becomes the API server's answer, and an error names it.
func ServerSideApply(ctx context.Context, c client.Writer, obj *unstructured.Unstructured, fieldOwner string,
	opts ...client.PatchOption) error {
	opts = append(opts, client.FieldOwner(fieldOwner), client.ForceOwnership)
	if err := c.Patch(ctx, obj, client.Apply, opts...); err != nil {
		return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// Watcher makes sure that changes to the objects of a kind wake the
// Instances they belong to, before the kind's objects are read or written:
// packages apply kinds known only at run time.
type Watcher interface {
	Watch(ctx context.Context, gvk schema.GroupVersionKind) error
	// JudgedBy says that a package's health rules judge objects of a kind:
	// a change of their verdict may move a plan, where kstatus's would not
	// change.
	JudgedBy(gk schema.GroupKind, judge *healthrule.Judge)
}

// Manager reads, applies, compares, deletes and judges objects for one
// reconcile of an Instance.
type Manager struct {
	// owner is the Instance: the Manager writes and deletes only its
	// objects (ClaimOf).
	owner *kudov1beta1.Instance
	// client reads from the manager's cache and writes to the API server,
	// as the Instance's service account when it names one.
	client client.Client
	// apiReader reads what must not start an informer: the custom
	// resources that keep a CustomResourceDefinition.
	apiReader client.Reader
	kinds     Watcher
	writes    *Writes
	trim      Trim
	rules     *healthrule.Set
	// confirmMisses: the cache holds only the objects of a shard.
	confirmMisses bool
}

// Options are what a Manager shares with the rest of the manager.
type Options struct {
	// APIReader reads what must not start an informer: the custom
	// resources that keep a CustomResourceDefinition.
	APIReader client.Reader
	// Kinds, if not nil, watches each kind before its objects are read.
	Kinds Watcher
	// Writes, if not nil, collects what the Manager writes.
	Writes *Writes
	// Trim is how the cache trims objects, which Observe sees alike.
	Trim Trim
	// Rules are the health rules of the OperatorVersion, if any.
	Rules *healthrule.Set
	// ConfirmMisses says that the cache holds only the objects of the
	// manager's shard (their sharding.kudo.dev/key label): an object it does
	// not hold may still exist, unlabelled or another shard's, and is read
	// from the API server (APIReader) before it counts as missing.
	ConfirmMisses bool
}

// NewManager makes the Manager of owner's objects, read and written with c.
func NewManager(owner *kudov1beta1.Instance, c client.Client, opts Options) *Manager {
	return &Manager{owner: owner, client: c, apiReader: opts.APIReader, kinds: opts.Kinds, writes: opts.Writes, trim: opts.Trim,
		rules: opts.Rules, confirmMisses: opts.ConfirmMisses}
}

// Observe is what the inventory notes of obj (Trim.Observe).
func (m *Manager) Observe(obj *unstructured.Unstructured) (kudov1beta1.InventoryObject, error) {
	return m.trim.Observe(obj)
}

// Action is what an operation did to an object.
type Action string

const (
	// Unchanged: the cluster had what kudo-ng applies, so nothing was written.
	Unchanged Action = "unchanged"
	// Applied: the object was written (created or configured).
	Applied Action = "applied"
	// Deleting: the object's deletion was asked for, now or before.
	Deleting Action = "deleting"
	// Gone: the object does not exist, or its kind is not served.
	Gone Action = "gone"
	// KeptByAnnotation: the object is annotated kudo.dev/prune: disabled.
	KeptByAnnotation Action = "kept"
	// KeptForCustomResources: a CustomResourceDefinition whose custom
	// resources remain, or may: deleting it would delete them.
	KeptForCustomResources Action = "kept for its custom resources"
	// KeptNotOurs: the object is not the Instance's (ClaimOf): another
	// Instance's or controller's, or nobody's.
	KeptNotOurs Action = "kept: not this Instance's"
)

// Change is what an operation did to one object.
type Change struct {
	// Object is the object as the cluster has it after an apply, or as it
	// was found by a delete; nil when it was not found.
	Object *unstructured.Unstructured
	Action Action
	// Note says why an object was kept.
	Note string
}

// Written reports whether the change wrote the object.
func (c Change) Written() bool { return c.Action == Applied }

// Get reads an object from the cache, nil when it is gone or its kind is
// not served. Its kind is watched first, so that its changes wake its
// Instance even when no plan applied it since the manager started.
func (m *Manager) Get(ctx context.Context, ref kudov1beta1.ObjectRef) (*unstructured.Unstructured, error) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if err := m.watch(ctx, gvk); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	switch err := m.Read(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, live); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", inventory.Describe(ref), err)
	}
	return live, nil
}

// Read reads an object from the cache; one a shard's cache does not hold,
// from the API server (Options.ConfirmMisses), trimmed as the cache would
// hold it: whoever made it, it is neither applied over nor forgotten unseen.
func (m *Manager) Read(ctx context.Context, key client.ObjectKey, obj *unstructured.Unstructured) error {
	err := m.client.Get(ctx, key, obj)
	if !m.confirmMisses || !apierrors.IsNotFound(err) {
		return err
	}
	if err := m.apiReader.Get(ctx, key, obj); err != nil {
		return err
	}
	_, err = m.trim.ForCache(obj)
	return err
}

func (m *Manager) watch(ctx context.Context, gvk schema.GroupVersionKind) error {
	if m.kinds == nil {
		return nil
	}
	if err := m.kinds.Watch(ctx, gvk); err != nil {
		return fmt.Errorf("watching %s: %w", gvk.Kind, err)
	}
	return nil
}

// Apply applies obj, as rendered, unless the cluster already has what
// kudo-ng last applied of it (its kudo.dev/applied-hash). An object that
// exists and is not the Instance's is a conflict: it is left as it is. The
// Change holds the object as the cluster has it.
func (m *Manager) Apply(ctx context.Context, obj *unstructured.Unstructured) (Change, error) {
	hash, err := withHash(obj)
	if err != nil {
		return Change{}, err
	}
	current, err := m.ours(ctx, obj)
	if err != nil {
		return Change{}, err
	}
	if current != nil && current.GetAnnotations()[kudov1beta1.AppliedHashAnnotation] == hash {
		return Change{Object: current, Action: Unchanged}, nil
	}
	return m.force(ctx, obj)
}

// Remake applies obj as Apply does, but makes anew an object an earlier plan
// run applied (its kudo.dev/last-plan-execution-uid names another run): it
// is deleted, and applied once it is gone, as Helm runs a chart's upgrade
// hooks again at every upgrade. While the old one goes, the Change is
// Deleting.
func (m *Manager) Remake(ctx context.Context, obj *unstructured.Unstructured) (Change, error) {
	current, err := m.ours(ctx, obj)
	if err != nil {
		return Change{}, err
	}
	if current != nil && current.GetAnnotations()[kudov1beta1.PlanUIDAnnotation] != obj.GetAnnotations()[kudov1beta1.PlanUIDAnnotation] {
		deleted, err := m.DeleteObject(ctx, current, DeleteOptions{Propagation: metav1.DeletePropagationBackground})
		if err != nil || deleted.Action != Gone {
			return deleted, err
		}
	}
	return m.Apply(ctx, obj)
}

// Keep applies obj only when it does not exist: it is made once, then kept
// as it is, as Helm leaves a chart's install hooks at an upgrade.
func (m *Manager) Keep(ctx context.Context, obj *unstructured.Unstructured) (Change, error) {
	current, err := m.ours(ctx, obj)
	switch {
	case err != nil:
		return Change{}, err
	case current == nil:
		return m.Apply(ctx, obj)
	}
	return Change{Object: current, Action: Unchanged}, nil
}

// ours reads the object obj renders, nil when it does not exist, and
// refuses it when it is not the Instance's.
func (m *Manager) ours(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := m.watch(ctx, obj.GroupVersionKind()); err != nil {
		return nil, err
	}
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(obj.GroupVersionKind())
	switch err := m.Read(ctx, client.ObjectKeyFromObject(obj), current); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	if claim := ClaimOf(current, m.owner); !claim.Ours {
		return nil, notOurs(obj, m.owner, claim)
	}
	return current, nil
}

// Correct applies obj as its task rendered it, though the cluster carries
// its applied hash: someone else changed what kudo-ng applied. An object
// made again by another owner since is left to it.
func (m *Manager) Correct(ctx context.Context, obj *unstructured.Unstructured) (Change, error) {
	if _, err := withHash(obj); err != nil {
		return Change{}, err
	}
	if _, err := m.ours(ctx, obj); err != nil {
		return Change{}, err
	}
	return m.force(ctx, obj)
}

func (m *Manager) force(ctx context.Context, obj *unstructured.Unstructured) (Change, error) {
	if err := m.serverSideApply(ctx, obj); err != nil {
		return Change{}, err
	}
	m.writes.add(obj)
	return Change{Object: obj, Action: Applied}, nil
}

// Diff reports whether applying obj, as its task rendered it, would change
// live, the object as the cache holds it: a server-side dry run, which
// changes nothing. A change of fields other managers own (an autoscaler's
// replicas) is no difference.
func (m *Manager) Diff(ctx context.Context, obj, live *unstructured.Unstructured) (bool, error) {
	would := obj.DeepCopy()
	if _, err := withHash(would); err != nil {
		return false, err
	}
	if err := m.serverSideApply(ctx, would, client.DryRunAll); err != nil {
		return false, err
	}
	if live.GetGeneration() > 0 {
		return would.GetGeneration() != live.GetGeneration(), nil
	}
	now, err := m.Observe(live)
	if err != nil {
		return false, err
	}
	after, err := m.Observe(would)
	if err != nil {
		return false, err
	}
	return now != after, nil
}

// serverSideApply applies obj as field manager kudo-ng, taking over the
// fields it sets from other managers; obj becomes the server's answer.
func (m *Manager) serverSideApply(ctx context.Context, obj *unstructured.Unstructured, opts ...client.PatchOption) error {
	return ServerSideApply(ctx, m.client, obj, FieldOwner, opts...)
}

// withHash records on obj, as rendered, its hash, which tells the next pass
// whether it changed.
func withHash(obj *unstructured.Unstructured) (string, error) {
	hash, err := hashOf(obj)
	if err != nil {
		return "", err
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[kudov1beta1.AppliedHashAnnotation] = hash
	obj.SetAnnotations(annotations)
	return hash, nil
}

// hashOf hashes the object as rendered, before the hash annotation is added.
func hashOf(obj *unstructured.Unstructured) (string, error) {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

var namespaceKind = schema.GroupKind{Kind: "Namespace"}

// Stages orders objects as a step applies them: CustomResourceDefinitions
// and Namespaces first, which the others may need, then the rest, each
// stage healthy before the next is applied.
func Stages(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	var first, rest []*unstructured.Unstructured
	for _, obj := range objs {
		if gk := obj.GroupVersionKind().GroupKind(); gk == crd.GroupKind || gk == namespaceKind {
			first = append(first, obj)
		} else {
			rest = append(rest, obj)
		}
	}
	return [][]*unstructured.Unstructured{first, rest}
}
