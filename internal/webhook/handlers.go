package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/trust"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// +kubebuilder:webhook:path=/mutate-kudo-dev-v1beta1-instance,mutating=true,failurePolicy=fail,sideEffects=None,groups=kudo.dev,resources=instances,verbs=create;update,versions=v1beta1,name=minstance.kudo.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kudo-dev-v1beta1-instance,mutating=false,failurePolicy=fail,sideEffects=None,groups=kudo.dev,resources=instances,verbs=create;update,versions=v1beta1,name=vinstance.kudo.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kudo-dev-v1beta1-operatorversion,mutating=false,failurePolicy=fail,sideEffects=None,groups=kudo.dev,resources=operatorversions,verbs=create;update;delete,versions=v1beta1,name=voperatorversion.kudo.dev,admissionReviewVersions=v1

// Whether a request's user may reach what an Instance names (reach.go).
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Instances is the Instance webhook: it schedules plans and refuses
// conflicting ones, and Instances that would reach what their user may not.
type Instances struct {
	// Client reads OperatorVersions from the cache; Reader from the API
	// server, for one the cache has not seen yet (installed just before).
	Client client.Reader
	Reader client.Reader
	// Access asks the API server whether the user of a request may do
	// something (SubjectAccessReview).
	Access client.Writer
	// RequireServiceAccount refuses Instances without
	// spec.serviceAccountName.
	RequireServiceAccount bool
	// ServesTyped tells the kinds of the typed APIs the manager serves,
	// whose objects hold the status of their Instances
	// (typedapi.ReadRecord); nil: none.
	ServesTyped func(context.Context, schema.GroupVersionKind) bool
}

// SetupWithManager registers the Instance, typed object and
// OperatorVersion webhooks, and the typed objects' conversion webhook.
func SetupWithManager(mgr ctrl.Manager, requireServiceAccount bool, renderLimits render.Limits,
	servesTyped func(context.Context, schema.GroupVersionKind) bool) error {
	instances := &Instances{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Access: mgr.GetClient(),
		RequireServiceAccount: requireServiceAccount, ServesTyped: servesTyped}
	if err := ctrl.NewWebhookManagedBy(mgr).For(&kudov1beta1.Instance{}).
		WithDefaulter(instances).WithValidator(instances).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr).For(&kudov1alpha1.Rollout{}).
		WithValidator(&rollouts{reader: mgr.GetClient(), access: mgr.GetClient()}).Complete(); err != nil {
		return err
	}
	mgr.GetWebhookServer().Register(TypedPath, &webhook.Admission{Handler: &TypedObjects{Instances: instances}})
	mgr.GetWebhookServer().Register(typedapi.ConvertPath, &Conversions{Client: mgr.GetClient()})
	return ctrl.NewWebhookManagedBy(mgr).For(&kudov1beta1.OperatorVersion{}).
		WithValidator(&operatorVersions{instances: mgr.GetAPIReader(), policies: mgr.GetClient(), renderLimits: renderLimits}).Complete()
}

// checkServiceAccount refuses an Instance without a service account where
// the manager requires one.
func (w *Instances) checkServiceAccount(i *kudov1beta1.Instance) error {
	if w.RequireServiceAccount && i.Spec.ServiceAccountName == "" {
		return fmt.Errorf("spec.serviceAccountName is required: this cluster's kudo-ng manager applies each Instance's objects " +
			"as a ServiceAccount of its namespace (--require-service-account)")
	}
	return nil
}

