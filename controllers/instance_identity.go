package controllers

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/remote"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/render/migrate"
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

// identity is whom the manager acts as for an Instance, and where: this
// cluster, or the one its spec.kubeConfig names (instance_remote.go).
type identity struct {
	// writer applies and deletes the Instance's objects, and reads the
	// manager's cache, as the manager watches every Instance's objects with
	// its own informers.
	writer client.Client
	// reader reads what the cache holds trimmed (the data of Secrets) from
	// the API server.
	reader client.Reader
	// secrets reads the Secrets of secret parameters and of the kubeconfig,
	// which are the Instance's namespace's in this cluster.
	secrets client.Reader
	// files copies the files of Pipe tasks out of their pods.
	files task.FileCopier
	// target is the cluster the Instance's objects live in.
	target target
	// home writes in this cluster what of the Instance's lives here
	// wherever its objects are: the child Instances of its KudoOperator
	// tasks and their Secrets. It is writer unless target is another
	// cluster.
	home client.Client
}

// target is a cluster as the manager reaches an Instance's objects in it.
type target struct {
	// cluster is the remote cluster; nil for this one.
	cluster *remote.Cluster
	// kinds watches the kinds of the objects there.
	kinds *kindWatches
	// apiReader reads there as the manager does, past the cache.
	apiReader client.Reader
	served    migrate.Served
	scope     render.Scope
	// capabilities are what Helm charts' .Capabilities say of the cluster.
	capabilities func() (*chartrender.Capabilities, error)
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
// impersonated; in the cluster the Instance's kubeconfig names, when it
// names one, whose Secret this identity reads.
func (r *InstanceReconciler) identityFor(ctx context.Context, i *kudov1beta1.Instance) (identity, error) {
	if i.Spec.KubeConfig == nil {
		return r.localIdentity(i.Namespace, r.serviceAccountOf(i))
	}
	// Here it reads Secrets only; spec.serviceAccountName is an account of
	// the other cluster.
	account := ""
	if r.MultiTenant {
		account = defaultServiceAccount
	}
	local, err := r.localIdentity(i.Namespace, account)
	if err != nil {
		return identity{}, err
	}
	id, err := r.remoteIdentity(ctx, i, local.secrets)
	id.home = local.writer
	return id, err
}

// localTarget is this cluster.
func (r *InstanceReconciler) localTarget() target {
	return target{kinds: r.kinds, apiReader: r.APIReader, served: r.served, scope: r.scope, capabilities: r.capabilities.Get}
}

// localIdentity is the manager in this cluster, or, when account is set,
// that service account of namespace, impersonated.
func (r *InstanceReconciler) localIdentity(namespace, account string) (identity, error) {
	if account == "" {
		return identity{writer: r.Client, reader: r.APIReader, secrets: r.APIReader, files: r.Files, target: r.localTarget(), home: r.Client}, nil
	}
	user := serviceAccountUser(namespace, account)
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
	id := identity{writer: writer, reader: reader, secrets: reader, files: r.Files, target: r.localTarget(), home: writer}
	if files, ok := r.Files.(task.ImpersonatingCopier); ok {
		id.files = files.As(user)
	}
	r.impersonated.Add(user, id, impersonatedFor)
	return id, nil
}
