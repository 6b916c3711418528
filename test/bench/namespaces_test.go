package main

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestNamespacesHoldAtMostNamespaceInstancesEach(t *testing.T) {
	for _, tc := range []struct {
		n     int
		all   []string
		ofTop string
	}{
		{n: 100, all: []string{"scale-100-1"}, ofTop: "scale-100-1"},
		{n: 1000, all: []string{"scale-100-1"}, ofTop: "scale-100-1"},
		{n: 1001, all: []string{"scale-100-1-1", "scale-100-1-2"}, ofTop: "scale-100-1-2"},
		{n: 10000, all: []string{"scale-100-1-1", "scale-100-1-2", "scale-100-1-3", "scale-100-1-4", "scale-100-1-5",
			"scale-100-1-6", "scale-100-1-7", "scale-100-1-8", "scale-100-1-9", "scale-100-1-10"}, ofTop: "scale-100-1-10"},
	} {
		ns := namespaces{name: "scale-100-1", n: tc.n}
		if got := ns.all(); !slices.Equal(got, tc.all) {
			t.Errorf("%d Instances: namespaces %v, want %v", tc.n, got, tc.all)
		}
		if got := ns.of(tc.n - 1); got != tc.ofTop {
			t.Errorf("%d Instances: the last in %s, want %s", tc.n, got, tc.ofTop)
		}
		if got := ns.of(0); got != tc.all[0] {
			t.Errorf("%d Instances: the first in %s, want %s", tc.n, got, tc.all[0])
		}
	}
}

func TestNamespacesWatchOnlyTheirOwn(t *testing.T) {
	all := watch.NewFake()
	w := namespaces{name: "floor-10000-1", n: 2000}.only(all)
	defer w.Stop()
	go func() {
		for _, ns := range []string{"floor-1000-1", "floor-10000-1-2", "floor-10000-1", "floor-10000-1-1"} {
			all.Add(&kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "i-0000"}})
		}
		all.Error(&metav1.Status{Message: "too old"})
	}()
	var got []string
	for range 3 {
		ev := <-w.ResultChan()
		if obj, ok := ev.Object.(metav1.Object); ok {
			got = append(got, obj.GetNamespace())
		} else {
			got = append(got, string(ev.Type))
		}
	}
	if want := []string{"floor-10000-1-2", "floor-10000-1-1", string(watch.Error)}; !slices.Equal(got, want) {
		t.Errorf("events of %v, want %v", got, want)
	}
}
