package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/typedapi"
	"github.com/kudo-ng/kudo/test/localcluster"
)

func typedNamespace(n, run int) namespaces {
	return namespaces{name: fmt.Sprintf("typed-%d-%d", n, run+1), n: n}
}

// typedRuns runs a size as often as its plain runs with typed objects of
// the scale package in place of Instances (docs/typed-apis.md), each alone
// in the cluster as the plain ones are: each object makes its Instance,
// whose plan runs as a plain one's, and a run ends when every typed
// object's status shows deploy COMPLETE.
func typedRuns(ctx context.Context, c *localcluster.Cluster, m *manager, pkg *packages.Package, n, count int) (*SideRun, error) {
	names, err := typedapi.NamesOf(pkg.Operator.Name, pkg.Operator.TypedAPI)
	if err != nil {
		return nil, err
	}
	runs := make([]*SideRun, count)
	for k := range runs {
		// Each run's: the cluster may be new (resetCluster).
		dyn, err := dynamic.NewForConfig(c.Config)
		if err != nil {
			return nil, err
		}
		ns := typedNamespace(n, k)
		objects := dyn.Resource(names.GroupVersionResource())
		// Before the clock starts: the manager serves the kind once the
		// OperatorVersion exists.
		served := func(ctx context.Context) error {
			return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				_, err := objects.List(ctx, metav1.ListOptions{Limit: 1})
				return err == nil, nil
			})
		}
		s, err := scaleRun(ctx, c, m, pkg, ns, "", served, createTyped(objects, names))
		if err != nil {
			return nil, err
		}
		logf("scale %d, typed run %d: all COMPLETE in %.2fs, CPU %.1fs, peak RSS %.0f MiB, requests %v",
			n, k+1, s.Seconds, s.CPUSeconds, s.PeakRSSMiB, s.Requests)
		runs[k] = sideRunOf(s)
		if err := resetCluster(ctx, c, m, ns); err != nil {
			return nil, err
		}
	}
	return medianSideRun(runs), nil
}

// createTyped creates the typed objects, 32 at a time as the Instances of
// the plain runs, and waits until each one's status shows deploy COMPLETE.
func createTyped(objects dynamic.NamespaceableResourceInterface, names typedapi.Names) creator {
	return func(ctx context.Context, _ watch.Interface, ns namespaces, ov string) error {
		n := ns.n
		all, err := unstructuredWatch(ctx, objects)
		if err != nil {
			return err
		}
		w := ns.only(all)
		defer w.Stop()
		complete := make(chan error, 1)
		go func() {
			complete <- untilDone(ctx, w, n, 10*time.Minute, names.Plural, func(obj runtime.Object) (string, bool, error) {
				u, ok := obj.(*unstructured.Unstructured)
				if !ok {
					return "", false, nil
				}
				switch status, _, _ := unstructured.NestedString(u.Object, "status", "planStatus", "deploy", "status"); status {
				case "COMPLETE":
					return u.GetName(), true, nil
				case "FATAL_ERROR":
					return "", false, fmt.Errorf("%s %s/%s: deploy failed", names.Kind, u.GetNamespace(), u.GetName())
				}
				return "", false, nil
			})
		}()
		create, cctx := errgroup.WithContext(ctx)
		create.SetLimit(32)
		for i := range n {
			create.Go(func() error {
				obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{typedapi.OperatorVersionField: ov}}}
				obj.SetGroupVersionKind(names.GroupVersionKind())
				obj.SetName(scaleInstanceName(i))
				_, err := objects.Namespace(ns.of(i)).Create(cctx, obj, metav1.CreateOptions{})
				return err
			})
		}
		if err := create.Wait(); err != nil {
			return err
		}
		return <-complete
	}
}
