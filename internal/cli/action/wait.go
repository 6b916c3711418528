// Package action is what the kubectl kudo verbs that change the cluster do,
// as Helm's pkg/action: Install, Upgrade, Update, Rollback, Uninstall and
// PlanRequest are structs of their options whose methods act with a Config
// and return what they changed; the verbs' packages are flags and output
// over them. Also what verbs share: the versions a package installs
// prepared and written, their signatures checked, the wait for the plan a
// change asked for.
package action

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/trust"
)

// Wait waits until the plan the Instance runs, or was asked to run, ends,
// printing its progress to out; a failed plan is an error.
func Wait(ctx context.Context, c client.Client, ns string, out io.Writer, instance string, timeout time.Duration) error {
	i, ov, err := clientutil.GetInstance(ctx, c, ns, instance)
	if err != nil {
		return err
	}
	return WaitFor(ctx, c, out, Waiting{Timeout: timeout, Poll: 250 * time.Millisecond}, i, ov, WriteProgress)
}

// Waiting is how long a wait lasts, and how often it looks again.
type Waiting struct {
	Timeout, Poll time.Duration
}

// Reporter prints what a wait sees change between two reads of the
// Instance; last is nil on the first.
type Reporter func(out io.Writer, last, cur *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error

// WriteProgress prints a line for each change of the awaited run and its
// steps (the verbs that change an Instance and wait).
func WriteProgress(out io.Writer, last, cur *kudov1beta1.Instance, _ *kudov1beta1.OperatorVersion) error {
	for _, line := range Progress(last, cur) {
		if _, err := fmt.Fprintln(out, line); err != nil {
			return err
		}
	}
	return nil
}

// WaitFor reports the Instance, then each change of it, until the plan it
// was last asked to run ends; a failed plan is an error.
func WaitFor(ctx context.Context, c client.Client, out io.Writer, w Waiting,
	last *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion, report Reporter) error {
	if err := report(out, nil, last, ov); err != nil {
		return err
	}
	deadline := time.Now().Add(w.Timeout)
	for !engine.Settled(last) {
		if why, ok := CannotRun(last); ok {
			return fmt.Errorf("the manager runs no plan of Instance %s: %s", last.Name, why)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("plan %s of Instance %s has not finished after %s", engine.AwaitedPlan(last), last.Name, w.Timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(w.Poll):
		}
		i, ov, err := clientutil.GetInstance(ctx, c, last.Namespace, last.Name)
		if err != nil {
			return err
		}
		if err := report(out, last, i, ov); err != nil {
			return err
		}
		last = i
	}
	if last.Status.ActivePlan != nil && last.Status.ActivePlan.Status == kudov1beta1.ExecutionFatalError {
		ps := last.Status.PlanStatus[last.Status.ActivePlan.Name]
		return fmt.Errorf("plan %s failed: %s", ps.Name, ps.Message)
	}
	return nil
}

// CannotRun says why the manager, having seen the Instance's spec, runs no
// plan of it until someone changes its package or the cluster's trust in
// it: an OperatorVersion that cannot run, or that a TrustPolicy refuses.
func CannotRun(i *kudov1beta1.Instance) (string, bool) {
	ready := meta.FindStatusCondition(i.Status.Conditions, kudov1beta1.ReadyCondition)
	if ready == nil || ready.Status != metav1.ConditionFalse || i.Status.ObservedGeneration != i.Generation {
		return "", false
	}
	switch ready.Reason {
	case kudov1beta1.InvalidReason, trust.UnsignedReason:
		return ready.Message, true
	}
	return "", false
}
