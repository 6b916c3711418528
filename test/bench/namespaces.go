package main

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kudo-ng/kudo/test/localcluster"
)

// namespaceInstances is the most Instances (or objects of as many) a run
// puts in one namespace; -namespace-instances sets it. Kubernetes' own
// controllers list a namespace's pods, ReplicaSets and EndpointSlices on each
// sync of a Deployment or a Service (the Deployment, EndpointSlice and
// Endpoints controllers of kube-controller-manager 1.34, in its CPU profile
// at 3,000 in one namespace), so their work grows with the square of a
// namespace's workloads: 10,000 in one namespace would measure those lists,
// whoever applied the objects. A platform with thousands of Instances has
// them in a namespace per team or customer.
var namespaceInstances = 1000

// namespaces are the namespaces of one run's n Instances: the run's name
// alone up to namespaceInstances of them, and past it name-1, name-2, ...,
// namespaceInstances in each but the last.
type namespaces struct {
	name string
	n    int
}

// of is the namespace of the run's i-th Instance.
func (s namespaces) of(i int) string {
	if s.n <= namespaceInstances {
		return s.name
	}
	return fmt.Sprintf("%s-%d", s.name, i/namespaceInstances+1)
}

// all lists the run's namespaces.
func (s namespaces) all() []string {
	var all []string
	for i := 0; i < s.n; i += namespaceInstances {
		all = append(all, s.of(i))
	}
	return all
}

// create creates the run's namespaces.
func (s namespaces) create(ctx context.Context, c *localcluster.Cluster) error {
	for _, ns := range s.all() {
		if err := newNamespace(ctx, c, ns); err != nil {
			return err
		}
	}
	return nil
}

// delete deletes the run's namespaces and waits until each is gone.
func (s namespaces) delete(ctx context.Context, c *localcluster.Cluster) error {
	for _, ns := range s.all() {
		if err := deleteNamespace(ctx, c, ns); err != nil {
			return err
		}
	}
	return nil
}

// only passes on the events of w, a watch of every namespace, that are of
// the run's namespaces (and the watch's errors).
func (s namespaces) only(w watch.Interface) watch.Interface {
	all := s.all()
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		obj, ok := ev.Object.(metav1.Object)
		return ev, !ok || slices.Contains(all, obj.GetNamespace())
	})
}
