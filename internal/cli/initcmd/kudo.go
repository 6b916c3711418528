package initcmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kudoObject is one of the objects KUDO v0.19's `kubectl kudo init` made
// (its pkg/kudoctl/kudoinit), which kudo-ng's init replaces.
type kudoObject struct {
	gvk             schema.GroupVersionKind
	namespace, name string
	// what it is to KUDO, for the user.
	what string
	// isKUDOs tells KUDO's from an object of the same name that is not:
	// kudo-ng's own ClusterRoleBinding has the name of KUDO's.
	isKUDOs func(*unstructured.Unstructured) bool
}

// kudoManagerLabels select KUDO's manager pods.
var kudoManagerLabels = client.MatchingLabels{"app": "kudo-manager", "control-plane": "controller-manager"}

// kudoObjects are KUDO's, in the order they go: its manager first, so that
// nothing acts on the Instances while the rest goes; its webhook next, which
// would refuse every Instance write once its manager is gone.
var kudoObjects = []kudoObject{
	{gvk: v1Kind("apps", "StatefulSet"), namespace: namespace, name: "kudo-controller-manager", what: "KUDO's manager",
		isKUDOs: func(o *unstructured.Unstructured) bool { return o.GetLabels()["app"] == "kudo-manager" }},
	{gvk: v1Kind("admissionregistration.k8s.io", "MutatingWebhookConfiguration"), name: "kudo-manager-instance-admission-webhook-config",
		what: "KUDO's Instance admission webhook"},
	{gvk: v1Kind("", "Service"), namespace: namespace, name: "kudo-controller-manager-service", what: "the Service of KUDO's webhook"},
	{gvk: v1Kind("cert-manager.io", "Certificate"), namespace: namespace, name: "kudo-webhook-server-certificate",
		what: "the certificate of KUDO's webhook"},
	{gvk: v1Kind("cert-manager.io", "Issuer"), namespace: namespace, name: "selfsigned-issuer", what: "the issuer of that certificate"},
	{gvk: v1Kind("", "Secret"), namespace: namespace, name: "kudo-webhook-server-secret", what: "the key of KUDO's webhook"},
	{gvk: v1Kind("rbac.authorization.k8s.io", "ClusterRoleBinding"), name: "kudo-manager-rolebinding",
		what: "the cluster-admin binding of KUDO's manager", isKUDOs: func(o *unstructured.Unstructured) bool {
			kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
			name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
			return kind == "ClusterRole" && name == "cluster-admin"
		}},
	{gvk: v1Kind("", "ServiceAccount"), namespace: namespace, name: "kudo-manager", what: "the service account of KUDO's manager"},
}

// v1Kind is a kind of the v1 version of its group: every kind KUDO made.
func v1Kind(group, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
}

// foundKUDO is one of KUDO's objects in the cluster.
type foundKUDO struct {
	kudoObject
	obj *unstructured.Unstructured
}

func (f foundKUDO) String() string {
	name := f.name
	if f.namespace != "" {
		name = f.namespace + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", f.gvk.Kind, name, f.what)
}

// findKUDO lists KUDO's objects in the cluster: none where KUDO was never
// installed, or kudo-ng took over already.
func findKUDO(ctx context.Context, c client.Client) ([]foundKUDO, error) {
	var found []foundKUDO
	for _, k := range kudoObjects {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(k.gvk)
		err := c.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: k.name}, obj)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("looking for KUDO's %s: %w", k.what, err)
		}
		if k.isKUDOs == nil || k.isKUDOs(obj) {
			found = append(found, foundKUDO{kudoObject: k, obj: obj})
		}
	}
	return found, nil
}

// describeTakeover says what taking over from KUDO deletes.
func describeTakeover(w io.Writer, found []foundKUDO) {
	_, _ = fmt.Fprintln(w, "# kubectl kudo init --upgrade takes over from KUDO: before it applies what follows, it deletes")
	for _, f := range found {
		_, _ = fmt.Fprintf(w, "#   %s\n", f)
	}
	_, _ = fmt.Fprintln(w, "# and waits until KUDO's manager pods are gone. Instances, OperatorVersions, Operators and what")
	_, _ = fmt.Fprintln(w, "# their plans made stay as they are: kudo-ng adopts each Instance without running a plan.")
}

// removeKUDO deletes KUDO's objects, its manager first and waiting until
// its pods are gone, so that KUDO and kudo-ng never both act.
func removeKUDO(ctx context.Context, c client.Client, out io.Writer, found []foundKUDO, timeout time.Duration) error {
	for _, f := range found {
		err := c.Delete(ctx, f.obj, client.PropagationPolicy(metav1.DeletePropagationForeground))
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s: %w", f, err)
		}
		_, _ = fmt.Fprintf(out, "%s deleted\n", f)
		if f.gvk.Kind != "StatefulSet" {
			continue
		}
		var left []string
		err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
			pods := &corev1.PodList{}
			if err := c.List(ctx, pods, client.InNamespace(namespace), kudoManagerLabels); err != nil {
				return false, err
			}
			left = left[:0]
			for _, p := range pods.Items {
				left = append(left, p.Name)
			}
			return len(left) == 0, nil
		})
		if err != nil {
			return fmt.Errorf("KUDO's manager pods (%s) did not go in %s: %w", strings.Join(left, ", "), timeout, err)
		}
	}
	return nil
}
