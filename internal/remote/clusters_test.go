package remote

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// started is a Clusters running until the test ends.
func started(t *testing.T) (*Clusters, *[]*Cluster) {
	t.Helper()
	var stoppedClusters []*Cluster
	c := &Clusters{Policy: allowed, Stopped: func(cl *Cluster) { stoppedClusters = append(stoppedClusters, cl) }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	for {
		c.mu.Lock()
		running := c.base != nil
		c.mu.Unlock()
		if running {
			return c, &stoppedClusters
		}
		time.Sleep(time.Millisecond)
	}
}

var (
	db    = types.NamespacedName{Namespace: "team-a", Name: "db"}
	queue = types.NamespacedName{Namespace: "team-a", Name: "queue"}
	prod  = Ref{Namespace: "team-a", Secret: "prod-kubeconfig", Key: kudov1beta1.DefaultKubeConfigKey}
)

func TestAClusterRunsWhileAnInstanceNamesIt(t *testing.T) {
	c, stoppedClusters := started(t)
	kc := []byte(kubeconfig("https://prod.example.com:6443", "", ""))
	first, err := c.Use(db, prod, kc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Use(queue, prod, kc)
	if err != nil {
		t.Fatal(err)
	}
	if again != first || c.Running() != 1 {
		t.Fatalf("two Instances of one kubeconfig: %d clusters, the same: %v", c.Running(), again == first)
	}
	if first.Server != "https://prod.example.com:6443" || first.Ref != prod {
		t.Errorf("cluster %s of %s, want prod's", first.Server, first.Ref)
	}
	c.Release(db)
	if c.Running() != 1 {
		t.Fatalf("one Instance left: %d clusters running", c.Running())
	}
	c.Release(queue)
	if c.Running() != 0 || len(*stoppedClusters) != 1 || (*stoppedClusters)[0] != first {
		t.Fatalf("no Instance left: %d clusters running, %d stopped", c.Running(), len(*stoppedClusters))
	}
	select {
	case <-first.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cluster's cache did not stop")
	}
}

func TestARotatedKubeconfigReplacesItsCluster(t *testing.T) {
	c, stoppedClusters := started(t)
	kc := []byte(kubeconfig("https://prod.example.com:6443", "", ""))
	rotated := []byte(strings.Replace(string(kc), "token: abc", "token: def", 1))
	old, err := c.Use(db, prod, kc)
	if err != nil {
		t.Fatal(err)
	}
	made, err := c.Use(queue, prod, rotated)
	if err != nil {
		t.Fatal(err)
	}
	if made == old || made.GetConfig().BearerToken != "def" || c.Running() != 1 || len(*stoppedClusters) != 1 {
		t.Fatalf("rotated: a new cluster %v, token %q, %d running, %d stopped", made != old, made.GetConfig().BearerToken,
			c.Running(), len(*stoppedClusters))
	}
	if now, err := c.Use(db, prod, rotated); err != nil || now != made {
		t.Fatalf("the Instance of the old cluster moved to the new one: %v, %v", now == made, err)
	}
	c.Release(db)
	if c.Running() != 1 {
		t.Fatal("the new cluster stopped while an Instance names it")
	}
}

func TestABadKubeconfigStartsNothing(t *testing.T) {
	c, _ := started(t)
	_, err := c.Use(db, prod, []byte(kubeconfig("https://kubernetes.default.svc", "", "")))
	if err == nil || !strings.HasPrefix(err.Error(), prod.String()+": ") || c.Running() != 0 {
		t.Fatalf("Use = %v, %d running; want an error naming %s", err, c.Running(), prod)
	}
}

func TestNoClusterBeforeTheManagerStarts(t *testing.T) {
	c := &Clusters{Policy: allowed}
	if _, err := c.Use(db, prod, []byte(kubeconfig("https://prod.example.com:6443", "", ""))); !errors.Is(err, errNotStarted) {
		t.Fatalf("Use = %v, want %v", err, errNotStarted)
	}
}

// A namespace cannot make the manager keep a cache for each of a thousand
// kubeconfigs.
func TestANamespaceNamesBoundedClusters(t *testing.T) {
	c, _ := started(t)
	c.MaxPerNamespace = 2
	kc := []byte(kubeconfig("https://prod.example.com:6443", "", ""))
	for n, secret := range []string{"a", "b"} {
		user := types.NamespacedName{Namespace: "team-a", Name: secret}
		if _, err := c.Use(user, Ref{Namespace: "team-a", Secret: secret, Key: kudov1beta1.DefaultKubeConfigKey}, kc); err != nil {
			t.Fatalf("cluster %d: %v", n+1, err)
		}
	}
	third := Ref{Namespace: "team-a", Secret: "c", Key: kudov1beta1.DefaultKubeConfigKey}
	_, err := c.Use(types.NamespacedName{Namespace: "team-a", Name: "c"}, third, kc)
	if err == nil || !strings.Contains(err.Error(), "name 2 clusters already") {
		t.Fatalf("a third cluster: %v, want it refused", err)
	}
	other := Ref{Namespace: "team-b", Secret: "c", Key: kudov1beta1.DefaultKubeConfigKey}
	if _, err := c.Use(types.NamespacedName{Namespace: "team-b", Name: "c"}, other, kc); err != nil {
		t.Fatalf("another namespace's first cluster: %v", err)
	}
}
