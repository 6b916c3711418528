package webhook

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// maxObjectsRead bounds the typed objects an OperatorVersion's admission
// reads, per version, to find those its breaking changes would break, in
// the time an admission has.
const maxObjectsRead = 10_000

// checkEvolution refuses an OperatorVersion whose typed API would break
// the values of existing objects (typedapi.Breaks, typedapi.Affected),
// with a report naming each field and the rule it breaks, unless it
// accepts them (typedapi.AcceptBreakingChangesAnnotation). Breaks no
// object holds a value for are warnings.
func (w *operatorVersions) checkEvolution(ctx context.Context, ov *kudov1beta1.OperatorVersion) (admission.Warnings, error) {
	versions := &kudov1beta1.OperatorVersionList{}
	if err := w.instances.List(ctx, versions, client.InNamespace(ov.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the OperatorVersions of the namespace: %w", err)
	}
	breaks, err := typedapi.Breaks(versions.Items, ov)
	if err != nil {
		return nil, fmt.Errorf("spec.typedAPI.version: %w", err)
	}
	if len(breaks) == 0 {
		return nil, nil
	}
	names, err := typedapi.NamesOf(ov.Spec.Operator.Name, ov.Spec.TypedAPI)
	if err != nil {
		return nil, nil
	}
	objects := map[string][]map[string]any{}
	for _, b := range breaks {
		if _, read := objects[b.From]; !read {
			if objects[b.From], err = w.typedObjects(ctx, names.GroupVersionKind().GroupKind().WithVersion(b.From)); err != nil {
				return nil, err
			}
		}
	}
	affected := typedapi.Affected(breaks, objects, ov.Namespace)
	accepted := ov.Annotations[typedapi.AcceptBreakingChangesAnnotation] == "true"
	if len(affected) == 0 || accepted {
		warnings := make(admission.Warnings, 0, len(breaks))
		for _, b := range breaks {
			warnings = append(warnings, fmt.Sprintf("typed API %s: %s", names.CRDName(), b))
		}
		return warnings, nil
	}
	return nil, fmt.Errorf("OperatorVersion %s would break the typed API %s, whose objects hold values it would lose or reject, "+
		"and no conversion rule covers it:\n  %s\nAdd the rules (docs/typed-apis.md), or accept it knowingly: "+
		"kubectl kudo install/upgrade --accept-breaking-changes (the annotation %s: \"true\")",
		ov.Name, names.CRDName(), strings.Join(affected, "\n  "), typedapi.AcceptBreakingChangesAnnotation)
}

// typedObjects are the objects of the kind at the version, as JSON holds
// them, read from the API server a page at a time; none when the kind is
// not served at it.
func (w *operatorVersions) typedObjects(ctx context.Context, gvk schema.GroupVersionKind) ([]map[string]any, error) {
	var objects []map[string]any
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	for {
		err := w.instances.List(ctx, list, client.Limit(500), client.Continue(list.GetContinue()))
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing the %s objects: %w", gvk.Kind, err)
		}
		for _, item := range list.Items {
			objects = append(objects, item.Object)
		}
		if list.GetContinue() == "" || len(objects) >= maxObjectsRead {
			return objects, nil
		}
	}
}
