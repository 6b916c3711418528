package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	kudocrd "github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// +kubebuilder:webhook:path=/validate-packages-kudo-dev,mutating=false,failurePolicy=fail,sideEffects=None,groups=packages.kudo.dev,resources=*,verbs=create;update,versions=*,name=vtyped.kudo.dev,admissionReviewVersions=v1

// TypedPath is where the typed objects' webhook is served.
const TypedPath = "/validate-packages-kudo-dev"

// TypedObjects admits the objects of typed APIs (docs/typed-apis.md) by
// the Instance's rules, on the Instance each would make, and for the user
// who writes them: the manager writes the Instance, so what the user may
// reach (a service account, Secrets) is checked here, with their identity,
// and a plan running refuses a change here, not later.
type TypedObjects struct {
	Instances *Instances
}

// Handle admits a create or an update of a typed object.
func (w *TypedObjects) Handle(ctx context.Context, req admission.Request) admission.Response {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(req.Object.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return admission.Allowed("")
	}
	if err := w.check(admission.NewContextWithRequest(ctx, req), req, obj); err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			return admission.Errored(http.StatusForbidden, err)
		}
		return admission.Denied(err.Error())
	}
	return admission.Allowed("")
}

func (w *TypedObjects) check(ctx context.Context, req admission.Request, obj *unstructured.Unstructured) error {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(kudocrd.V1)
	if err := w.Instances.Client.Get(ctx, client.ObjectKey{Name: req.Resource.Resource + "." + req.Resource.Group}, crd); err != nil {
		return fmt.Errorf("the typed API %s.%s: %w", req.Resource.Resource, req.Resource.Group, err)
	}
	operator, ok := crd.GetLabels()[typedapi.OperatorLabel]
	if !ok {
		// Not a kind kudo-ng serves.
		return nil
	}
	mirror := &kudov1beta1.Instance{}
	if err := w.Instances.Client.Get(ctx, client.ObjectKeyFromObject(obj), mirror); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		mirror = nil
	}
	kind := obj.GetKind()
	if mirror != nil && (req.Operation == admissionv1.Create || !metav1.IsControlledBy(mirror, obj)) {
		return fmt.Errorf("an Instance named %s exists and is not this %s's: delete it first, or name this %s otherwise",
			obj.GetName(), kind, kind)
	}
	current := ""
	if mirror != nil {
		current = mirror.Spec.OperatorVersion.Name
	}
	i, ov, err := w.instanceOf(ctx, obj, current, operator)
	if err != nil {
		return err
	}
	if err := w.Instances.checkServiceAccount(i); err != nil {
		return err
	}
	if mirror == nil {
		if err := w.Instances.checkReach(ctx, nil, i); err != nil {
			return err
		}
		return ValidateCreate(i, ov)
	}
	// The change as the Instance would see it: its plan requests are its
	// own, its status the object's.
	if status, ok, err := typedapi.RecordOf(mirror, obj); err != nil {
		return err
	} else if ok {
		mirror.Status = status
	}
	i.Spec.PlanExecution, i.Status = mirror.Spec.PlanExecution, mirror.Status
	if err := w.Instances.checkReach(ctx, mirror, i); err != nil {
		return err
	}
	return ValidateUpdate(mirror, i, ov)
}

// instanceOf is the Instance that would run obj (typedapi.InstanceOf),
// and its OperatorVersion.
func (w *TypedObjects) instanceOf(ctx context.Context, obj *unstructured.Unstructured, current, operator string) (
	*kudov1beta1.Instance, *kudov1beta1.OperatorVersion, error) {
	versions := &kudov1beta1.OperatorVersionList{}
	if err := w.Instances.Client.List(ctx, versions, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, nil, err
	}
	i, ov, err := typedapi.InstanceOf(ctx, obj, current, operator, versions.Items)
	var none *typedapi.NoOperatorVersionError
	if !errors.As(err, &none) {
		return i, ov, err
	}
	// One installed just before (kubectl kudo upgrade) may not be in the
	// cache yet.
	if err := w.Instances.Reader.List(ctx, versions, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, nil, err
	}
	i, ov, err = typedapi.InstanceOf(ctx, obj, current, operator, versions.Items)
	if errors.As(err, &none) {
		return nil, nil, fmt.Errorf("spec.operatorVersion: %w", err)
	}
	return i, ov, err
}
