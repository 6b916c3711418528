package objects

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// TestAShardAppliesNothingOverAnObjectItsCacheDoesNotHold: a shard's cache
// holds only its own objects, so a user's unlabelled ConfigMap of the name a
// template renders is not in it; the API server has it, and applying the
// template is a conflict that writes nothing. A manager whose cache holds
// every object (no ConfirmMisses) would take its cache's word, as the second
// case shows, and apply.
func TestAShardAppliesNothingOverAnObjectItsCacheDoesNotHold(t *testing.T) {
	users := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "demo-settings"},
		Data: map[string]string{"mine": "yes"}}
	owner := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "demo", UID: "uid-demo"}}
	for _, confirm := range []bool{true, false} {
		patched := false
		cached := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
				patched = true
				return nil
			},
		}).Build()
		apiServer := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(users.DeepCopy()).Build()
		m := NewManager(owner, cached, Options{APIReader: apiServer, ConfirmMisses: confirm})

		rendered := &unstructured.Unstructured{}
		rendered.SetAPIVersion("v1")
		rendered.SetKind("ConfigMap")
		rendered.SetNamespace("shop")
		rendered.SetName("demo-settings")
		_, err := m.Apply(context.Background(), rendered)
		switch {
		case confirm && (err == nil || !strings.Contains(err.Error(), "ConfigMap shop/demo-settings")):
			t.Errorf("a shard applied over an object its cache does not hold: %v", err)
		case confirm && patched:
			t.Error("a shard wrote the user's ConfigMap")
		case !confirm && (err != nil || !patched):
			t.Errorf("a manager that caches every object read its cache and did not apply: %v", err)
		}
	}
}

// TestAShardReadsAMissFromTheAPIServerTrimmed: what a shard reads past its
// cache is trimmed as the cache would hold it: no managed fields, a
// Secret's data as its digest.
func TestAShardReadsAMissFromTheAPIServerTrimmed(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "creds"},
		Data: map[string][]byte{"password": []byte("hunter2")}}
	apiServer := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(secret).Build()
	cached := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	m := NewManager(&kudov1beta1.Instance{}, cached, Options{APIReader: apiServer, ConfirmMisses: true, Trim: Trim{DigestKey: []byte("k")}})
	got := &unstructured.Unstructured{}
	got.SetAPIVersion("v1")
	got.SetKind("Secret")
	if err := m.Read(context.Background(), client.ObjectKeyFromObject(secret), got); err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(got.Object, "data")
	if _, digested := data[SecretDigestKey]; !digested || len(data) != 1 || len(got.GetManagedFields()) != 0 {
		t.Errorf("read past the cache untrimmed: data %v, managed fields %v", data, got.GetManagedFields())
	}
}