// operatorVersion finds the Instance's OperatorVersion; nil when missing.
func (w *Instances) operatorVersion(ctx context.Context, i *kudov1beta1.Instance) (*kudov1beta1.OperatorVersion, error) {
	key := i.OperatorVersionKey()
	ov := &kudov1beta1.OperatorVersion{}
	err := w.Client.Get(ctx, key, ov)
	if apierrors.IsNotFound(err) {
		err = w.Reader.Get(ctx, key, ov)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return ov, err
}

// checkTrust refuses an Instance of an OperatorVersion that a TrustPolicy
// enforcing signatures on it did not verify. One not judged yet passes:
// `kubectl kudo install` makes the Instance just after it, and the manager
// runs nothing of it before it is verified.
func (w *Instances) checkTrust(ctx context.Context, ov *kudov1beta1.OperatorVersion) error {
	policies := &kudov1alpha1.TrustPolicyList{}
	if err := w.Client.List(ctx, policies); err != nil {
		return fmt.Errorf("listing the TrustPolicies: %w", err)
	}
	if refused := trust.Refusal(policies.Items, ov); refused != nil && !refused.Pending {
		return refused
	}
	return nil
}

// readRecord reads into the status of the Instance the record its typed
// object holds, if it runs one: the plans an update must not disturb.
func (w *Instances) readRecord(ctx context.Context, i *kudov1beta1.Instance) error {
	if w.ServesTyped == nil {
		return nil
	}
	_, err := typedapi.ReadRecord(ctx, w.Client, i, w.ServesTyped)
	return err
}

// Default schedules deploy on create, and on update the plan the update asks for.
func (w *Instances) Default(ctx context.Context, obj runtime.Object) error {
	i := obj.(*kudov1beta1.Instance)
	ov, err := w.operatorVersion(ctx, i)
	if err != nil || ov == nil {
		return err // a missing OperatorVersion is the validator's to refuse
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return err
	}
	switch req.Operation {
	case admissionv1.Create:
		DefaultCreate(i, ov)
	case admissionv1.Update:
		old := &kudov1beta1.Instance{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return err
		}
		if err := w.readRecord(ctx, old); err != nil {
			return err
		}
		DefaultUpdate(old, i, ov)
	}
	return nil
}

// ValidateCreate refuses an Instance that could not deploy.
func (w *Instances) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	i := obj.(*kudov1beta1.Instance)
	if err := w.checkServiceAccount(i); err != nil {
		return nil, err
	}
	ov, err := w.operatorVersion(ctx, i)
	if err != nil {
		return nil, err
	}
	if ov == nil {
		return nil, fmt.Errorf("OperatorVersion %q not found in namespace %s: install the package first (kubectl kudo install)",
			i.Spec.OperatorVersion.Name, i.OperatorVersionNamespace())
	}
	if err := w.checkReach(ctx, nil, i); err != nil {
		return nil, err
	}
	if err := w.checkTrust(ctx, ov); err != nil {
		return nil, err
	}
	return nil, ValidateCreate(i, ov)
}

// ValidateUpdate refuses conflicting plans and forbidden changes.
func (w *Instances) ValidateUpdate(ctx context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	old, i := oldObj.(*kudov1beta1.Instance), newObj.(*kudov1beta1.Instance)
	if err := w.readRecord(ctx, old); err != nil {
		return nil, err
	}
	if !i.DeletionTimestamp.IsZero() {
		// Finalizers must be able to go, whatever else holds.
		return nil, ValidateDeleting(old, i)
	}
	if err := w.checkServiceAccount(i); err != nil {
		return nil, err
	}
	// Before anything else passes the update: an Instance whose
	// OperatorVersion is gone may still take a new identity.
	if err := w.checkReach(ctx, old, i); err != nil {
		return nil, err
	}
	ov, err := w.operatorVersion(ctx, i)
	if err != nil {
		return nil, err
	}
	if ov == nil {
		if i.OperatorVersionKey() != old.OperatorVersionKey() {
			return nil, fmt.Errorf("OperatorVersion %q not found in namespace %s: install it before upgrading to it",
				i.Spec.OperatorVersion.Name, i.OperatorVersionNamespace())
		}
		return nil, nil
	}
	if !equality.Semantic.DeepEqual(old.Spec, i.Spec) {
		if err := w.checkTrust(ctx, ov); err != nil {
			return nil, err
		}
	}
	return nil, ValidateUpdate(old, i, ov)
}

// ValidateDelete lets every Instance go; the cleanup plan runs then.
func (w *Instances) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

// operatorVersions is the OperatorVersion webhook: it refuses one that
// could not run, and a change of the code Instances run.
type operatorVersions struct {
	// instances lists Instances from the API server: the manager's cache
	// holds its own shard's only.
	instances client.Reader
	// policies lists the TrustPolicies from the cache.
	policies client.Reader
	// renderLimits bound the renders of verifying an OperatorVersion.
	renderLimits render.Limits
}

