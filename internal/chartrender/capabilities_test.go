package chartrender

import (
	"errors"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

func fakeCluster() *fakediscovery.FakeDiscovery {
	return &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Kind: "Pod"}, {Name: "pods/status", Kind: "Pod"}}},
		{GroupVersion: "policy/v1", APIResources: []metav1.APIResource{{Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget"}}},
	}}, FakedServerVersion: &version.Info{GitVersion: "v1.34.4", Major: "1", Minor: "34"}}
}

// .Capabilities says what helm install reads of the cluster: its version,
// and each group/version and group/version/Kind it serves, once each.
func TestDiscoverReadsTheClusterAsHelmDoes(t *testing.T) {
	got, err := Discover(fakeCluster())
	if err != nil {
		t.Fatal(err)
	}
	want := &Capabilities{KubeVersion: "v1.34.4", APIVersions: []string{"policy/v1", "policy/v1/PodDisruptionBudget", "v1", "v1/Pod"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// A cluster is asked once per TTL, not at each render; when asking again
// fails, the last answer stands for another TTL.
func TestDiscoveredAsksTheClusterOncePerTTL(t *testing.T) {
	cluster := fakeCluster()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	d := NewDiscovered(cluster, time.Minute, clock)
	versionReads := func() int {
		n := 0
		for _, a := range cluster.Actions() {
			if a.GetResource().Resource == "version" {
				n++
			}
		}
		return n
	}
	get := func() *Capabilities {
		t.Helper()
		c, err := d.Get()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := get()
	get()
	if n := versionReads(); n != 1 {
		t.Fatalf("the cluster was asked %d times within its TTL, want once", n)
	}

	clock.SetTime(clock.Now().Add(time.Minute))
	cluster.PrependReactor("get", "version", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	if got := get(); got != first {
		t.Errorf("got %+v after a failed read, want the last answer", got)
	}
	get()
	if n := versionReads(); n != 2 {
		t.Errorf("the cluster was asked %d times, want 2: a failed read is not tried again at once", n)
	}

	never := NewDiscovered(cluster, time.Minute, clock)
	for range 2 {
		if _, err := never.Get(); err == nil || err.Error() != "reading the cluster's version: connection refused" {
			t.Errorf("got %v: a cluster never read, that fails, has no Capabilities", err)
		}
	}
	if n := versionReads(); n != 3 {
		t.Errorf("the cluster was asked %d times, want 3: a cluster that failed is not asked again at once", n)
	}
	clock.SetTime(clock.Now().Add(failedDiscoveryRetry))
	_, _ = never.Get()
	if n := versionReads(); n != 4 {
		t.Errorf("the cluster was asked %d times, want 4: asked again %s after it failed", n, failedDiscoveryRetry)
	}
}
