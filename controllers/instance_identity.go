package controllers

import (
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// serviceAccountUser is the user name the API server gives a ServiceAccount.
func serviceAccountUser(namespace, name string) string {
	return fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
}

// writerFor is the client an Instance's objects are applied and deleted
// with: the manager's own, or, when the Instance names a service account,
// one that impersonates it for every write and reads the manager's cache,
// as the manager watches every Instance's objects with its own informers.
func (r *InstanceReconciler) writerFor(i *kudov1beta1.Instance) (client.Client, error) {
	if i.Spec.ServiceAccountName == "" {
		return r.Client, nil
	}
	user := serviceAccountUser(i.Namespace, i.Spec.ServiceAccountName)
	if c, ok := r.impersonated.Load(user); ok {
		return c.(client.Client), nil
	}
	cfg := rest.CopyConfig(r.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{
		Scheme: r.Scheme, Mapper: r.Mapper, Cache: &client.CacheOptions{Reader: r.cache, Unstructured: true},
	})
	if err != nil {
		return nil, fmt.Errorf("a client for service account %s: %w", user, err)
	}
	actual, _ := r.impersonated.LoadOrStore(user, c)
	return actual.(client.Client), nil
}
