package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	kudocrd "github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/objects"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// typedAPIHashAnnotation records, on a served CustomResourceDefinition, the
// hash of what the manager last applied: an unchanged one is not applied
// again on each of the many reconciles of its Operator.
const typedAPIHashAnnotation = "kudo.dev/typed-api-hash"

// establishedWait is how soon an Operator looks again at a
// CustomResourceDefinition the API server has not established yet.
const establishedWait = time.Second

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch

// typedAPIRetry is how soon an Operator whose typed API is not served
// looks again: a cluster admin adds its group to the typed objects'
// webhook, or the Operator holding its kind goes.
const typedAPIRetry = 30 * time.Second

// typedAPI is how the Operator's typed API is served: what its Ready
// condition says of it, and how soon to look again.
type typedAPI struct {
	message string
	requeue time.Duration
}

// serveTypedAPI serves the Operator as a kind of its own
// (docs/typed-apis.md): the CustomResourceDefinition made from the
// parameters of its OperatorVersions in its namespace, typed by the
// newest's, and the controller of its objects once the API server serves
// them. A kind or group another Operator serves (of this name in another
// namespace too), a CustomResourceDefinition kudo-ng did not make, or a
// group the typed objects' webhook does not admit, is left alone and the
// Operator says so. Without OperatorVersions, the CustomResourceDefinition
// stays (retireTypedAPI).
func (r *OperatorReconciler) serveTypedAPI(ctx context.Context, operator *kudov1beta1.Operator) (typedAPI, error) {
	all := &kudov1beta1.OperatorVersionList{}
	if err := r.List(ctx, all, client.InNamespace(operator.Namespace)); err != nil {
		return typedAPI{}, err
	}
	var versions []kudov1beta1.OperatorVersion
	for _, ov := range all.Items {
		if ov.Spec.Operator.Name == operator.Name {
			versions = append(versions, ov)
		}
	}
	if len(versions) == 0 {
		return r.retireTypedAPI(ctx, operator)
	}
	webhooks := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := r.List(ctx, webhooks); err != nil {
		return typedAPI{}, err
	}
	names, crd, err := typedAPIOf(operator, versions, typedapi.ConversionClient(webhooks.Items))
	if err != nil {
		return typedAPI{message: "no typed API: " + err.Error(), requeue: typedAPIRetry}, nil
	}
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(kudocrd.V1.GroupVersion().WithKind("CustomResourceDefinitionList"))
	if err := r.List(ctx, crds); err != nil {
		return typedAPI{}, err
	}
	if refused := r.typedAPIRefusal(ctx, operator, names, crds.Items, webhooks.Items); refused != "" {
		return typedAPI{message: refused, requeue: typedAPIRetry}, nil
	}
	existing, err := r.ensureCRD(ctx, crd, crds.Items)
	if err != nil {
		return typedAPI{message: fmt.Sprintf("no typed API: %v", err)}, err
	}
	if !established(existing) {
		return typedAPI{message: fmt.Sprintf("serving %s once the API server establishes it", crd.Name), requeue: establishedWait}, nil
	}
	if err := r.TypedAPIs.Serve(names, operator.Name); err != nil {
		return typedAPI{}, err
	}
	served := fmt.Sprintf("served as %s %s (kubectl get %s)", names.GroupVersionKind().GroupVersion(), names.Kind, names.Plural)
	migration, next, err := r.migrateStorage(ctx, existing, names.GroupVersionKind().GroupKind())
	if migration != "" {
		served += "; " + migration
	}
	return typedAPI{message: served, requeue: next}, err
}

// typedAPIOf is the Operator's kind, named by its newest OperatorVersion,
// and its CustomResourceDefinition: a version for each API version its
// OperatorVersions serve (typedapi.ServedCRD), converted by the webhook
// conversion reaches.
func typedAPIOf(operator *kudov1beta1.Operator, versions []kudov1beta1.OperatorVersion, conversion *apiextensionsv1.WebhookClientConfig) (
	typedapi.Names, *apiextensionsv1.CustomResourceDefinition, error) {
	newest, _ := typedapi.Newest(versions)
	names, err := typedapi.NamesOf(operator.Name, newest.Spec.TypedAPI)
	if err != nil {
		return names, nil, err
	}
	evolution, err := typedapi.EvolutionOf(operator.Name, versions)
	if err == nil {
		err = evolution.Compile()
	}
	if err != nil {
		return names, nil, err
	}
	crd, err := typedapi.ServedCRD(names, operator.Name, evolution, conversion)
	if err != nil {
		return names, nil, err
	}
	crd.Labels[typedapi.OperatorNamespaceLabel] = operator.Namespace
	return names, crd, nil
}