func (w *operatorVersions) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	ov := obj.(*kudov1beta1.OperatorVersion)
	if err := invalid(ov); err != nil {
		return nil, err
	}
	breaking, err := w.checkEvolution(ctx, ov)
	if err != nil {
		return nil, err
	}
	warnings, err := w.warnings(ctx, ov)
	return append(breaking, warnings...), err
}

// warnings are OperatorVersionWarnings, but for a package a TrustPolicy
// enforces signatures on: its templates are rendered once it is verified,
// not before, and the manager's verdicts are its conditions.
func (w *operatorVersions) warnings(ctx context.Context, ov *kudov1beta1.OperatorVersion) (admission.Warnings, error) {
	policies := &kudov1alpha1.TrustPolicyList{}
	if err := w.policies.List(ctx, policies); err != nil {
		return nil, fmt.Errorf("listing the TrustPolicies: %w", err)
	}
	for _, p := range trust.Covering(policies.Items, ov) {
		if trust.Enforces(&p) {
			return admission.Warnings{fmt.Sprintf("TrustPolicy %s enforces signatures on this package: "+
				"its templates are checked once the manager has verified it (its Verified and Ready conditions)", p.Name)}, nil
		}
	}
	return OperatorVersionWarnings(ov, w.renderLimits), nil
}

// ValidateUpdate refuses a change of the spec of an OperatorVersion that
// Instances use: it is the code they run, its templates and plans, and its
// author could otherwise change what runs in every namespace using it at
// their next routine update. A new version is a new OperatorVersion.
func (w *operatorVersions) ValidateUpdate(ctx context.Context, oldObj, obj runtime.Object) (admission.Warnings, error) {
	old, ov := oldObj.(*kudov1beta1.OperatorVersion), obj.(*kudov1beta1.OperatorVersion)
	if err := invalid(ov); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(old.Spec, ov.Spec) {
		return nil, nil
	}
	users, err := w.usedBy(ctx, ov)
	if err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return w.warnings(ctx, ov)
	}
	return nil, fmt.Errorf("spec: OperatorVersion %s/%s is used by %s, and the code Instances run cannot change under them: "+
		"install the package as a new version (bump operatorVersion in operator.yaml) and upgrade to it", ov.Namespace, ov.Name, users)
}

// usedBy says which Instances use ov ("Instance b and 2 Instances of other
// namespaces"), "" when none does. Those of other namespaces are counted,
// not named: ov's author may not read them.
func (w *operatorVersions) usedBy(ctx context.Context, ov *kudov1beta1.OperatorVersion) (string, error) {
	list := &kudov1beta1.InstanceList{}
	if err := w.instances.List(ctx, list); err != nil {
		return "", fmt.Errorf("listing the Instances that may use OperatorVersion %s/%s: %w", ov.Namespace, ov.Name, err)
	}
	var here []string
	elsewhere := 0
	for _, i := range list.Items {
		switch {
		case i.OperatorVersionKey() != client.ObjectKeyFromObject(ov):
		case i.Namespace == ov.Namespace:
			here = append(here, "Instance "+i.Name)
		default:
			elsewhere++
		}
	}
	if len(here) > 1 {
		here = append(here[:1], fmt.Sprintf("%d more of its namespace", len(here)-1))
	}
	switch elsewhere {
	case 0:
	case 1:
		here = append(here, "an Instance of another namespace")
	default:
		here = append(here, fmt.Sprintf("%d Instances of other namespaces", elsewhere))
	}
	return strings.Join(here, " and "), nil
}

// ValidateDelete refuses to delete an OperatorVersion that Instances use:
// made again under its name with other code, it would run in their
// namespaces at their next routine update. Its Instances go first
// (uninstall), or move to another version (upgrade).
func (w *operatorVersions) ValidateDelete(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	ov := obj.(*kudov1beta1.OperatorVersion)
	users, err := w.usedBy(ctx, ov)
	if err != nil || users == "" {
		return nil, err
	}
	return nil, fmt.Errorf("OperatorVersion %s/%s is used by %s, and the code Instances run cannot be taken from under them: "+
		"uninstall them, or upgrade them to another version, first", ov.Namespace, ov.Name, users)
}

func invalid(ov *kudov1beta1.OperatorVersion) error {
	errs := ValidateOperatorVersion(ov)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(kudov1beta1.GroupVersion.WithKind("OperatorVersion").GroupKind(), ov.Name, errs)
}
