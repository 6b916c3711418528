package action

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Rollback is `kubectl kudo rollback` (kudo-ng): return an Instance to the
// OperatorVersion and parameters of an earlier plan run, which runs the
// plan KUDO runs for that change of spec.
type Rollback struct {
	Instance string
	// Revision is the revision to return to; 0: the newest completed one
	// whose spec is not the Instance's.
	Revision int64
}

// Run checks that the revision can be returned to, then patches the spec;
// it returns the change and the revision returned to.
func (a *Rollback) Run(ctx context.Context, cfg Config) (*Change, *kudov1beta1.Revision, error) {
	i, current, err := clientutil.GetInstance(ctx, cfg.Client, cfg.Namespace, a.Instance)
	if err != nil {
		return nil, nil, err
	}
	sensitive := params.Sensitive(current.Spec.Parameters, i.Spec.SecretParameters)
	target, err := engine.RollbackTarget(i, a.Revision, sensitive)
	if err != nil {
		return nil, nil, err
	}
	ov := &kudov1beta1.OperatorVersion{}
	key := client.ObjectKey{Namespace: i.OperatorVersionKey().Namespace, Name: target.OperatorVersion}
	if err := cfg.Client.Get(ctx, key, ov); err != nil {
		return nil, nil, fmt.Errorf("revision %d ran OperatorVersion %s, which cannot be read (%w): install it again to roll back to it",
			target.Number, target.OperatorVersion, err)
	}
	values, err := restoredValues(i, target, sensitive)
	if err != nil {
		return nil, nil, err
	}
	if err := checkImmutable(current, i, values, target); err != nil {
		return nil, nil, err
	}
	if typed := typedapi.HolderAt(i, ov); typed != nil {
		if err := rollbackTyped(ctx, cfg.Client, typed, i, ov, target, values); err != nil {
			return nil, nil, err
		}
		return typedChange(i, typed, nil), target, nil
	}
	patch := client.MergeFromWithOptions(i.DeepCopy(), client.MergeFromWithOptimisticLock{})
	i.Spec.OperatorVersion.Name = target.OperatorVersion
	i.Spec.Parameters = values
	i.Spec.SecretParameters = maps.Clone(target.SecretParameters)
	if err := cfg.Client.Patch(ctx, i, patch); err != nil {
		return nil, nil, fmt.Errorf("rolling Instance %s back to revision %d: %w", i.Name, target.Number, err)
	}
	return instanceChange(i), target, nil
}

// rollbackTyped returns the typed object that makes the Instance to the
// revision, and waits until its Instance has it: the manager writes the
// Instance's spec.
func rollbackTyped(ctx context.Context, c client.Client, typed *unstructured.Unstructured, i *kudov1beta1.Instance,
	ov *kudov1beta1.OperatorVersion, target *kudov1beta1.Revision, values map[string]string) error {
	spec, err := clientutil.TypedReplacement(values, target.SecretParameters, i.Spec.SecretParameters, ov.Spec.Parameters)
	if err != nil {
		return err
	}
	if err := clientutil.AwaitTypedFields(ctx, c, typed, slices.Collect(maps.Keys(spec))); err != nil {
		return err
	}
	spec[typedapi.OperatorVersionField] = target.OperatorVersion
	if err := clientutil.PatchTyped(ctx, c, typed, spec); err != nil {
		return err
	}
	// The API server defaults the fields the revision did not set.
	restored := params.Assigned{Values: values, Secrets: target.SecretParameters}
	return clientutil.AwaitInstanceOf(ctx, c, typed, func(got *kudov1beta1.Instance) bool {
		return got.Spec.OperatorVersion.Name == target.OperatorVersion && restored.AppliedTo(got)
	})
}

// restoredValues are the spec.parameters of the revision: its values, but
// those taken from Secrets, which it names instead. A sensitive value the
// revision recorded masked is the Instance's own, when that is the one it
// ran with; kudo-ng keeps no other. Only the manager can make a mask: the
// mask of the Instance's value is the one the status recorded
// (engine.RecordedSpec), when it recorded the Instance's spec.
func restoredValues(i *kudov1beta1.Instance, target *kudov1beta1.Revision, sensitive map[string]bool) (map[string]string, error) {
	spec, known := engine.RecordedSpec(i, sensitive)
	values := map[string]string{}
	for name, v := range target.Parameters {
		if _, fromSecret := target.SecretParameters[name]; fromSecret {
			continue
		}
		if params.IsMasked(v) {
			now, set := i.Spec.Parameters[name]
			if set && !known {
				return nil, fmt.Errorf("parameter %s is sensitive, and the Instance's status does not tell yet whether "+
					"revision %d ran with the value it has: the last plan did not start from its spec as it is now "+
					"(a plan started from an earlier one runs, or the manager has not taken this one yet); "+
					"roll back once no plan runs, or set it again with kubectl kudo update -p %s=VALUE and roll back then",
					name, target.Number, name)
			}
			if !set || spec[name] != v {
				return nil, fmt.Errorf("parameter %s is sensitive: revision %d ran with another value than the Instance has, "+
					"which kudo-ng does not keep; set it again with kubectl kudo update -p %s=VALUE (or keep it in a Secret: "+
					"-p %s=%sSECRET/KEY) and roll back then", name, target.Number, name, name, params.SecretPrefix)
			}
			v = now
		}
		values[name] = v
	}
	return values, nil
}

// checkImmutable refuses a rollback that would change an immutable
// parameter of the current OperatorVersion, as admission would.
func checkImmutable(current *kudov1beta1.OperatorVersion, i *kudov1beta1.Instance, values map[string]string,
	target *kudov1beta1.Revision) error {
	now, then := params.Declared(i.Spec.Parameters, i.Spec.SecretParameters), params.Declared(values, target.SecretParameters)
	for _, p := range current.Spec.Parameters {
		if !ptr.Deref(p.Immutable, false) {
			continue
		}
		before, after := now[p.Name], then[p.Name]
		if before == after {
			continue
		}
		if p.IsSensitive() {
			return fmt.Errorf("parameter %s is immutable: revision %d ran with another value than the Instance has, "+
				"and rollback cannot change it", p.Name, target.Number)
		}
		return fmt.Errorf("parameter %s is immutable: revision %d ran with %q, the Instance has %q, and rollback cannot change it",
			p.Name, target.Number, after, before)
	}
	return nil
}
