package chartrender

import (
	"fmt"
	"path"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/utils/clock"
)

// Capabilities is what .Capabilities says of the cluster a chart's objects
// go to, as `helm install` reads it from the cluster: its version, and each
// group/version and group/version/Kind it serves.
type Capabilities struct {
	KubeVersion string
	APIVersions []string
}

// Discover reads a cluster's Capabilities as Helm does (its action.GetVersionSet,
// which is not imported: Helm's action package would bring its release
// storage and registry clients into the manager's binary). A group whose
// discovery failed, an aggregated API that is down, is left out, as Helm
// leaves it.
func Discover(client discovery.DiscoveryInterface) (*Capabilities, error) {
	version, err := client.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's version: %w", err)
	}
	groups, resources, err := client.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("reading the cluster's API versions: %w", err)
	}
	var versions []string
	for _, g := range groups {
		for _, gv := range g.Versions {
			versions = append(versions, gv.GroupVersion)
		}
	}
	for _, r := range resources {
		for _, res := range r.APIResources {
			versions = append(versions, path.Join(r.GroupVersion, res.Kind))
		}
	}
	slices.Sort(versions)
	return &Capabilities{KubeVersion: version.GitVersion, APIVersions: slices.Compact(versions)}, nil
}

// Discovered are a cluster's Capabilities, read again once they are older
// than a while: a cluster's version and APIs change at its upgrades and
// when CRDs come and go, not from one render to the next.
type Discovered struct {
	client discovery.DiscoveryInterface
	ttl    time.Duration
	clock  clock.PassiveClock

	mu   sync.Mutex
	last *Capabilities
	err  error
	// next is when the cluster is asked again.
	next time.Time
}

// DiscoveryTTL is how long a cluster's Capabilities are used before they
// are read again: three requests to the cluster a minute, whatever the
// number of Instances, and a CRD a step installs is seen by the chart of
// a later step within a minute.
const DiscoveryTTL = time.Minute

// failedDiscoveryRetry is how long a cluster that could not say its
// Capabilities, and never did, is not asked again: the renders of all its
// Instances' charts in the meantime fail at once, not each after its own
// request timed out.
const failedDiscoveryRetry = 10 * time.Second

// NewDiscovered reads the Capabilities of client's cluster, at most once
// per ttl.
func NewDiscovered(client discovery.DiscoveryInterface, ttl time.Duration, c clock.PassiveClock) *Discovered {
	return &Discovered{client: client, ttl: ttl, clock: c}
}

// Get are the Capabilities as last read, read again when older than the
// ttl. When reading them again fails, the last read is kept for another
// ttl: it is better than none.
func (d *Discovered) Get() (*Capabilities, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock.Now()
	if now.Before(d.next) {
		return d.last, d.err
	}
	c, err := Discover(d.client)
	switch {
	case err == nil:
		d.last, d.err, d.next = c, nil, now.Add(d.ttl)
	case d.last != nil:
		d.next = now.Add(d.ttl)
	default:
		d.err, d.next = err, now.Add(failedDiscoveryRetry)
	}
	return d.last, d.err
}
