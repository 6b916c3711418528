package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUnreachable(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://prod.example.com:6443/api", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"none", nil, false},
		{"a connection refused", refused, true},
		{"a connection refused, wrapped", fmt.Errorf("task deploy: applying ConfigMap settings: %w", refused), true},
		{"a cache that did not sync", fmt.Errorf("waiting for the cache of ConfigMap to sync: %w", context.DeadlineExceeded), true},
		{"a refusal", apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "settings", errors.New("no")), false},
		{"an invalid object", apierrors.NewBadRequest("spec.replicas: must be positive"), false},
		{"a template that does not render", errors.New("template deployment.yaml: map has no entry for key"), false},
	} {
		if got := Unreachable(tt.err); got != tt.want {
			t.Errorf("%s: Unreachable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
