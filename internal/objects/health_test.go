package objects

import (
	"context"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kudo-ng/kudo/internal/health"
)

func TestHealthOfPendingClaims(t *testing.T) {
	class := func(name string, mode *storagev1.VolumeBindingMode) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "example.com/disks", VolumeBindingMode: mode}
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		class("wait", ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)),
		class("immediate", ptr.To(storagev1.VolumeBindingImmediate)),
		class("unset", nil),
	).Build()
	claim := func(class, phase string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "data"},
			"spec": map[string]any{"storageClassName": class}, "status": map[string]any{"phase": phase},
		}}
	}
	const waiting = "waiting for PersistentVolumeClaim data: PVC is not Bound. phase: Pending"
	tests := []struct {
		name  string
		claim *unstructured.Unstructured
		want  health.Result
	}{
		{"Pending on a class that binds on first consumer: healthy, as only a later step's pod can bind it", claim("wait", "Pending"),
			health.Result{Healthy: true, Message: "PersistentVolumeClaim data is Pending until a pod uses it " +
				"(StorageClass wait binds on first consumer); counted healthy"}},
		{"Pending on a class that binds at once: waited for", claim("immediate", "Pending"), health.Result{Message: waiting}},
		{"Pending on a class that leaves the mode to its default, Immediate: waited for", claim("unset", "Pending"), health.Result{Message: waiting}},
		{"Pending on a class that does not exist: waited for, and says why", claim("gone", "Pending"),
			health.Result{Message: waiting + ` (its StorageClass gone cannot be read: storageclasses.storage.k8s.io "gone" not found)`}},
		{"Bound: healthy", claim("wait", "Bound"), health.Result{Healthy: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewManager(instanceA, c, Options{}).check(context.Background(), "app", tt.claim)
			if got.Healthy != tt.want.Healthy || got.Message != tt.want.Message {
				t.Errorf("check = %+v\nwant    %+v", got, tt.want)
			}
		})
	}
}
