package objects

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestEveryApplyIsServerSideAsItsWriterAndTakesItsFieldsOver: the one
// server-side apply names its writer's field manager, forces ownership of
// the fields it sets, and its error names the object.
func TestEveryApplyIsServerSideAsItsWriterAndTakesItsFieldsOver(t *testing.T) {
	refused := errors.New("admission webhook denied the request")
	for _, owner := range []string{FieldOwner, TypedAPIFieldOwner, CLIFieldOwner} {
		var got client.PatchOptions
		var patchType string
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(_ context.Context, _ client.WithWatch, _ client.Object, patch client.Patch, opts ...client.PatchOption) error {
				patchType = string(patch.Type())
				got.ApplyOptions(opts)
				return refused
			},
		}).Build()
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("v1")
		obj.SetKind("ConfigMap")
		obj.SetNamespace("a")
		obj.SetName("demo")

		err := ServerSideApply(context.Background(), c, obj, owner, client.DryRunAll)
		if !errors.Is(err, refused) || err.Error() != "applying ConfigMap demo: admission webhook denied the request" {
			t.Errorf("%s: ServerSideApply = %v, want the API server's refusal naming ConfigMap demo", owner, err)
		}
		if patchType != "application/apply-patch+yaml" {
			t.Errorf("%s: patch of type %s, want a server-side apply", owner, patchType)
		}
		if got.FieldManager != owner || got.Force == nil || !*got.Force || len(got.DryRun) != 1 {
			t.Errorf("%s: options %+v, want field manager %s, forced, and the caller's dry run", owner, got, owner)
		}
	}
}
