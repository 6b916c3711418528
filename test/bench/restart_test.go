package main

import "testing"

// TestAccessReviewsAreNoWrites: a restarted manager reviews its access to
// each kind it watches, a create the API server does not store; a status
// patch is a write.
func TestAccessReviewsAreNoWrites(t *testing.T) {
	calls := apiCalls{
		{"create", "selfsubjectaccessreviews.authorization.k8s.io"}: 10,
		{"list", "configmaps"}: 1,
	}
	if got := calls.storedWrites(); got != 0 {
		t.Errorf("access reviews count as %v writes", got)
	}
	calls[apiCall{"patch", "instances.kudo.dev/status"}] = 2
	if got := calls.storedWrites(); got != 2 {
		t.Errorf("storedWrites = %v, want the 2 status patches", got)
	}
}
