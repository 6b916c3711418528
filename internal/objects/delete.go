package objects

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/inventory"
)

// DeleteOptions say how an object goes.
type DeleteOptions struct {
	Propagation metav1.DeletionPropagation
	// Guarded keeps what a user may not want deleted with the Instance's
	// record of it (pruning, uninstall): an object annotated
	// kudo.dev/prune: disabled, and a CustomResourceDefinition whose custom
	// resources remain, which deleting it would delete, other users' data
	// perhaps. A Delete task's objects are named by its package and go.
	Guarded bool
}

// Removal is how the inventory's objects go, pruned or uninstalled: in the
// background, and kept when annotated so, or when a CustomResourceDefinition
// still has custom resources.
var Removal = DeleteOptions{Propagation: metav1.DeletePropagationBackground, Guarded: true}

// Delete asks for an object's deletion, with its dependents as opts say,
// and reports whether it is gone, going or kept. An object that is not the
// Instance's is kept, whatever asks.
func (m *Manager) Delete(ctx context.Context, ref kudov1beta1.ObjectRef, opts DeleteOptions) (Change, error) {
	live, err := m.Get(ctx, ref)
	if err != nil || live == nil {
		return Change{Action: Gone}, err
	}
	return m.DeleteObject(ctx, live, opts)
}

// DeleteObject is Delete of an object as the caller holds it, just applied
// or read, by the same rules.
func (m *Manager) DeleteObject(ctx context.Context, live *unstructured.Unstructured, opts DeleteOptions) (Change, error) {
	ref := inventory.RefOf(live)
	if claim := ClaimOf(live, m.owner); !claim.Ours {
		note := "it is no Instance's"
		if claim.Holder != "" {
			note = "it is " + claim.Holder + "'s"
		}
		return Change{Object: live, Action: KeptNotOurs, Note: note}, nil
	}
	if opts.Guarded {
		if live.GetAnnotations()[kudov1beta1.PruneAnnotation] == kudov1beta1.Disabled {
			return Change{Object: live, Action: KeptByAnnotation,
				Note: fmt.Sprintf("annotated %s: %s", kudov1beta1.PruneAnnotation, kudov1beta1.Disabled)}, nil
		}
		if inventory.IsCustomResourceDefinition(ref) {
			if remaining, err := m.customResources(ctx, live); err != nil || remaining != "" {
				return Change{Object: live, Action: KeptForCustomResources, Note: remaining}, err
			}
		}
	}
	if live.GetDeletionTimestamp() != nil {
		return Change{Object: live, Action: Deleting}, nil
	}
	switch err := m.client.Delete(ctx, live, client.PropagationPolicy(opts.Propagation)); {
	case apierrors.IsNotFound(err):
		return Change{Action: Gone}, nil
	case err != nil:
		return Change{}, fmt.Errorf("deleting %s: %w", inventory.Describe(ref), err)
	}
	return Change{Object: live, Action: Deleting}, nil
}

// customResources says which custom resources of the CRD remain, in any
// namespace, if any; read from the API server, not to start an informer.
// Every served version lists them all: the first is asked.
func (m *Manager) customResources(ctx context.Context, definition *unstructured.Unstructured) (string, error) {
	defined := crd.DefinedBy(definition)
	if len(defined.Served) == 0 {
		return "", nil
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: defined.Group, Version: defined.Served[0], Kind: defined.Kind + "List"})
	switch err := m.apiReader.List(ctx, list, client.Limit(1)); {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return "", nil
	case apierrors.IsForbidden(err):
		// What cannot be counted may be someone's data: keep it.
		return "the manager may not list its custom resources, which may remain", nil
	case err != nil:
		return "", fmt.Errorf("listing the custom resources of %s: %w", definition.GetName(), err)
	}
	if len(list.Items) > 0 {
		first := inventory.DescribeNamed(defined.Kind, list.Items[0].Namespace, list.Items[0].Name)
		return "custom resources of it remain, " + first + " among them", nil
	}
	return "", nil
}
