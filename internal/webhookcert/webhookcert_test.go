package webhookcert

import (
	"encoding/base64"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestIssueServesTheServiceForItsValidity(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	b, err := Issue("kudo-webhook-service", "kudo-system", now)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, service, namespace string
		at                       time.Time
		valid                    bool
	}{
		{"the Service, now", "kudo-webhook-service", "kudo-system", now, true},
		{"the Service, in nine years", "kudo-webhook-service", "kudo-system", now.Add(9 * 365 * 24 * time.Hour), true},
		{"the Service, a day before it expires", "kudo-webhook-service", "kudo-system", now.Add(validity - time.Hour), false},
		{"another Service", "other", "kudo-system", now, false},
		{"another namespace", "kudo-webhook-service", "default", now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := b.Verify(tt.service, tt.namespace, tt.at); (err == nil) != tt.valid {
				t.Errorf("Verify = %v, want valid %v", err, tt.valid)
			}
		})
	}
	other, err := Issue("kudo-webhook-service", "kudo-system", now)
	if err != nil {
		t.Fatal(err)
	}
	mixed := &Bundle{CA: other.CA, Cert: b.Cert, Key: b.Key}
	if mixed.Verify("kudo-webhook-service", "kudo-system", now) == nil {
		t.Error("a certificate another CA signed verifies")
	}
}

func TestTrust(t *testing.T) {
	webhooks := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
			"metadata": map[string]any{"name": "validating-webhook-configuration",
				"annotations": map[string]any{InjectCAAnnotation: "kudo-system/serving-cert"}},
			"webhooks": []any{map[string]any{"name": "v.kudo.dev", "clientConfig": map[string]any{
				"service": map[string]any{"name": "kudo-webhook-service", "namespace": "kudo-system", "path": "/validate"}}}},
		}}
	}
	certificate := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Certificate"}}
	deployment := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	service := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service"}}
	ca := []byte("CA PEM")
	caBundle := base64.StdEncoding.EncodeToString(ca)

	tests := []struct {
		name        string
		url         string
		wantService bool
		wantURL     string
		wantName    string
	}{
		{"in the cluster", "", true, "", "validating-webhook-configuration"},
		{"a manager outside it", "https://127.0.0.1:9443", false, "https://127.0.0.1:9443/validate", "kudo-validating-webhook-configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Trust([]*unstructured.Unstructured{certificate, webhooks(), deployment, service}, tt.url, ca)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) < 2 || got[1] != deployment || (len(got) == 3) != tt.wantService {
				t.Fatalf("Trust kept %d objects, want the webhook configuration, the Deployment, and the Service in the cluster", len(got))
			}
			w := got[0]
			if w.GetName() != tt.wantName {
				t.Errorf("name = %s, want %s", w.GetName(), tt.wantName)
			}
			if _, ok := w.GetAnnotations()[InjectCAAnnotation]; ok {
				t.Error("cert-manager's CA injection is kept")
			}
			config := w.Object["webhooks"].([]any)[0].(map[string]any)["clientConfig"].(map[string]any)
			if config["caBundle"] != caBundle {
				t.Errorf("caBundle = %v", config["caBundle"])
			}
			if _, ok := config["service"]; ok != tt.wantService {
				t.Errorf("service kept: %v, want %v", ok, tt.wantService)
			}
			if url, _ := config["url"].(string); url != tt.wantURL {
				t.Errorf("url = %q, want %q", url, tt.wantURL)
			}
		})
	}
}
