package action

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	values, err := engine.RestoredValues(i, target, sensitive)
	if err != nil {
		return nil, nil, err
	}
	if err := engine.CheckImmutableKept(current, i, values, target); err != nil {
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
