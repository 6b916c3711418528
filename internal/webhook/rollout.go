package webhook

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// +kubebuilder:webhook:path=/validate-kudo-dev-v1alpha1-rollout,mutating=false,failurePolicy=fail,sideEffects=None,groups=kudo.dev,resources=rollouts,verbs=create;update,versions=v1alpha1,name=vrollout.kudo.dev,admissionReviewVersions=v1

// rollouts admits a Rollout only from a user who may change what it
// changes: it upgrades the Instances of its namespace, and the typed objects
// that make them, with the manager's rights, so whoever writes its spec
// must hold those rights already.
type rollouts struct {
	reader client.Reader
	access client.Writer
}

func (w *rollouts) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	return nil, w.checkAuthor(ctx, obj.(*kudov1alpha1.Rollout))
}

func (w *rollouts) ValidateUpdate(ctx context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	old, ro := oldObj.(*kudov1alpha1.Rollout), newObj.(*kudov1alpha1.Rollout)
	if equality.Semantic.DeepEqual(old.Spec, ro.Spec) {
		return nil, nil
	}
	return nil, w.checkAuthor(ctx, ro)
}

func (w *rollouts) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

// checkAuthor refuses a user who may not patch the Instances of the
// Rollout's namespace, or the typed objects of its package there.
func (w *rollouts) checkAuthor(ctx context.Context, ro *kudov1alpha1.Rollout) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return err
	}
	user := req.UserInfo
	attrs := authorizationv1.ResourceAttributes{Namespace: ro.Namespace, Verb: "patch", Group: kudov1beta1.GroupVersion.Group,
		Resource: "instances"}
	if err := mayDo(ctx, w.access, user, attrs, fmt.Sprintf("%s may not patch the Instances of namespace %s, "+
		"so no Rollout of theirs may upgrade them", user.Username, ro.Namespace)); err != nil {
		return err
	}
	versions := &kudov1beta1.OperatorVersionList{}
	if err := w.reader.List(ctx, versions, client.InNamespace(ro.Namespace)); err != nil {
		return err
	}
	for k := range versions.Items {
		ov := &versions.Items[k]
		if ov.Spec.Operator.Name != ro.Spec.Operator || ov.Spec.TypedAPI == nil {
			continue
		}
		names, err := typedapi.NamesOf(ov.Spec.Operator.Name, ov.Spec.TypedAPI)
		if err != nil {
			return err
		}
		attrs := authorizationv1.ResourceAttributes{Namespace: ro.Namespace, Verb: "patch", Group: names.Group, Resource: names.Plural}
		return mayDo(ctx, w.access, user, attrs, fmt.Sprintf("%s may not patch the %s of namespace %s, so no Rollout of theirs "+
			"may upgrade them", user.Username, names.Plural, ro.Namespace))
	}
	return nil
}
