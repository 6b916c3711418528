package webhook

import (
	"context"
	"fmt"
	"maps"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// An Instance acts for its user: it runs an OperatorVersion's code, as a
// service account, with the values of Secrets. Each is the user's choice,
// so each must be within the user's own reach, asked of the API server with
// the user's groups and extra (SubjectAccessReview), on create and whenever
// the choice changes. Otherwise naming the namespace's CI account, or a
// Secret, would hand the user what RBAC refused them.

// checkReach refuses an Instance whose user may not get the OperatorVersion
// it names in another namespace, impersonate its service account, or get
// the Secrets of its secret parameters and of its kubeconfig; old is nil
// on create.
func (w *Instances) checkReach(ctx context.Context, old, i *kudov1beta1.Instance) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return err
	}
	user := req.UserInfo
	if key := i.OperatorVersionKey(); key.Namespace != i.Namespace && (old == nil || key != old.OperatorVersionKey()) {
		attrs := authorizationv1.ResourceAttributes{Namespace: key.Namespace, Verb: "get", Group: kudov1beta1.GroupVersion.Group,
			Resource: "operatorversions", Name: key.Name}
		if err := w.mayDo(ctx, user, attrs, fmt.Sprintf(
			"spec.operatorVersion: %s may not get OperatorVersion %s/%s, so no Instance of it may run it",
			user.Username, key.Namespace, key.Name)); err != nil {
			return err
		}
	}
	// With a kubeconfig, the account is the other cluster's, impersonated
	// there by the kubeconfig's user: whoever may get the kubeconfig may act
	// as that user anyway, so the Secret is what is asked about.
	if sa := i.Spec.ServiceAccountName; sa != "" && i.Spec.KubeConfig == nil && (old == nil || sa != old.Spec.ServiceAccountName) &&
		!isAccount(user, i.Namespace, sa) {
		attrs := authorizationv1.ResourceAttributes{Namespace: i.Namespace, Verb: "impersonate", Resource: "serviceaccounts", Name: sa}
		if err := w.mayDo(ctx, user, attrs, fmt.Sprintf("spec.serviceAccountName: %s may not impersonate ServiceAccount %s/%s, "+
			"so no Instance of theirs may act as it", user.Username, i.Namespace, sa)); err != nil {
			return err
		}
	}
	if kc := i.Spec.KubeConfig; kc != nil && (old == nil || old.Spec.KubeConfig == nil || *kc != *old.Spec.KubeConfig) {
		attrs := authorizationv1.ResourceAttributes{Namespace: i.Namespace, Verb: "get", Resource: "secrets", Name: kc.SecretRef.Name}
		if err := w.mayDo(ctx, user, attrs, fmt.Sprintf("spec.kubeConfig.secretRef: %s may not get Secret %s/%s, "+
			"so no Instance of theirs may act with its kubeconfig", user.Username, i.Namespace, kc.SecretRef.Name)); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(i.Spec.SecretParameters)) {
		ref := i.Spec.SecretParameters[name]
		if old != nil && old.Spec.SecretParameters[name] == ref {
			continue
		}
		attrs := authorizationv1.ResourceAttributes{Namespace: i.Namespace, Verb: "get", Resource: "secrets", Name: ref.Name}
		if err := w.mayDo(ctx, user, attrs, fmt.Sprintf("spec.secretParameters.%s: %s may not get Secret %s/%s, "+
			"so no Instance of theirs may read it", name, user.Username, i.Namespace, ref.Name)); err != nil {
			return err
		}
	}
	return nil
}

// isAccount: a service account naming itself chooses no other identity (a
// parent Instance's account making its KudoOperator child, in lockdown).
func isAccount(user authenticationv1.UserInfo, namespace, name string) bool {
	return user.Username == "system:serviceaccount:"+namespace+":"+name
}

// mayDo asks the API server whether user may do what attrs say, and refuses
// with refusal when not.
func (w *Instances) mayDo(ctx context.Context, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes,
	refusal string) error {
	return mayDo(ctx, w.Access, user, attrs, refusal)
}

// mayDo asks access, the API server, whether user may do what attrs say,
// and refuses with refusal when not.
func mayDo(ctx context.Context, access client.Writer, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes,
	refusal string) error {
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra(user.Extra), ResourceAttributes: &attrs,
	}}
	if err := access.Create(ctx, review); err != nil {
		return fmt.Errorf("checking that %s may %s %s %s/%s: %w", user.Username, attrs.Verb, attrs.Resource, attrs.Namespace, attrs.Name, err)
	}
	if !review.Status.Allowed {
		return fmt.Errorf("%s", refusal)
	}
	return nil
}

func extra(in map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}
