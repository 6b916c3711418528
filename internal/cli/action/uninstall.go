package action

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Uninstall is `kubectl kudo uninstall`: delete an Instance; its cleanup
// plan runs first, then what it applied goes.
type Uninstall struct {
	Instance string
	WaitOptions
	// Poll is how often a wait reads the cluster again.
	Poll time.Duration
	// Force ends the Instance's cleanup plan, as soon as it runs, so that
	// the manager removes what the Instance applied and lets it go.
	Force bool
}

// Run deletes the Instance and, with Wait, waits until it and everything
// it applied are gone: what the manager deletes before it lets the Instance
// go, and what the garbage collector deletes after.
func (a *Uninstall) Run(ctx context.Context, cfg Config) error {
	c := cfg.Client
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: a.Instance}, i); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("instance %s not found in namespace %s", a.Instance, cfg.Namespace)
		}
		return err
	}
	if err := clientutil.ReadRecord(ctx, c, i); err != nil {
		return err
	}
	// Read before the delete: an Instance without finalizer goes at once,
	// and its inventory with it.
	left := newLeftovers(i)
	if typed := typedapi.HolderOf(i); typed != nil {
		// The manager would make the Instance again: deleting the object
		// deletes it (the manager does, when the object keeps the record of
		// its cleanup; else the garbage collector).
		if err := c.Delete(ctx, typed); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s: %w", clientutil.TypedName(typed), err)
		}
		_, _ = fmt.Fprintf(cfg.Out, "%s deleted\n", clientutil.TypedName(typed))
	} else {
		if err := c.Delete(ctx, i); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Instance %s: %w", i.Name, err)
		}
		_, _ = fmt.Fprintf(cfg.Out, "instance.kudo.dev/%s deleted\n", i.Name)
	}
	if a.Force {
		if err := a.cancelCleanup(ctx, c, client.ObjectKeyFromObject(i), cfg.Out); err != nil {
			return err
		}
	}
	if !a.Wait {
		return nil
	}
	return a.waitForLeftovers(ctx, c, cfg.Out, left)
}

// cancelCleanup cancels the cleanup plan of the deleted Instance once it
// runs; an Instance that is gone, or whose cleanup ended, needs nothing.
func (a *Uninstall) cancelCleanup(ctx context.Context, c client.Client, key client.ObjectKey, out io.Writer) error {
	deadline := time.Now().Add(a.WaitTime)
	for {
		i := &kudov1beta1.Instance{}
		switch err := c.Get(ctx, key, i); {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		if err := clientutil.ReadRecord(ctx, c, i); err != nil {
			return err
		}
		if pe, err := engine.RequestCancel(i); err == nil {
			if err := writeRequest(ctx, c, i, pe, false); err != nil {
				return fmt.Errorf("cancelling plan %s of Instance %s: %w", pe.PlanName, i.Name, err)
			}
			_, err = fmt.Fprintf(out, "Cancelled plan %s of Instance %s\n", pe.PlanName, i.Name)
			return err
		}
		if ended, err := cleanupEnded(ctx, c, i); ended || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cleanup plan of Instance %s did not run within %s: nothing to cancel", i.Name, a.WaitTime)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(a.Poll):
		}
	}
}

// cleanupEnded: the Instance's cleanup plan ran to its end, or it has none.
func cleanupEnded(ctx context.Context, c client.Client, i *kudov1beta1.Instance) (bool, error) {
	ov := &kudov1beta1.OperatorVersion{}
	if err := c.Get(ctx, i.OperatorVersionKey(), ov); err != nil {
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	name, ok := engine.PlanForDelete(ov.Spec.Plans)
	if !ok {
		return true, nil
	}
	a := i.Status.ActivePlan
	return a != nil && a.Name == name && a.Status.IsTerminal(), nil
}

// waitForLeftovers reads what remains until nothing does, saying what it
// waits for whenever that changes, and at the end what the manager kept.
func (a *Uninstall) waitForLeftovers(ctx context.Context, c client.Client, out io.Writer, left *leftovers) error {
	deadline := time.Now().Add(a.WaitTime)
	said := ""
	for {
		waiting, err := left.read(ctx, c)
		if err != nil {
			return err
		}
		if len(waiting) == 0 {
			for _, k := range left.kept {
				_, _ = fmt.Fprintf(out, "kept %s: %s\n", describe(k.ref), k.reason)
			}
			return nil
		}
		if line := waitingFor(waiting); line != said {
			_, _ = fmt.Fprintln(out, line)
			said = line
		}
		if time.Now().After(deadline) {
			return timedOut(left.instance, waiting, a.WaitTime)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(a.Poll):
		}
	}
}

// maxNamed bounds how many objects a progress line names.
const maxNamed = 10

// waitingFor says what remains: "waiting for 3 objects: Instance zk,
// Deployment default/zk-web, ClusterRole zk-reader".
func waitingFor(refs []kudov1beta1.ObjectRef) string {
	objects := "objects"
	if len(refs) == 1 {
		objects = "object"
	}
	return fmt.Sprintf("waiting for %d %s: %s", len(refs), objects, names(refs))
}

// names lists the objects, at most maxNamed of them.
func names(refs []kudov1beta1.ObjectRef) string {
	named := make([]string, 0, min(len(refs), maxNamed)+1)
	for _, r := range refs[:min(len(refs), maxNamed)] {
		named = append(named, describe(r))
	}
	if len(refs) > maxNamed {
		named = append(named, fmt.Sprintf("and %d more", len(refs)-maxNamed))
	}
	return strings.Join(named, ", ")
}

// timedOut says what is still there after the wait, and where to look.
func timedOut(instance kudov1beta1.ObjectRef, waiting []kudov1beta1.ObjectRef, after time.Duration) error {
	if waiting[0] == instance {
		return fmt.Errorf("instance %s is still there after %s: see kubectl kudo plan status --instance %s -n %s",
			instance.Name, after, instance.Name, instance.Namespace)
	}
	return fmt.Errorf("instance %s is gone, but after %s objects it applied remain (%s): see kubectl get events -n %s",
		instance.Name, after, names(waiting), instance.Namespace)
}

// describe names an object as the manager's messages do: its kind,
// namespace and name.
func describe(r kudov1beta1.ObjectRef) string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}
