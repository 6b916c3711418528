package controllers

import (
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/task"
)

// defaultServiceAccount is whom an Instance without spec.serviceAccountName
// acts as with --multi-tenant: the service account every namespace has, as
// Flux's --default-service-account.
const defaultServiceAccount = "default"

// serviceAccountUser is the user name the API server gives a ServiceAccount.
func serviceAccountUser(namespace, name string) string {
	return fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
}

// identity is whom the manager acts as for an Instance.
type identity struct {
	// writer applies and deletes the Instance's objects, and reads the
	// manager's cache, as the manager watches every Instance's objects with
	// its own informers.
	writer client.Client
	// reader reads what the cache does not hold (the Secrets of secret
	// parameters) from the API server.
	reader client.Reader
	// files copies the files of Pipe tasks out of their pods.
	files task.FileCopier
}

// serviceAccountOf is the service account the Instance's work runs as; ""
// for the manager itself, which only a single-tenant manager acts as.
func (r *InstanceReconciler) serviceAccountOf(i *kudov1beta1.Instance) string {
	if i.Spec.ServiceAccountName == "" && r.MultiTenant {
		return defaultServiceAccount
	}
	return i.Spec.ServiceAccountName
}

// identityFor is the manager itself, or the Instance's service account,
// impersonated.
func (r *InstanceReconciler) identityFor(i *kudov1beta1.Instance) (identity, error) {
	account := r.serviceAccountOf(i)
	if account == "" {
		return identity{writer: r.Client, reader: r.APIReader, files: r.Files}, nil
	}
	user := serviceAccountUser(i.Namespace, account)
	if id, ok := r.impersonated.Get(user); ok {
		return id.(identity), nil
	}
	cfg := rest.CopyConfig(r.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	writer, err := client.New(cfg, client.Options{
		Scheme: r.Scheme, Mapper: r.Mapper, Cache: &client.CacheOptions{Reader: r.cache, Unstructured: true},
	})
	if err != nil {
		return identity{}, fmt.Errorf("a client for service account %s: %w", user, err)
	}
	reader, err := client.New(cfg, client.Options{Scheme: r.Scheme, Mapper: r.Mapper})
	if err != nil {
		return identity{}, fmt.Errorf("a client for service account %s: %w", user, err)
	}
	id := identity{writer: writer, reader: reader, files: r.Files}
	if files, ok := r.Files.(task.ImpersonatingCopier); ok {
		id.files = files.As(user)
	}
	r.impersonated.Add(user, id, impersonatedFor)
	return id, nil
}
