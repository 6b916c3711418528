package apimetrics

import (
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		method, target, contentType string
		verb, resource              string
	}{
		{"GET", "/api/v1/namespaces/ns/pods/p", "", "get", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods", "", "list", "pods"},
		{"GET", "/api/v1/pods?watch=true&resourceVersion=1", "", "watch", "pods"},
		{"GET", "/api/v1/namespaces", "", "list", "namespaces"},
		{"GET", "/api/v1/namespaces/ns", "", "get", "namespaces"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?watch=true", "", "watch", "deployments.apps"},
		{"POST", "/api/v1/namespaces/ns/events", "", "create", "events"},
		{"POST", "/api/v1/namespaces/ns/pods/p/exec?command=cat", "", "create", "pods/exec"},
		{"PUT", "/apis/kudo.dev/v1beta1/namespaces/ns/instances/i", "", "update", "instances.kudo.dev"},
		{"PATCH", "/apis/kudo.dev/v1beta1/namespaces/ns/instances/i/status", "application/merge-patch+json", "patch", "instances.kudo.dev/status"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/statefulsets/s?fieldManager=kudo-ng&force=true", "application/apply-patch+yaml", "apply", "statefulsets.apps"},
		{"PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com", "application/apply-patch+yaml", "apply", "customresourcedefinitions.apiextensions.k8s.io"},
		{"DELETE", "/api/v1/namespaces/ns/configmaps/c", "", "delete", "configmaps"},
		{"DELETE", "/api/v1/namespaces/ns/configmaps", "", "deletecollection", "configmaps"},
		{"GET", "/apis/authorization.k8s.io/v1", "", "get", "discovery"},
		{"GET", "/api", "", "get", "discovery"},
		{"GET", "/version", "", "get", "discovery"},
		{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", "create", "selfsubjectaccessreviews.authorization.k8s.io"},
	} {
		req := httptest.NewRequest(tc.method, tc.target, nil)
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		verb, resource := Classify(req)
		if verb != tc.verb || resource != tc.resource {
			t.Errorf("%s %s: got %s %s, want %s %s", tc.method, tc.target, verb, resource, tc.verb, tc.resource)
		}
	}
}

func TestWrapCounts(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer server.Close()
	before := counted("list", "configmaps")
	client := &http.Client{Transport: Wrap(http.DefaultTransport)}
	resp, err := client.Get(server.URL + "/api/v1/namespaces/ns/configmaps")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := counted("list", "configmaps") - before; got != 1 {
		t.Errorf("counted %v requests, want 1", got)
	}
}

func counted(verb, resource string) float64 {
	m := &dto.Metric{}
	if err := requests.WithLabelValues(verb, resource).Write(m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}
