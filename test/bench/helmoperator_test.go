package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestAPICounterCountsWhatPassesThroughItByVerbAndResource(t *testing.T) {
	var seen []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.RequestURI())
		_, _ = w.Write([]byte("{}"))
	}))
	defer server.Close()
	counter, err := startAPICounter(&rest.Config{Host: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer counter.stop()
	kubeconfig, err := counter.writeKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct{ method, path, contentType string }{
		{http.MethodGet, "/api/v1/namespaces/a/secrets?labelSelector=owner%3Dhelm", ""},
		{http.MethodGet, "/api/v1/namespaces/a/secrets/sh.helm.release.v1.x.v1", ""},
		{http.MethodPost, "/apis/apps/v1/namespaces/a/deployments", "application/json"},
		{http.MethodPatch, "/apis/apps/v1/namespaces/a/deployments/x", "application/apply-patch+yaml"},
		{http.MethodPut, "/apis/bench.kudo-ng.dev/v1/namespaces/a/scaleapps/x/status", "application/json"},
		{http.MethodGet, "/apis", ""},
	} {
		r, err := http.NewRequest(req.method, cfg.Host+req.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", req.contentType)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	want := apiCalls{
		{"list", "secrets"}: 1, {"get", "secrets"}: 1, {"create", "deployments.apps"}: 1,
		{"apply", "deployments.apps"}: 1, {"update", "scaleapps.bench.kudo-ng.dev/status"}: 1, {"get", "discovery"}: 1,
	}
	got := counter.snapshot()
	if len(got) != len(want) {
		t.Errorf("counted %v, want %v", got, want)
	}
	for call, n := range want {
		if got[call] != n {
			t.Errorf("%v: counted %v, want %v", call, got[call], n)
		}
	}
	if len(seen) != 6 || seen[0] != "GET /api/v1/namespaces/a/secrets?labelSelector=owner%3Dhelm" {
		t.Errorf("the API server got %v, want the 6 requests as sent", seen)
	}
}

func TestDeployed(t *testing.T) {
	app := func(conditions ...map[string]any) *unstructured.Unstructured {
		list := make([]any, len(conditions))
		for i, c := range conditions {
			list[i] = c
		}
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": list}}}
		u.SetName("i-0001")
		return u
	}
	tests := []struct {
		name    string
		app     *unstructured.Unstructured
		want    bool
		wantErr bool
	}{
		{"no status yet", app(), false, false},
		{"initialized only", app(map[string]any{"type": "Initialized", "status": "True"}), false, false},
		{"deployed", app(map[string]any{"type": "Initialized", "status": "True"},
			map[string]any{"type": "Deployed", "status": "True", "reason": "InstallSuccessful"}), true, false},
		{"release failed", app(map[string]any{"type": "ReleaseFailed", "status": "True", "message": "boom"}), false, true},
	}
	for _, tt := range tests {
		name, ok, err := deployed(tt.app)
		if ok != tt.want || (err != nil) != tt.wantErr || (ok && name != "i-0001") {
			t.Errorf("%s: deployed = %q, %t, %v; want %t, error %t", tt.name, name, ok, err, tt.want, tt.wantErr)
		}
	}
}
