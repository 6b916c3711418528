package objects

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/inventory"
)

// Ownership is the one place that says which objects an Instance may write
// and delete. An Instance's name is its user's choice, and packages name
// objects after it, so a name proves nothing: an object is the Instance's
// only when something only kudo-ng or the object's own writers set says so.
// Everything else — another owner's, or nobody's (a user's Deployment, an
// admin's ClusterRole) — an Instance neither applies over nor deletes.

// Claim is whose an object is, as an Instance sees it.
type Claim struct {
	// Ours: the Instance may write and delete the object.
	Ours bool
	// Holder names who holds it when it is not ours: "Instance ns/b",
	// "ReplicaSet web-5d9", or "" when no one does.
	Holder string
}

// ClaimOf says whether live is i's: its controller owner reference is i
// (namespaced objects in i's namespace), its kudo.dev/owner annotation names
// i (objects no owner reference can name i on), whoever may write it handed
// it to i with kudo.dev/adopt, or i's inventory records it and it carries
// KUDO's labels of i (what KUDO, or kudo-ng before it recorded owners,
// applied beyond owner references' reach). The inventory alone proves
// nothing: it is a status, which whoever may write a typed object's status
// writes too, and an entry naming another's object is only a claim of it.
func ClaimOf(live *unstructured.Unstructured, i *kudov1beta1.Instance) Claim {
	if ref := metav1.GetControllerOf(live); ref != nil {
		if ref.UID == i.UID {
			return Claim{Ours: true}
		}
		return Claim{Holder: fmt.Sprintf("%s %s", ref.Kind, ref.Name)}
	}
	self := i.Namespace + "/" + i.Name
	if owner, ok := live.GetAnnotations()[kudov1beta1.OwnerAnnotation]; ok {
		if owner == self {
			return Claim{Ours: true}
		}
		return Claim{Holder: "Instance " + owner}
	}
	if live.GetAnnotations()[kudov1beta1.AdoptAnnotation] == self || (MadeByKUDOFor(live, i) && recorded(i, inventory.RefOf(live))) {
		return Claim{Ours: true}
	}
	return Claim{}
}

// MadeByKUDOFor says whether live carries the labels KUDO v0.19 put on what
// an Instance of i's name applied, and no owner of kudo-ng's:
// what KUDO applied outside owner references' reach (cluster-scoped
// objects), which taking an Instance over from KUDO adopts. KUDO applied
// namespaced objects into the Instance's namespace only, so one elsewhere
// is another namespace's Instance's of the same name.
func MadeByKUDOFor(live *unstructured.Unstructured, i *kudov1beta1.Instance) bool {
	labels := live.GetLabels()
	return metav1.GetControllerOf(live) == nil && live.GetAnnotations()[kudov1beta1.OwnerAnnotation] == "" &&
		labels[kudov1beta1.HeritageLabel] == "kudo" && labels[kudov1beta1.InstanceLabel] == i.Name &&
		(live.GetNamespace() == "" || live.GetNamespace() == i.Namespace)
}

// recorded says whether i's inventory holds ref, stale or not. Only objects
// with no owner of kudo-ng's are looked up here: few.
func recorded(i *kudov1beta1.Instance, ref kudov1beta1.ObjectRef) bool {
	return slices.Contains(inventory.All(i.Status.Inventory), ref)
}

// notOurs is the error of writing an object that is not the Instance's.
func notOurs(obj *unstructured.Unstructured, i *kudov1beta1.Instance, c Claim) error {
	what := fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
	if ns := obj.GetNamespace(); ns != "" {
		what = fmt.Sprintf("%s %s/%s", obj.GetKind(), ns, obj.GetName())
	}
	switch {
	case strings.HasPrefix(c.Holder, "Instance "):
		return fmt.Errorf("%s is %s's: two Instances render it; uninstall one, or rename it in one's package", what, c.Holder)
	case c.Holder != "":
		return fmt.Errorf("%s is %s's, which controls it: an Instance takes over nothing another owner holds; rename it in the package",
			what, c.Holder)
	}
	return fmt.Errorf("%s exists and is not Instance %s/%s's: an Instance takes over nothing it did not make; "+
		"to hand it over, annotate it %s=%s/%s", what, i.Namespace, i.Name, kudov1beta1.AdoptAnnotation, i.Namespace, i.Name)
}
