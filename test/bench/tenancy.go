package main

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"

	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/localcluster"
)

func tenantNamespace(n, run int) namespaces {
	return namespaces{name: fmt.Sprintf("tenant-%d-%d", n, run+1), n: n}
}

// multiTenantRuns runs a size as often as its plain runs, with the manager
// started with --multi-tenant, as a platform team runs it: every Instance's
// work impersonates its namespace's default service account, which a Role
// lets do what the scale package needs, as `kubectl kudo rbac` grants it.
// Each run is alone in the cluster, as the plain ones are. The manager is
// started again as before afterwards.
func multiTenantRuns(ctx context.Context, c *localcluster.Cluster, m *manager, pkg *packages.Package, n, count int) (*SideRun, error) {
	m.stop()
	if err := m.start("--multi-tenant"); err != nil {
		return nil, err
	}
	runs, err := multiTenantRunsOf(ctx, c, m, pkg, n, count)
	m.stop()
	if startErr := m.start(); err == nil {
		err = startErr
	}
	if err != nil {
		return nil, err
	}
	return medianSideRun(runs), nil
}

func multiTenantRunsOf(ctx context.Context, c *localcluster.Cluster, m *manager, pkg *packages.Package, n, count int) ([]*SideRun, error) {
	runs := make([]*SideRun, count)
	for k := range runs {
		ns := tenantNamespace(n, k)
		grant := func(ctx context.Context) error {
			for _, name := range ns.all() {
				if err := grantScalePackage(ctx, c, name); err != nil {
					return err
				}
			}
			return nil
		}
		s, err := scaleRun(ctx, c, m, pkg, ns, "", grant, createInstancesOf(c))
		if err != nil {
			return nil, err
		}
		logf("scale %d, multi-tenant run %d: all COMPLETE in %.2fs, CPU %.1fs, peak RSS %.0f MiB, requests %v",
			n, k+1, s.Seconds, s.CPUSeconds, s.PeakRSSMiB, s.Requests)
		runs[k] = sideRunOf(s)
		if err := resetCluster(ctx, c, m, ns); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// grantScalePackage lets the namespace's default service account do what
// the scale package's objects need.
func grantScalePackage(ctx context.Context, c *localcluster.Cluster, ns string) error {
	verbs := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "scale-package", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "services"}, Verbs: verbs},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: verbs},
		},
	}
	if err := c.Client.Create(ctx, role); err != nil {
		return err
	}
	if err := c.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scale-package", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns}},
	}); err != nil {
		return err
	}
	// The authorizer learns of the binding from its cache: the run starts
	// once it says yes, rather than count the steps it would refuse.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: serviceaccount.MakeUsername(ns, "default"),
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: "create", Group: "apps", Resource: "deployments"},
		}}
		if err := c.Client.Create(ctx, review); err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	})
}