// typedAPIRefusal says why the kind is not the Operator's to serve: another
// Operator holds it or its group, or the typed objects' webhook does not
// admit it; "" when it is.
func (r *OperatorReconciler) typedAPIRefusal(ctx context.Context, operator *kudov1beta1.Operator, names typedapi.Names,
	crds []unstructured.Unstructured, webhooks []admissionregistrationv1.ValidatingWebhookConfiguration) string {
	alive := func(key types.NamespacedName) bool {
		return !apierrors.IsNotFound(r.Get(ctx, key, &kudov1beta1.Operator{}))
	}
	if conflict := typedapi.Conflict(names, client.ObjectKeyFromObject(operator), crds, alive); conflict != "" {
		return "no typed API: " + conflict
	}
	if !typedapi.Admitted(names, webhooks) {
		return fmt.Sprintf("no typed API: webhook %s does not admit the creates and updates of %s: "+
			"a cluster admin adds the group %s to its rules (docs/typed-apis.md)", typedapi.TypedWebhook, names.CRDName(), names.Group)
	}
	return ""
}

// ensureCRD applies the CustomResourceDefinition when crds, those of the
// cluster, do not hold it as it is, and returns it as the API server holds
// it.
func (r *OperatorReconciler) ensureCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition,
	crds []unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var existing *unstructured.Unstructured
	for i := range crds {
		if crds[i].GetName() == crd.Name {
			existing = &crds[i]
		}
	}
	hash, err := hashOf(crd.Spec)
	if err != nil {
		return nil, err
	}
	if existing != nil && existing.GetAnnotations()[typedAPIHashAnnotation] == hash && existing.GetLabels()[typedapi.OperatorNamespaceLabel] != "" {
		return existing, nil
	}
	crd.Annotations = map[string]string{typedAPIHashAnnotation: hash}
	applied, err := r.applyCRD(ctx, crd)
	if err != nil {
		return nil, err
	}
	ctrl.LoggerFrom(ctx).Info("Serving the typed API", "crd", crd.Name)
	return applied, nil
}

func hashOf(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// applyCRD writes the CustomResourceDefinition with server-side apply and
// returns it as the API server holds it.
func (r *OperatorReconciler) applyCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return nil, err
	}
	delete(content, "status")
	unstructured.RemoveNestedField(content, "metadata", "creationTimestamp")
	u := &unstructured.Unstructured{Object: content}
	if err := objects.ServerSideApply(ctx, r.Client, u, objects.FieldOwner); err != nil {
		return nil, err
	}
	return u, nil
}

func established(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		condition, _ := c.(map[string]any)
		if condition["type"] == string(apiextensionsv1.Established) && condition["status"] == string(metav1.ConditionTrue) {
			return true
		}
	}
	return false
}

// retireTypedAPI says what becomes of the CustomResourceDefinitions served
// for the Operator, which has no OperatorVersion left: they stay, since
// deleting one deletes its objects, and an OperatorVersion installed again
// (into a namespace being replaced, say) serves them again; the Operator
// says how many objects remain, counted at the API server.
func (r *OperatorReconciler) retireTypedAPI(ctx context.Context, operator *kudov1beta1.Operator) (typedAPI, error) {
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(kudocrd.V1.GroupVersion().WithKind("CustomResourceDefinitionList"))
	if err := r.List(ctx, crds, client.MatchingLabels{typedapi.OperatorLabel: operator.Name}); err != nil {
		return typedAPI{}, err
	}
	var api typedAPI
	for i := range crds.Items {
		crd := &crds.Items[i]
		if owner, _ := typedapi.OwnerOf(crd); owner.Namespace != "" && owner.Namespace != operator.Namespace {
			continue
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		if len(versions) == 0 {
			continue
		}
		version, _ := versions[0].(map[string]any)["name"].(string)
		typed := &metav1.PartialObjectMetadataList{}
		typed.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind + "List"})
		if err := r.APIReader.List(ctx, typed, client.Limit(1)); err != nil {
			return typedAPI{}, err
		}
		if remaining := len(typed.Items) + int(ptr.Deref(typed.RemainingItemCount, 0)); remaining > 0 {
			api.message = fmt.Sprintf("no OperatorVersion left; the CustomResourceDefinition %s is kept while %d %s objects remain",
				crd.GetName(), remaining, kind)
		} else {
			api.message = fmt.Sprintf("no OperatorVersion left; no %s object remains: kubectl delete crd %s removes the kind",
				kind, crd.GetName())
		}
	}
	return api, nil
}
