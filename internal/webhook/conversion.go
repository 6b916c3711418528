package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	kudocrd "github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// Bounds of a conversion request. The API server sends the objects of a
// list in one, each at most the 1.5 MiB etcd stores, and waits 30 seconds
// for the answer: the rules' expressions of all its objects run within
// ConversionBudget, past which an expression gives no value (its object's
// value is kept in its annotation), so that no writer of objects can make
// a list of the kind fail for everyone.
const (
	MaxConversionReviewBytes = 64 << 20
	ConversionBudget         = 10 * time.Second
)

// Conversions is the conversion webhook of the typed APIs with more than
// one version (docs/typed-apis.md): it converts their objects between
// versions by the rules their package states (typedapi.Evolution), with
// the OperatorVersions of the Operator that serves the kind.
type Conversions struct {
	// Client reads the CustomResourceDefinitions and OperatorVersions, from
	// the cache.
	Client client.Reader
}

// ServeHTTP answers a ConversionReview.
func (c *Conversions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxConversionReviewBytes))
	if err != nil {
		http.Error(w, fmt.Sprintf("the request: %v", err), http.StatusRequestEntityTooLarge)
		return
	}
	review := &apiextensionsv1.ConversionReview{}
	if err := json.Unmarshal(body, review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not a ConversionReview: %v", err), http.StatusBadRequest)
		return
	}
	response := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	ctx, cancel := context.WithTimeout(r.Context(), ConversionBudget)
	defer cancel()
	converted, err := c.convert(ctx, review.Request)
	if err != nil {
		ctrl.LoggerFrom(r.Context()).Info("A conversion failed", "reason", err.Error())
		response.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
	} else {
		response.ConvertedObjects = converted
	}
	review.Request, review.Response = nil, response
	review.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("ConversionReview"))
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(review); err != nil {
		ctrl.LoggerFrom(r.Context()).Error(err, "Writing a conversion response")
	}
}

// convert converts each object of the request to its desired version.
func (c *Conversions) convert(ctx context.Context, req *apiextensionsv1.ConversionRequest) ([]runtime.RawExtension, error) {
	to, err := schema.ParseGroupVersion(req.DesiredAPIVersion)
	if err != nil {
		return nil, fmt.Errorf("desiredAPIVersion: %w", err)
	}
	evolutions := map[string]typedapi.Evolution{}
	out := make([]runtime.RawExtension, 0, len(req.Objects))
	for _, raw := range req.Objects {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw.Raw); err != nil {
			return nil, err
		}
		gvk := obj.GroupVersionKind()
		if gvk.Group != to.Group {
			return nil, fmt.Errorf("%s %s is not of the group %s", gvk.Kind, obj.GetName(), to.Group)
		}
		e, ok := evolutions[gvk.Kind]
		if !ok {
			if e, err = c.evolutionOf(ctx, gvk.GroupKind()); err != nil {
				return nil, err
			}
			evolutions[gvk.Kind] = e
		}
		conversion, err := e.Convert(ctx, obj.Object, to.Group, gvk.Version, to.Version)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
		}
		b, err := json.Marshal(conversion.Object)
		if err != nil {
			return nil, err
		}
		out = append(out, runtime.RawExtension{Raw: b})
	}
	return out, nil
}

// evolutionOf is the typed API of the kind: the versions the
// OperatorVersions of the Operator that serves it serve.
func (c *Conversions) evolutionOf(ctx context.Context, gk schema.GroupKind) (typedapi.Evolution, error) {
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(kudocrd.V1.GroupVersion().WithKind("CustomResourceDefinitionList"))
	if err := c.Client.List(ctx, crds, client.HasLabels{typedapi.OperatorLabel}); err != nil {
		return nil, err
	}
	for _, crd := range crds.Items {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		if group != gk.Group || kind != gk.Kind {
			continue
		}
		owner, _ := typedapi.OwnerOf(&crd)
		versions := &kudov1beta1.OperatorVersionList{}
		if err := c.Client.List(ctx, versions, client.InNamespace(owner.Namespace)); err != nil {
			return nil, err
		}
		return typedapi.EvolutionOf(owner.Name, versions.Items)
	}
	return nil, fmt.Errorf("%s is no typed API kudo-ng serves", gk)
}
