package action

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/params"
	"github.com/kudo-ng/kudo/internal/preview"
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
	i, ov, changes, err := a.prepare(ctx, cfg)
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

// prepare reads the Instance and checks the new values against its
// OperatorVersion.
func (a *Update) prepare(ctx context.Context, cfg Config) (*kudov1beta1.Instance, *kudov1beta1.OperatorVersion, params.Assigned, error) {
	if len(a.Parameters) == 0 && len(a.ParameterFiles) == 0 {
		return nil, nil, params.Assigned{}, fmt.Errorf("nothing to update: give parameters with -p NAME=VALUE or -P FILE")
	}
	i, ov, err := clientutil.GetInstance(ctx, cfg.Client, cfg.Namespace, a.Instance)
	if err != nil {
		return nil, nil, params.Assigned{}, err
	}
	changes, err := a.Assign(params.Optional(ov.Spec.Parameters))
	return i, ov, changes, err
}

// Preview says what the update would do (previewer), writing nothing.
func (a *Update) Preview(ctx context.Context, cfg Config) (*preview.Report, error) {
	i, ov, changes, err := a.prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p := newPreviewer(cfg, nil)
	if typed := typedapi.HolderAt(i, ov); typed != nil {
		spec, err := clientutil.TypedChanges(changes, ov.Spec.Parameters)
		if err != nil {
			return nil, err
		}
		if err := clientutil.PatchTyped(ctx, p.dryRun, typed, spec); err != nil {
			return refused(&preview.Report{Instance: i.Name, Namespace: i.Namespace, OperatorVersion: ov.Name, Action: "update"}, err)
		}
	}
	after := i.DeepCopy()
	changes.ApplyTo(&after.Spec)
	return p.report(ctx, "update", i, after, ov, 0)
}
