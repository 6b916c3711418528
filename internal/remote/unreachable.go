package remote

import (
	"context"
	"errors"
	"net"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
)

// Unreachable says whether err is of a cluster that did not answer: a
// connection refused, reset or timed out, a discovery or a cache sync that
// could not finish. An answer of the API server, a refusal included, is not.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false
	}
	var (
		netErr       net.Error
		urlErr       *url.Error
		discoveryErr *discovery.ErrGroupDiscoveryFailed
	)
	return errors.As(err, &netErr) || errors.As(err, &urlErr) || errors.As(err, &discoveryErr) ||
		errors.Is(err, context.DeadlineExceeded)
}
