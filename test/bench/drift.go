package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/localcluster"
)

const (
	driftNamespace = "drift"
	driftInstances = 100
	// driftDeletes is how many deletes are in flight at once.
	driftDeletes = 10
	driftTimeout = 2 * time.Minute
	// driftObject names the ConfigMap of an Instance's settings.yaml in the
	// scale package: nothing refers to it, unlike the one of config.yaml,
	// which the Deployment's pods take their environment from.
	driftObject = "%s-settings"
)

// Drift is how long drift correction took to re-create an object of an
// Instance deleted behind the manager's back.
type Drift struct {
	Instances int
	// Kind and Name are what was deleted of each Instance.
	Kind, Name string
	// Recreate is from the deletion until a watch saw the object again.
	Recreate Distribution
}

// measureRecreate deletes one object of each of driftInstances Instances
// with drift correction on, and times its re-creation by the manager. Its
// namespaces are gone again when it returns, so that later measurements do
// not count its Instances.
func measureRecreate(ctx context.Context, c *localcluster.Cluster, m *manager) (*Drift, error) {
	run := namespaces{name: driftNamespace, n: driftInstances}
	d, err := recreateRun(ctx, c, m, run)
	if err != nil {
		return nil, err
	}
	// The Instances go first: with them still there, drift correction would
	// apply again what the namespace's deletion deletes.
	for _, ns := range run.all() {
		if err := deleteInstances(ctx, c, ns); err != nil {
			return nil, err
		}
	}
	return d, run.delete(ctx, c)
}

func recreateRun(ctx context.Context, c *localcluster.Cluster, m *manager, run namespaces) (*Drift, error) {
	pkg, err := packages.Read(filepath.Join(c.Root, scalePackage))
	if err != nil {
		return nil, err
	}
	ov, instances, err := installAndWatch(ctx, c, pkg, run)
	if err != nil {
		return nil, err
	}
	defer instances.Stop()
	annotations := map[string]string{kudov1beta1.DriftCorrectionAnnotation: "true"}
	if err := createInstances(ctx, c, instances, run, ov, annotations, nil); err != nil {
		return nil, err
	}
	// Deleted while the manager still works on the Instances' readiness and
	// events, the objects would wait for that work too.
	if _, err := m.settled(ctx, time.Second, 5*time.Minute); err != nil {
		return nil, err
	}

	configMaps := &corev1.ConfigMapList{}
	all, err := listWatch(ctx, c, configMaps, "")
	if err != nil {
		return nil, err
	}
	w := run.only(all)
	defer w.Stop()
	uids := map[string]types.UID{}
	ours := run.all()
	for _, cm := range configMaps.Items {
		if slices.Contains(ours, cm.Namespace) {
			uids[cm.Name] = cm.UID
		}
	}
	objs := make([]recreation, driftInstances)
	for i := range objs {
		name := fmt.Sprintf(driftObject, scaleInstanceName(i))
		uid, ok := uids[name]
		if !ok {
			return nil, fmt.Errorf("instance %s/%s applied no ConfigMap %s: has the scale package's settings.yaml changed?",
				run.of(i), scaleInstanceName(i), name)
		}
		objs[i] = recreation{name: name, uid: uid}
	}

	logf("drift: deleting %d ConfigMaps, %d at a time", len(objs), driftDeletes)
	seen := make(chan error, 1)
	go func() { seen <- untilRecreated(ctx, w, objs, driftTimeout) }()
	dctx, cancel := context.WithTimeout(ctx, driftTimeout)
	defer cancel()
	del, gctx := errgroup.WithContext(dctx)
	del.SetLimit(driftDeletes)
	for i := range objs {
		del.Go(func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: run.of(i), Name: objs[i].name}}
			if err := c.Client.Delete(gctx, cm); err != nil {
				return fmt.Errorf("deleting ConfigMap %s/%s: %w", cm.Namespace, objs[i].name, err)
			}
			objs[i].deleted = time.Now()
			return nil
		})
	}
	if err := del.Wait(); err != nil {
		return nil, err
	}
	if err := <-seen; err != nil {
		return nil, err
	}
	seconds, missing := recreateSeconds(objs)
	if len(missing) > 0 {
		return nil, fmt.Errorf("%d of %d ConfigMaps deleted in %s were not re-created within %s (%s): see the manager's log, %s",
			len(missing), len(objs), strings.Join(run.all(), ", "), driftTimeout, strings.Join(missing, ", "), m.log)
	}
	d := &Drift{Instances: driftInstances, Kind: "ConfigMap", Name: fmt.Sprintf(driftObject, "<instance>"), Recreate: distribution(seconds)}
	logf("drift: %d ConfigMaps re-created, median %.3fs, p95 %.3fs", len(seconds), d.Recreate.Median, d.Recreate.P95)
	return d, nil
}

// recreation is an object deleted behind the manager's back: its name and
// UID, when its delete call returned, and when the bench's watch saw it go
// and come back with another UID.
type recreation struct {
	name                string
	uid                 types.UID
	deleted, gone, back time.Time
}

// recreateSeconds is the time each object took to come back, and the names
// of those that did not. The time runs from the delete call's return or, if
// the watch saw the object go first (the deleting goroutine can run late on
// busy cores), from then: never from after the watch saw it back.
func recreateSeconds(objs []recreation) (seconds []float64, missing []string) {
	for _, r := range objs {
		if r.deleted.IsZero() || r.back.IsZero() {
			missing = append(missing, r.name)
			continue
		}
		from := r.deleted
		if !r.gone.IsZero() && r.gone.Before(from) {
			from = r.gone
		}
		seconds = append(seconds, r.back.Sub(from).Seconds())
	}
	slices.Sort(missing)
	return seconds, missing
}

// untilRecreated reads a watch of the objects until all have come back or
// the timeout has passed, and notes when each went and came back.
func untilRecreated(ctx context.Context, w watch.Interface, objs []recreation, timeout time.Duration) error {
	byName := make(map[string]*recreation, len(objs))
	for i := range objs {
		byName[objs[i].name] = &objs[i]
	}
	deadline := time.After(timeout)
	for back := 0; back < len(objs); {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the watch of ConfigMaps ended")
			}
			now := time.Now()
			if ev.Type == watch.Error {
				return fmt.Errorf("watching ConfigMaps: %w", apierrors.FromObject(ev.Object))
			}
			obj, ok := ev.Object.(client.Object)
			if !ok {
				continue
			}
			r := byName[obj.GetName()]
			switch {
			case r == nil:
			case ev.Type == watch.Deleted && obj.GetUID() == r.uid && r.gone.IsZero():
				r.gone = now
			case ev.Type != watch.Deleted && obj.GetUID() != r.uid && r.back.IsZero():
				r.back = now
				back++
			}
		case <-deadline:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// deleteInstances deletes the Instances of a namespace and waits until the
// manager has let them go.
func deleteInstances(ctx context.Context, c *localcluster.Cluster, ns string) error {
	if err := c.Client.DeleteAllOf(ctx, &kudov1beta1.Instance{}, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("deleting the Instances of %s: %w", ns, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &kudov1beta1.InstanceList{}
		err := c.Client.List(ctx, list, client.InNamespace(ns))
		return err == nil && len(list.Items) == 0, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the Instances of %s to be deleted: %w", ns, err)
	}
	return nil
}
