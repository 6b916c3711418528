package clientutil

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestGetInstance(t *testing.T) {
	instance := func(name, ov string) *kudov1beta1.Instance {
		return &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov}},
		}
	}
	c := fake.NewClientBuilder().WithScheme(Scheme).WithObjects(
		&kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0.1.0"}},
		instance("web", "web-0.1.0"), instance("orphan", "gone-0.1.0"),
	).Build()
	tests := []struct {
		name, instance, wantErr string
	}{
		{"both found", "web", ""},
		{"no Instance", "ghost", "Instance ghost not found in namespace ns: see kubectl kudo get instances -n ns"},
		{"no OperatorVersion", "orphan", "OperatorVersion gone-0.1.0 of Instance orphan not found in namespace ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, ov, err := GetInstance(context.Background(), c, "ns", tt.instance)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if i.Name != tt.instance || ov.Name != i.Spec.OperatorVersion.Name {
				t.Errorf("got Instance %s and OperatorVersion %s", i.Name, ov.Name)
			}
		})
	}
}

// TestGetInstanceFindsTheOperatorVersionInSpecOperatorVersionNamespace: the
// CLI verbs (plan, update, upgrade, completion) find the OperatorVersion where
// spec.operatorVersion.namespace says, not one of the same name beside the
// Instance, and say where they looked when it is missing.
func TestGetInstanceFindsTheOperatorVersionInSpecOperatorVersionNamespace(t *testing.T) {
	instance := func(name, ov string) *kudov1beta1.Instance {
		return &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov, Namespace: "shared"}},
		}
	}
	c := fake.NewClientBuilder().WithScheme(Scheme).WithObjects(
		&kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "shared", Name: "web-0.1.0"}, Spec: kudov1beta1.OperatorVersionSpec{Version: "0.1.0"}},
		&kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web-0.1.0"}, Spec: kudov1beta1.OperatorVersionSpec{Version: "decoy"}},
		&kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "gone-0.1.0"}},
		instance("web", "web-0.1.0"), instance("orphan", "gone-0.1.0"),
	).Build()

	_, ov, err := GetInstance(context.Background(), c, "apps", "web")
	if err != nil {
		t.Fatal(err)
	}
	if ov.Namespace != "shared" || ov.Spec.Version != "0.1.0" {
		t.Errorf("got OperatorVersion %s/%s version %s, want shared/web-0.1.0", ov.Namespace, ov.Name, ov.Spec.Version)
	}
	_, _, err = GetInstance(context.Background(), c, "apps", "orphan")
	if want := "OperatorVersion gone-0.1.0 of Instance orphan not found in namespace shared"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}
