package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	kudocrd "github.com/kudo-ng/kudo/internal/crd"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// conversions serves hello's kind, v1 (replicas) and v2 (count, was
// replicas), from namespace a.
func conversions(t *testing.T) *Conversions {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(kudocrd.V1)
	crd.SetName("hellos.packages.kudo.dev")
	crd.SetLabels(map[string]string{typedapi.OperatorLabel: "hello", typedapi.OperatorNamespaceLabel: "a"})
	crd.Object["spec"] = map[string]any{"group": "packages.kudo.dev", "names": map[string]any{"kind": "Hello"}}
	version := func(v, api string, p kudov1beta1.Parameter) *kudov1beta1.OperatorVersion {
		ov := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "hello-" + v},
			Spec: kudov1beta1.OperatorVersionSpec{Version: v, TypedAPI: &kudov1beta1.TypedAPI{Version: api},
				Parameters: []kudov1beta1.Parameter{p}}}
		ov.Spec.Operator.Name = "hello"
		return ov
	}
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(crd,
		version("0.1.0", "v1", kudov1beta1.Parameter{Name: "replicas", Type: "integer"}),
		version("0.2.0", "v2", kudov1beta1.Parameter{Name: "count", Type: "integer", OldName: "replicas"})).Build()
	return &Conversions{Client: c}
}

func review(t *testing.T, desired string, objects ...string) []byte {
	t.Helper()
	req := &apiextensionsv1.ConversionReview{Request: &apiextensionsv1.ConversionRequest{UID: "1", DesiredAPIVersion: desired}}
	for _, o := range objects {
		req.Request.Objects = append(req.Request.Objects, runtime.RawExtension{Raw: []byte(o)})
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTheConversionWebhook(t *testing.T) {
	h := conversions(t)
	tests := []struct {
		name string
		body []byte
		code int
		// want is in the response: a converted object, or the failure.
		want string
	}{
		{"converts each object", review(t, "packages.kudo.dev/v2",
			`{"apiVersion":"packages.kudo.dev/v1","kind":"Hello","metadata":{"name":"h","namespace":"b"},"spec":{"replicas":4}}`),
			http.StatusOK, `"spec":{"count":4}`},
		{"a kind it does not serve", review(t, "packages.kudo.dev/v2",
			`{"apiVersion":"packages.kudo.dev/v1","kind":"Other","metadata":{"name":"h"}}`),
			http.StatusOK, `"message":"Other.packages.kudo.dev is no typed API kudo-ng serves"`},
		{"another group than the one asked for", review(t, "packages.kudo.dev/v2",
			`{"apiVersion":"evil.example.com/v1","kind":"Hello","metadata":{"name":"h"}}`),
			http.StatusOK, `"message":"Hello h is not of the group packages.kudo.dev"`},
		{"not a ConversionReview", []byte(`{"kind":`), http.StatusBadRequest, "not a ConversionReview"},
		{"more than it reads", bytes.Repeat([]byte(" "), MaxConversionReviewBytes+1), http.StatusRequestEntityTooLarge, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, typedapi.ConvertPath, bytes.NewReader(tt.body)))
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.want) {
				t.Errorf("%d %s\nwant %d …%s…", w.Code, w.Body, tt.code, tt.want)
			}
		})
	}
}
