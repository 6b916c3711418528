// Package inventory keeps the record of what an Instance's plans applied —
// per task, in the Instance's status — and decides from it, as plain data,
// what is stale and what someone else changed. The controller gathers the
// objects, asks here, and acts.
package inventory

import (
	"cmp"
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/crd"
)

// Site is where a task ran: its plan run, phase and step.
type Site struct {
	Task, Plan, Phase, Step string
	PlanUID                 types.UID
}

// Applied is an object a run of a task applied, as the cluster has it, and
// whether this run wrote it (else the cluster had it already).
type Applied struct {
	Object  kudov1beta1.InventoryObject
	Written bool
}

// RefOf names an object.
func RefOf(obj *unstructured.Unstructured) kudov1beta1.ObjectRef {
	return kudov1beta1.ObjectRef{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Changed reports whether the object as the cluster has it now (observed
// as Observe does) differs from what the inventory last saw of it.
func Changed(recorded, now kudov1beta1.InventoryObject) bool {
	return recorded.Generation != now.Generation || recorded.Hash != now.Hash
}

// Record notes what a run of a task applied at site. The objects move to
// this task if another one held them: an object belongs to whichever task
// applied it last. While the task runs, what it applied is added to what it
// held; once it completed (done), it holds exactly what it applied, and
// what it held besides becomes stale. An object the run did not write keeps
// what the inventory saw of it, so that a plan that finds it changed and
// leaves it as it is (its rendering unchanged) does not hide the change.
func Record(inv []kudov1beta1.TaskInventory, site Site, applied []Applied, done bool) []kudov1beta1.TaskInventory {
	refs := make(map[kudov1beta1.ObjectRef]bool, len(applied))
	for _, a := range applied {
		refs[a.Object.ObjectRef] = true
	}
	held := map[kudov1beta1.ObjectRef]kudov1beta1.InventoryObject{}
	var t *kudov1beta1.TaskInventory
	for i := range inv {
		if inv[i].Task == site.Task {
			t = &inv[i]
			for _, o := range t.Objects {
				held[o.ObjectRef] = o
			}
			continue
		}
		inv[i].Objects = slices.DeleteFunc(inv[i].Objects, func(o kudov1beta1.InventoryObject) bool { return refs[o.ObjectRef] })
		inv[i].Stale = slices.DeleteFunc(inv[i].Stale, func(r kudov1beta1.ObjectRef) bool { return refs[r] })
	}
	if t == nil {
		inv = append(inv, kudov1beta1.TaskInventory{Task: site.Task})
		t = &inv[len(inv)-1]
	}
	t.Plan, t.Phase, t.Step, t.PlanUID = site.Plan, site.Phase, site.Step, site.PlanUID
	objects := make([]kudov1beta1.InventoryObject, 0, len(applied))
	for _, a := range applied {
		o := a.Object
		if old, ok := held[o.ObjectRef]; ok && !a.Written {
			o = old
		}
		objects = append(objects, o)
		delete(held, o.ObjectRef)
	}
	stale := slices.DeleteFunc(t.Stale, func(r kudov1beta1.ObjectRef) bool { return refs[r] })
	for ref, o := range held {
		if done {
			stale = append(stale, ref)
		} else {
			objects = append(objects, o)
		}
	}
	t.Objects, t.Stale = objects, stale
	return tidy(inv)
}

// Forget drops objects from the inventory: a Delete task, or a Toggle
// switched off, deleted them; pruning or uninstall did.
func Forget(inv []kudov1beta1.TaskInventory, refs ...kudov1beta1.ObjectRef) []kudov1beta1.TaskInventory {
	gone := make(map[kudov1beta1.ObjectRef]bool, len(refs))
	for _, r := range refs {
		gone[r] = true
	}
	for i := range inv {
		inv[i].Objects = slices.DeleteFunc(inv[i].Objects, func(o kudov1beta1.InventoryObject) bool { return gone[o.ObjectRef] })
		inv[i].Stale = slices.DeleteFunc(inv[i].Stale, func(r kudov1beta1.ObjectRef) bool { return gone[r] })
	}
	return tidy(inv)
}

// Update replaces what the inventory saw of an object, wherever it is.
func Update(inv []kudov1beta1.TaskInventory, o kudov1beta1.InventoryObject) {
	for i := range inv {
		for j := range inv[i].Objects {
			if inv[i].Objects[j].ObjectRef == o.ObjectRef {
				inv[i].Objects[j] = o
			}
		}
	}
}

// Prunable are the tasks whose stale objects may go: their last run belongs
// to the plan run that completed last for their plan. A run that failed
// prunes nothing; the next run of the task that completes does.
func Prunable(inv []kudov1beta1.TaskInventory, plans map[string]kudov1beta1.PlanStatus) []*kudov1beta1.TaskInventory {
	var due []*kudov1beta1.TaskInventory
	for i := range inv {
		t := &inv[i]
		ps, ok := plans[t.Plan]
		if len(t.Stale) > 0 && ok && ps.UID == t.PlanUID && ps.Status == kudov1beta1.ExecutionComplete {
			due = append(due, t)
		}
	}
	return due
}

// Entry is an object of the inventory and the task that holds it.
type Entry struct {
	kudov1beta1.InventoryObject
	Task *kudov1beta1.TaskInventory
}

// Entries lists every object the inventory holds (stale ones aside).
func Entries(inv []kudov1beta1.TaskInventory) []Entry {
	var all []Entry
	for i := range inv {
		for _, o := range inv[i].Objects {
			all = append(all, Entry{InventoryObject: o, Task: &inv[i]})
		}
	}
	return all
}

// All lists every object the inventory names, stale ones included: what
// uninstall deletes.
func All(inv []kudov1beta1.TaskInventory) []kudov1beta1.ObjectRef {
	var all []kudov1beta1.ObjectRef
	for _, t := range inv {
		for _, o := range t.Objects {
			all = append(all, o.ObjectRef)
		}
		all = append(all, t.Stale...)
	}
	return sortRefs(all)
}

// OwnersCannotCover reports whether the inventory holds objects that owner
// references to the Instance cannot delete: cluster-scoped ones and those in
// other namespaces.
func OwnersCannotCover(inv []kudov1beta1.TaskInventory, namespace string) bool {
	for _, r := range All(inv) {
		if r.Namespace != namespace {
			return true
		}
	}
	return false
}

// IsCustomResourceDefinition reports whether the reference is to a CRD.
func IsCustomResourceDefinition(r kudov1beta1.ObjectRef) bool {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind).GroupKind() == crd.GroupKind
}

// RemovalTiers splits what uninstall deletes into the order it goes in:
// the objects, then CustomResourceDefinitions, whose custom resources must
// be gone first, then RBAC, which may be what lets the manager delete the
// rest.
func RemovalTiers(refs []kudov1beta1.ObjectRef) [][]kudov1beta1.ObjectRef {
	tiers := make([][]kudov1beta1.ObjectRef, 3)
	for _, r := range refs {
		switch {
		case IsCustomResourceDefinition(r):
			tiers[1] = append(tiers[1], r)
		case schema.FromAPIVersionAndKind(r.APIVersion, r.Kind).Group == "rbac.authorization.k8s.io":
			tiers[2] = append(tiers[2], r)
		default:
			tiers[0] = append(tiers[0], r)
		}
	}
	return tiers
}

// RunsOnce reports whether objects of the kind run to an end and may go
// away by design (a Job after its TTL): such an object missing is no drift,
// and applying it again would run it again.
func RunsOnce(r kudov1beta1.ObjectRef) bool {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind).GroupKind() == schema.GroupKind{Group: "batch", Kind: "Job"}
}

// tidy drops tasks that hold nothing and sorts the rest, so that the same
// inventory is always written the same.
func tidy(inv []kudov1beta1.TaskInventory) []kudov1beta1.TaskInventory {
	for i := range inv {
		inv[i].Objects, inv[i].Stale = sortObjects(inv[i].Objects), sortRefs(inv[i].Stale)
	}
	inv = slices.DeleteFunc(inv, func(t kudov1beta1.TaskInventory) bool { return len(t.Objects) == 0 && len(t.Stale) == 0 })
	slices.SortFunc(inv, func(a, b kudov1beta1.TaskInventory) int { return cmp.Compare(a.Task, b.Task) })
	if len(inv) == 0 {
		return nil
	}
	return inv
}

func compareRefs(a, b kudov1beta1.ObjectRef) int {
	return cmp.Or(cmp.Compare(a.APIVersion, b.APIVersion), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

func sortObjects(objs []kudov1beta1.InventoryObject) []kudov1beta1.InventoryObject {
	if len(objs) == 0 {
		return nil
	}
	slices.SortFunc(objs, func(a, b kudov1beta1.InventoryObject) int { return compareRefs(a.ObjectRef, b.ObjectRef) })
	return objs
}

func sortRefs(refs []kudov1beta1.ObjectRef) []kudov1beta1.ObjectRef {
	if len(refs) == 0 {
		return nil
	}
	slices.SortFunc(refs, compareRefs)
	return slices.Compact(refs)
}

// Describe names an object in messages: its kind, namespace and name.
func Describe(ref kudov1beta1.ObjectRef) string {
	return DescribeNamed(ref.Kind, ref.Namespace, ref.Name)
}

// DescribeNamed names an object by its kind, namespace and name.
func DescribeNamed(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// MaxBytes bounds the inventory as the Instance's status stores it: about
// 8,500 objects of usual names. With the parameters (twice: the spec and the
// applied ones), the revisions and the plans' statuses, the Instance stays
// under 1 MiB, well within what the API server stores (1.5 MiB).
const MaxBytes = 640 << 10

// certainlyFits is a count of objects whose inventory is within MaxBytes
// whatever their names, which the API server bounds: it is not measured.
const certainlyFits = 800

// Fits reports whether the inventory holds what the task at site applies
// besides what it holds, within MaxBytes, and how many objects and bytes
// that would take. A task whose objects do not fit must apply none of them:
// what the inventory does not hold, nothing prunes or uninstalls.
func Fits(inv []kudov1beta1.TaskInventory, site Site, objs []*unstructured.Unstructured) (count, size int, ok bool) {
	held := 0
	for _, t := range inv {
		held += len(t.Objects) + len(t.Stale)
	}
	if held+len(objs) <= certainlyFits {
		return held + len(objs), 0, true
	}
	after := make([]kudov1beta1.TaskInventory, len(inv))
	for k := range inv {
		inv[k].DeepCopyInto(&after[k])
	}
	applied := make([]Applied, len(objs))
	for k, obj := range objs {
		// The hash of a kind without generation is the longest note an
		// object gets.
		applied[k] = Applied{Object: kudov1beta1.InventoryObject{ObjectRef: RefOf(obj), Hash: "0123456789abcdef"}, Written: true}
	}
	after = Record(after, site, applied, false)
	b, err := json.Marshal(after)
	if err != nil {
		return 0, 0, false
	}
	for _, t := range after {
		count += len(t.Objects) + len(t.Stale)
	}
	return count, len(b), len(b) <= MaxBytes
}
