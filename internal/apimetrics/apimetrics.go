// Package apimetrics counts the manager's requests to the API server by verb
// and resource, as the API server's authorizer names them. client-go's
// rest_client_requests_total knows only the HTTP method, which does not tell
// a get from a list or a watch, nor an apply from another patch.
package apimetrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var requests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kudo_ng_api_requests_total",
	Help: "Requests of the manager to the Kubernetes API server, by verb and resource.",
}, []string{"verb", "resource"})

func init() {
	metrics.Registry.MustRegister(requests)
}

// Wrap counts the requests of a transport; it is a rest.Config WrapTransport.
func Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper{next: next}
}

type roundTripper struct{ next http.RoundTripper }

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	requests.WithLabelValues(Classify(req)).Inc()
	return r.next.RoundTrip(req)
}

// Classify returns a request's verb (get, list, watch, create, update, patch,
// apply, delete, deletecollection) and resource (plural, group-qualified,
// with its subresource: "deployments.apps", "instances.kudo.dev/status").
// Discovery and other non-resource requests are verb get of "discovery".
func Classify(req *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return "get", "discovery"
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	resource = parts[0]
	if group != "" {
		resource += "." + group
	}
	named := len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true":
			return "watch", resource
		case named:
			return "get", resource
		}
		return "list", resource
	case http.MethodPost:
		return "create", resource
	case http.MethodPut:
		return "update", resource
	case http.MethodPatch:
		if req.Header.Get("Content-Type") == "application/apply-patch+yaml" {
			return "apply", resource
		}
		return "patch", resource
	case http.MethodDelete:
		if named {
			return "delete", resource
		}
		return "deletecollection", resource
	}
	return strings.ToLower(req.Method), resource
}
