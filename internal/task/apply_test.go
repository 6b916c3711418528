package task

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// TestAdmitSeesEveryObjectFirst: the controller's finalizer goes on
// before any object of the task is applied, and a refusal applies none.
func TestAdmitSeesEveryObjectFirst(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse error
	}{
		{"allowed: all applied", nil},
		{"refused: none applied", errors.New("the Instance is being deleted")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, c := pipeEnv(t, nil)
			ov := env.Site.OperatorVersion
			ov.Spec.Templates["role.yaml"] = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n"
			ov.Spec.Templates["config.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config}\n"
			var seen []string
			env.Admit = func(_ string, objs []*unstructured.Unstructured) error {
				for _, obj := range objs {
					seen = append(seen, obj.GetKind()+" "+obj.GetNamespace()+"/"+obj.GetName())
					if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), &unstructured.Unstructured{Object: obj.Object}); !apierrors.IsNotFound(err) {
						t.Errorf("%s was applied before Admit: %v", obj.GetName(), err)
					}
				}
				return tc.refuse
			}
			task := &kudov1beta1.Task{Name: "app", Kind: kudov1beta1.ApplyTaskKind,
				Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: []string{"role.yaml", "config.yaml"}}}}
			_, err := apply{}.Run(context.Background(), task, env)
			if !errors.Is(err, tc.refuse) {
				t.Fatalf("Run: %v, want %v", err, tc.refuse)
			}
			if want := []string{"ClusterRole /reader", "ConfigMap ns/config"}; !slices.Equal(seen, want) {
				t.Errorf("Admit saw %v, want %v", seen, want)
			}
			roleErr := c.Get(context.Background(), client.ObjectKey{Name: "reader"}, &rbacv1.ClusterRole{})
			configErr := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "config"}, &corev1.ConfigMap{})
			if applied := roleErr == nil && configErr == nil; applied != (tc.refuse == nil) {
				t.Errorf("applied: ClusterRole %v, ConfigMap %v", roleErr, configErr)
			}
		})
	}
}
