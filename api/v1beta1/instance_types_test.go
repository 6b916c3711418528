package v1beta1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestOperatorVersionKeyIsInTheReferencedNamespaceOrTheInstances(t *testing.T) {
	tests := []struct {
		name string
		ref  corev1.ObjectReference
		want types.NamespacedName
	}{
		{"no namespace: the Instance's", corev1.ObjectReference{Name: "web-0.1.0"}, types.NamespacedName{Namespace: "apps", Name: "web-0.1.0"}},
		{"another namespace", corev1.ObjectReference{Name: "web-0.1.0", Namespace: "shared"}, types.NamespacedName{Namespace: "shared", Name: "web-0.1.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := &Instance{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}, Spec: InstanceSpec{OperatorVersion: tt.ref}}
			if got := i.OperatorVersionKey(); got != tt.want {
				t.Errorf("OperatorVersionKey() = %v, want %v", got, tt.want)
			}
			if got := i.OperatorVersionNamespace(); got != tt.want.Namespace {
				t.Errorf("OperatorVersionNamespace() = %q, want %q", got, tt.want.Namespace)
			}
		})
	}
}
