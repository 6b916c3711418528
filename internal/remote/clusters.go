package remote

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// Ref names a kubeconfig: a key of a Secret. Instances of one namespace
// that name the same Ref share one Cluster.
type Ref struct {
	Namespace, Secret, Key string
}

// String names the Secret and its key, as errors and statuses say it.
func (r Ref) String() string {
	return fmt.Sprintf("Secret %s/%s key %s", r.Namespace, r.Secret, r.Key)
}

// Cluster is a remote cluster as the manager reaches it: a client, a cache
// and a REST mapper of its own.
type Cluster struct {
	cluster.Cluster
	// Ref is the kubeconfig it was made from.
	Ref Ref
	// Server is its API server's URL.
	Server string

	digest [sha256.Size]byte
	users  sets.Set[types.NamespacedName]
	cancel context.CancelFunc
	done   chan struct{}
}

// Clusters are the remote clusters Instances name, each started when an
// Instance first names it and stopped when none does any more. Clusters
// is a manager Runnable: it stops every cluster when the manager stops.
type Clusters struct {
	// Options make the client and cache of the cluster of a kubeconfig, as
	// the manager's own; nil: controller-runtime's defaults.
	Options func(Ref) cluster.Options
	// Policy is where the manager may connect.
	Policy Policy
	// MaxPerNamespace bounds the clusters the Instances of one namespace
	// name at once, each a cache and connections of the manager's; zero:
	// DefaultMaxPerNamespace.
	MaxPerNamespace int
	// Stopped, when set, is told of a cluster once it stopped, so that
	// what was kept for it (its watches) goes too. It is called with the
	// Clusters locked: it must not call them.
	Stopped func(*Cluster)

	mu    sync.Mutex
	base  context.Context
	byRef map[Ref]*Cluster
	users map[types.NamespacedName]*Cluster
}

var errNotStarted = errors.New("remote clusters are not reachable before the manager started")

// DefaultMaxPerNamespace is how many clusters the Instances of a namespace
// may name at once: more kubeconfig Secrets, each its own cache, would let
// one namespace fill the manager's memory.
const DefaultMaxPerNamespace = 16

// Start runs until ctx is done, then stops every cluster.
func (c *Clusters) Start(ctx context.Context) error {
	c.mu.Lock()
	c.base = ctx
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.byRef {
		c.stopLocked(cl)
	}
	return nil
}

// Use is the cluster the kubeconfig under ref reaches, for Instance user:
// the one running already while kubeconfig is the same; else one made from
// it and started, which the Instances of the old one use from then on (a
// rotated credential), and the old stops.
func (c *Clusters) Use(user types.NamespacedName, ref Ref, kubeconfig []byte) (*Cluster, error) {
	digest := sha256.Sum256(kubeconfig)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base == nil {
		return nil, errNotStarted
	}
	if cl := c.users[user]; cl != nil && cl.Ref != ref {
		c.releaseLocked(user)
	}
	old := c.byRef[ref]
	if old != nil && old.digest == digest && !stopped(old) {
		old.users.Insert(user)
		c.users[user] = old
		return old, nil
	}
	if old == nil {
		if err := c.roomIn(ref.Namespace); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
	}
	cfg, err := RESTConfig(kubeconfig, ref.String(), c.Policy)
	if err != nil {
		return nil, err
	}
	made, err := cluster.New(cfg, func(o *cluster.Options) {
		if c.Options != nil {
			*o = c.Options(ref)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	ctx, cancel := context.WithCancel(c.base)
	cl := &Cluster{Cluster: made, Ref: ref, Server: cfg.Host, digest: digest, users: sets.New(user),
		cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(cl.done)
		_ = made.Start(ctx) // an unreachable server fails each read, which says so
	}()
	if old != nil {
		cl.users = cl.users.Union(old.users)
		c.stopLocked(old)
	}
	if c.byRef == nil {
		c.byRef, c.users = map[Ref]*Cluster{}, map[types.NamespacedName]*Cluster{}
	}
	c.byRef[ref] = cl
	for u := range cl.users {
		c.users[u] = cl
	}
	return cl, nil
}

// roomIn refuses one more cluster for namespace past MaxPerNamespace.
func (c *Clusters) roomIn(namespace string) error {
	limit := c.MaxPerNamespace
	if limit == 0 {
		limit = DefaultMaxPerNamespace
	}
	n := 0
	for ref := range c.byRef {
		if ref.Namespace == namespace {
			n++
		}
	}
	if n >= limit {
		return fmt.Errorf("the Instances of namespace %s name %d clusters already, as many as the manager keeps for one namespace",
			namespace, limit)
	}
	return nil
}

// Release says that Instance user names no cluster any more: a cluster no
// Instance names stops.
func (c *Clusters) Release(user types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseLocked(user)
}

// Running is how many clusters run, for tests and metrics.
func (c *Clusters) Running() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byRef)
}

func (c *Clusters) releaseLocked(user types.NamespacedName) {
	cl := c.users[user]
	if cl == nil {
		return
	}
	delete(c.users, user)
	cl.users.Delete(user)
	if cl.users.Len() == 0 {
		c.stopLocked(cl)
	}
}

func (c *Clusters) stopLocked(cl *Cluster) {
	if c.byRef[cl.Ref] == cl {
		delete(c.byRef, cl.Ref)
	}
	cl.cancel()
	if c.Stopped != nil {
		c.Stopped(cl)
	}
}

// stopped says whether the cluster's cache stopped on its own.
func stopped(cl *Cluster) bool {
	select {
	case <-cl.done:
		return true
	default:
		return false
	}
}
