package initcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// kudoInstalled is what KUDO v0.19's init leaves in a cluster, with its
// self-signed certificate.
func kudoInstalled() []client.Object {
	labels := map[string]string{"app": "kudo-manager", "control-plane": "controller-manager"}
	return []client.Object{
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kudo-system", Name: "kudo-controller-manager", Labels: labels}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kudo-system", Name: "kudo-controller-manager-service", Labels: labels}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kudo-system", Name: "kudo-webhook-server-secret"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kudo-system", Name: "kudo-manager"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kudo-manager-rolebinding"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kudo-system", Name: "kudo-manager"}}},
	}
}

func TestInitRefusesToRunBesideKUDO(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(kudoInstalled()...).Build()
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	err := Run(context.Background(), c, streams, &Options{SelfSignedCA: true})
	if err == nil || !strings.Contains(err.Error(), "KUDO is installed (StatefulSet kudo-system/kudo-controller-manager (KUDO's manager))") ||
		!strings.Contains(err.Error(), "pass --upgrade") {
		t.Fatalf("init beside KUDO = %v, want a refusal naming KUDO's manager and --upgrade", err)
	}
	err = Run(context.Background(), c, streams, &Options{Upgrade: true, CRDOnly: true})
	if err == nil || !strings.Contains(err.Error(), "--crd-only would leave its Instances with no manager") {
		t.Errorf("init --upgrade --crd-only beside KUDO = %v, want a refusal", err)
	}
	assertPresent(t, c, kudoInstalled())
}

func TestInitUpgradeDryRunSaysWhatGoesAndChangesNothing(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(kudoInstalled()...).Build()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(context.Background(), c, streams, &Options{Upgrade: true, DryRun: true, Output: "yaml", SelfSignedCA: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#   StatefulSet kudo-system/kudo-controller-manager (KUDO's manager)\n",
		"#   ClusterRoleBinding kudo-manager-rolebinding (the cluster-admin binding of KUDO's manager)\n",
		"#   ServiceAccount kudo-system/kudo-manager (the service account of KUDO's manager)\n",
		"kind: Deployment",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("init --upgrade --dry-run -o yaml lacks %q", want)
		}
	}
	assertPresent(t, c, kudoInstalled())
}

func TestRemoveKUDODeletesOnlyKUDOsObjects(t *testing.T) {
	ours := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kudo-manager-rolebinding"},
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "kudo-manager-role"}}
	objs := append(kudoInstalled()[:4], ours)
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	ctx := context.Background()
	found, err := findKUDO(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 4 {
		t.Fatalf("found %v, want KUDO's 4 objects and not kudo-ng's binding", found)
	}
	var out bytes.Buffer
	if err := removeKUDO(ctx, c, &out, found, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs[:4] {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s is still there: %v", obj, obj.GetName(), err)
		}
	}
	assertPresent(t, c, []client.Object{ours})
	if again, err := findKUDO(ctx, c); err != nil || len(again) != 0 {
		t.Errorf("after the takeover, findKUDO = %v, %v", again, err)
	}
	if !strings.Contains(out.String(), "StatefulSet kudo-system/kudo-controller-manager (KUDO's manager) deleted\n") {
		t.Errorf("removeKUDO said %q", out.String())
	}
}

func assertPresent(t *testing.T, c client.Client, objs []client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("%T %s: %v", obj, obj.GetName(), err)
		}
	}
}
