package action

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/inventory"
)

// leftovers follows what an uninstalled Instance applied until it is gone.
// While an Instance of the uninstall remains (the one uninstalled, or a
// child of a KudoOperator task), the manager is at work: its cleanup plan,
// then the deletion of its inventory; what remains is the Instances and
// their inventories. Once they are gone, what remains of every inventory
// seen is read object by object: the garbage collector deletes what the
// Instances owned, and the manager kept the rest.
type leftovers struct {
	instance kudov1beta1.ObjectRef
	// seen is every object of the inventories read, in the order first
	// seen, the Instance first.
	seen  []kudov1beta1.ObjectRef
	known sets.Set[kudov1beta1.ObjectRef]
	// owners are the uids of the Instances of the uninstall.
	owners sets.Set[types.UID]
	// gone and kept are settled: they are not read again.
	gone sets.Set[kudov1beta1.ObjectRef]
	kept []keptObject
}

// keptObject is an object that stays after the uninstall, and why.
type keptObject struct {
	ref    kudov1beta1.ObjectRef
	reason string
}

func newLeftovers(i *kudov1beta1.Instance) *leftovers {
	ref := instanceRef(i.Namespace, i.Name)
	l := &leftovers{instance: ref, known: sets.New[kudov1beta1.ObjectRef](), owners: sets.New(i.UID),
		gone: sets.New[kudov1beta1.ObjectRef]()}
	l.add(ref)
	l.add(inventory.All(i.Status.Inventory)...)
	return l
}

func instanceRef(namespace, name string) kudov1beta1.ObjectRef {
	return kudov1beta1.ObjectRef{APIVersion: kudov1beta1.GroupVersion.String(), Kind: "Instance", Namespace: namespace, Name: name}
}

func isInstance(r kudov1beta1.ObjectRef) bool {
	return r.APIVersion == kudov1beta1.GroupVersion.String() && r.Kind == "Instance"
}

func (l *leftovers) add(refs ...kudov1beta1.ObjectRef) {
	for _, r := range refs {
		if !l.known.Has(r) {
			l.known.Insert(r)
			l.seen = append(l.seen, r)
		}
	}
}

// read returns what remains to wait for.
func (l *leftovers) read(ctx context.Context, c client.Reader) ([]kudov1beta1.ObjectRef, error) {
	var instances, inventories []kudov1beta1.ObjectRef
	for _, ref := range l.seen {
		if !isInstance(ref) || l.gone.Has(ref) {
			continue
		}
		i := &kudov1beta1.Instance{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, i); apierrors.IsNotFound(err) {
			l.gone.Insert(ref)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("reading %s to wait for it: %w", describe(ref), err)
		}
		if err := clientutil.ReadRecord(ctx, c, i); err != nil {
			return nil, fmt.Errorf("reading the status of %s to wait for it: %w", describe(ref), err)
		}
		l.owners.Insert(i.UID)
		instances = append(instances, ref)
		inventories = append(inventories, inventory.All(i.Status.Inventory)...)
	}
	l.add(inventories...)
	if len(instances) > 0 {
		// The manager forgets what it deleted: the inventories are what remains.
		return append(instances, withoutInstances(inventories)...), nil
	}
	var waiting []kudov1beta1.ObjectRef
	for _, ref := range l.seen {
		if l.gone.Has(ref) || isInstance(ref) || l.isKept(ref) {
			continue
		}
		obj, err := readMetadata(ctx, c, ref)
		if err != nil {
			return nil, err
		}
		if obj == nil {
			l.gone.Insert(ref)
			continue
		}
		if reason, kept := keptBy(ref, obj, l.owners); kept {
			l.kept = append(l.kept, keptObject{ref, reason})
			continue
		}
		waiting = append(waiting, ref)
	}
	return waiting, nil
}

func (l *leftovers) isKept(ref kudov1beta1.ObjectRef) bool {
	for _, k := range l.kept {
		if k.ref == ref {
			return true
		}
	}
	return false
}

func withoutInstances(refs []kudov1beta1.ObjectRef) []kudov1beta1.ObjectRef {
	var out []kudov1beta1.ObjectRef
	for _, r := range refs {
		if !isInstance(r) {
			out = append(out, r)
		}
	}
	return out
}

// readMetadata reads an object's metadata; nil when it is gone, or its kind
// is no longer served (its CustomResourceDefinition went, and it with it).
func readMetadata(ctx context.Context, c client.Reader, ref kudov1beta1.ObjectRef) (*metav1.PartialObjectMetadata, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s to wait for it: %w", describe(ref), err)
	}
	return obj, nil
}

// keptBy reports whether an object that remains once the Instances of an
// uninstall are gone stays, and why: the manager deleted what it could
// before it let them go, so only what is being deleted, or what the garbage
// collector will delete for an owner among the Instances, goes still.
func keptBy(ref kudov1beta1.ObjectRef, obj metav1.Object, owners sets.Set[types.UID]) (string, bool) {
	if obj.GetDeletionTimestamp() != nil {
		return "", false
	}
	for _, o := range obj.GetOwnerReferences() {
		if owners.Has(o.UID) {
			return "", false
		}
	}
	switch {
	case obj.GetAnnotations()[kudov1beta1.PruneAnnotation] == kudov1beta1.Disabled:
		return fmt.Sprintf("annotated %s: %s", kudov1beta1.PruneAnnotation, kudov1beta1.Disabled), true
	case inventory.IsCustomResourceDefinition(ref):
		return "custom resources of it remain: delete them, then the CustomResourceDefinition", true
	}
	return "the manager did not delete it (see the Instance's events): delete it if nothing needs it", true
}
