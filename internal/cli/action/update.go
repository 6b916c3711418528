package action

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Update is `kubectl kudo update`: change an Instance's parameters, which
// runs the plan they trigger.
type Update struct {
	ParameterOptions
	Instance string
}

// Run checks the new values against the OperatorVersion, then patches them:
// into the Instance, or into the typed object that makes it.
func (a *Update) Run(ctx context.Context, cfg Config) (*Change, error) {
	if len(a.Parameters) == 0 && len(a.ParameterFiles) == 0 {
		return nil, fmt.Errorf("nothing to update: give parameters with -p NAME=VALUE or -P FILE")
	}
	i, ov, err := clientutil.GetInstance(ctx, cfg.Client, cfg.Namespace, a.Instance)
	if err != nil {
		return nil, err
	}
	changes, err := a.Assign(params.Optional(ov.Spec.Parameters))
	if err != nil {
		return nil, err
	}
	clientutil.WarnPlainSensitive(cfg.ErrOut, changes, ov.Spec.Parameters)
	if typed := typedapi.HolderAt(i, ov); typed != nil {
		spec, err := clientutil.TypedChanges(changes, ov.Spec.Parameters)
		if err != nil {
			return nil, err
		}
		if err := clientutil.PatchTyped(ctx, cfg.Client, typed, spec); err != nil {
			return nil, err
		}
		return typedChange(i, typed, changes.AppliedTo), nil
	}
	patch := client.MergeFrom(i.DeepCopy())
	changes.ApplyTo(&i.Spec)
	if err := cfg.Client.Patch(ctx, i, patch); err != nil {
		return nil, fmt.Errorf("updating Instance %s: %w", i.Name, err)
	}
	return instanceChange(i), nil
}
