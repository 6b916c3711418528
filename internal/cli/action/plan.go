package action

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/engine"
)

// PlanRequest is `kubectl kudo plan trigger|cancel|retry`: a request to an
// Instance's manager in spec.planExecution, as engine's protocol writes it.
type PlanRequest struct {
	Instance string
	// Plan is the plan Trigger asks for.
	Plan string
}

// Requested is a plan run asked for: the Instance as patched, its
// OperatorVersion (what a wait reads the plan from) and the run's plan.
type Requested struct {
	Instance        *kudov1beta1.Instance
	OperatorVersion *kudov1beta1.OperatorVersion
	Plan            string
}

// Trigger asks for the plan with a fresh uid, as KUDO's plan trigger does.
func (a *PlanRequest) Trigger(ctx context.Context, cfg Config) (*Requested, error) {
	i, ov, err := ReadInstance(ctx, cfg.Client, cfg.Namespace, a.Instance)
	if err != nil {
		return nil, err
	}
	if _, ok := ov.Spec.Plans[a.Plan]; !ok {
		return nil, fmt.Errorf("plan %q is not defined by OperatorVersion %s", a.Plan, ov.Name)
	}
	return a.write(ctx, cfg, "triggering", i, ov, engine.RequestRun(a.Plan, uuid.NewUUID()), false)
}

// Cancel cancels the running plan.
func (a *PlanRequest) Cancel(ctx context.Context, cfg Config) (*Requested, error) {
	i, ov, err := ReadInstance(ctx, cfg.Client, cfg.Namespace, a.Instance)
	if err != nil {
		return nil, err
	}
	pe, err := engine.RequestCancel(i)
	if err != nil {
		return nil, err
	}
	return a.write(ctx, cfg, "cancelling", i, ov, pe, false)
}

// Retry resumes the last plan run, which failed, from its failed steps: the
// steps it completed do not run again. It is asked of the run as it was
// read: a run that changed since fails the request.
func (a *PlanRequest) Retry(ctx context.Context, cfg Config) (*Requested, error) {
	i, ov, err := ReadInstance(ctx, cfg.Client, cfg.Namespace, a.Instance)
	if err != nil {
		return nil, err
	}
	pe, err := engine.RequestRetry(i)
	if err != nil {
		return nil, err
	}
	return a.write(ctx, cfg, "retrying", i, ov, pe, true)
}

// ReadInstance reads the Instance a plan verb's --instance names, and its
// OperatorVersion, with errors that say what to do.
func ReadInstance(ctx context.Context, c client.Reader, ns, name string) (*kudov1beta1.Instance, *kudov1beta1.OperatorVersion, error) {
	if name == "" {
		return nil, nil, fmt.Errorf("--instance is required")
	}
	return clientutil.GetInstance(ctx, c, ns, name)
}

// write writes the request (writeRequest); doing names it in an error.
func (a *PlanRequest) write(ctx context.Context, cfg Config, doing string, i *kudov1beta1.Instance,
	ov *kudov1beta1.OperatorVersion, pe kudov1beta1.PlanExecution, locked bool) (*Requested, error) {
	if err := writeRequest(ctx, cfg.Client, i, pe, locked); err != nil {
		return nil, fmt.Errorf("%s plan %s: %w", doing, pe.PlanName, err)
	}
	return &Requested{Instance: i, OperatorVersion: ov, Plan: pe.PlanName}, nil
}

// writeRequest patches spec.planExecution; locked, it fails if the
// Instance changed since it was read.
func writeRequest(ctx context.Context, c client.Client, i *kudov1beta1.Instance, pe kudov1beta1.PlanExecution, locked bool) error {
	var opts []client.MergeFromOption
	if locked {
		opts = append(opts, client.MergeFromWithOptimisticLock{})
	}
	patch := client.MergeFromWithOptions(i.DeepCopy(), opts...)
	i.Spec.PlanExecution = pe
	return c.Patch(ctx, i, patch)
}
