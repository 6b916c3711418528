package clientutil

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	kudocrd "github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// ReadRecord reads into the status of the Instance the record its typed
// object holds, if it runs one (typedapi.ReadRecord): the plans and
// inventory of an Instance that runs a typed object are in the object's
// status.
func ReadRecord(ctx context.Context, c client.Reader, i *kudov1beta1.Instance) error {
	_, err := typedapi.ReadRecord(ctx, c, i, nil)
	return err
}

// TypedName is how kubectl names a typed object: kind.group/name.
func TypedName(obj *unstructured.Unstructured) string {
	return strings.ToLower(obj.GetKind()) + "." + obj.GroupVersionKind().Group + "/" + obj.GetName()
}

// TypedChanges is the change of a typed object's spec that sets what
// changes would set in an Instance's of an OperatorVersion with parameters:
// a field each, or a Secret key in secretParameters.
func TypedChanges(changes params.Assigned, parameters []kudov1beta1.Parameter) (map[string]any, error) {
	spec, err := typedapi.SpecValues(changes.Values, parameters)
	if err != nil {
		return nil, err
	}
	secrets := map[string]any{}
	for name := range changes.Values {
		// A value given replaces a Secret key named before.
		secrets[name] = nil
	}
	for name, ref := range changes.Secrets {
		secrets[name] = map[string]any{"name": ref.Name, "key": ref.Key}
	}
	if len(secrets) > 0 {
		spec[typedapi.SecretParametersField] = secrets
	}
	return spec, nil
}

// TypedReplacement is the change of a typed object's spec that makes its
// Instance's parameters values and its Secret keys secrets, where it has
// had oldSecrets: what a rollback returns to.
func TypedReplacement(values map[string]string, secrets, oldSecrets map[string]kudov1beta1.SecretKeyReference,
	parameters []kudov1beta1.Parameter) (map[string]any, error) {
	spec, err := typedapi.SpecValues(values, parameters)
	if err != nil {
		return nil, err
	}
	for _, p := range parameters {
		if _, set := values[p.Name]; !set {
			spec[typedapi.FieldOf(p.Name)] = nil
		}
	}
	refs := map[string]any{}
	for name := range oldSecrets {
		refs[name] = nil
	}
	for name, ref := range secrets {
		refs[name] = map[string]any{"name": ref.Name, "key": ref.Key}
	}
	if len(refs) > 0 {
		spec[typedapi.SecretParametersField] = refs
	}
	return spec, nil
}

// PatchTyped merges spec into the typed object's spec.
func PatchTyped(ctx context.Context, c client.Client, obj *unstructured.Unstructured, spec map[string]any) error {
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("changing %s: %w", TypedName(obj), err)
	}
	return nil
}

// typedSchemaWait bounds how long a new OperatorVersion's fields take to
// appear in the typed API's schema: the manager serves it at once.
const typedSchemaWait = 30 * time.Second

// AwaitTypedFields waits until the typed API of obj has the fields: the
// API server prunes a field its schema does not have, and the manager adds
// a new OperatorVersion's parameters to it once the OperatorVersion exists.
func AwaitTypedFields(ctx context.Context, c client.Client, obj *unstructured.Unstructured, fields []string) error {
	// The kind's resource, at any version: the one obj is at may be served
	// only once the manager has seen a new OperatorVersion.
	mapping, err := c.RESTMapper().RESTMapping(obj.GroupVersionKind().GroupKind())
	if err != nil {
		return err
	}
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(kudocrd.V1)
	name := mapping.Resource.Resource + "." + mapping.Resource.Group
	var missing []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, typedSchemaWait, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		missing = fields
		served := false
		for _, v := range versions {
			version, _ := v.(map[string]any)
			if version["name"] != obj.GroupVersionKind().Version {
				continue
			}
			properties, _, _ := unstructured.NestedMap(version, "schema", "openAPIV3Schema", "properties", "spec", "properties")
			served, missing = true, nil
			for _, f := range fields {
				if _, ok := properties[f]; !ok {
					missing = append(missing, f)
				}
			}
		}
		return served && len(missing) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("the typed API %s does not serve %s with the fields %s yet: is the kudo-ng manager running? (%w)",
			name, obj.GroupVersionKind().Version, strings.Join(missing, ", "), err)
	}
	return nil
}

// AwaitInstanceOf waits until the Instance a typed object makes has what
// the object was changed to (applied): the manager writes it after the
// object, and a wait for its plan must see the change first.
func AwaitInstanceOf(
	ctx context.Context, c client.Client, typed *unstructured.Unstructured, applied func(*kudov1beta1.Instance) bool,
) error {
	i := &kudov1beta1.Instance{}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, typedSchemaWait, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(typed), i); err != nil {
			return false, err
		}
		return applied(i), nil
	})
	if err != nil {
		return fmt.Errorf("the Instance of %s does not have its change yet: is the kudo-ng manager running? (%w)", TypedName(typed), err)
	}
	return nil
}
