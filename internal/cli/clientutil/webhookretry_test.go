package clientutil

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// What the API server answers when it cannot reach a webhook, and when a
// webhook refuses.
var (
	killedReplica = apierrors.NewInternalError(errors.New(`failed calling webhook "minstance.kudo.dev": failed to call webhook: ` +
		`Post "https://kudo-webhook-service.kudo-system.svc:443/mutate-kudo-dev-v1beta1-instance?timeout=10s": ` +
		`dial tcp 10.96.236.182:443: connect: connection refused`))
	noReplica = apierrors.NewInternalError(errors.New(`failed calling webhook "vinstance.kudo.dev": failed to call webhook: ` +
		`Post "https://kudo-webhook-service.kudo-system.svc:443/validate?timeout=10s": no endpoints available for service "kudo-webhook-service"`))
	// kube-proxy's answer for a Service whose endpoints are not ready yet.
	noEndpointYet = apierrors.NewInternalError(errors.New(`failed calling webhook "voperatorversion.kudo.dev": failed to call webhook: ` +
		`Post "https://kudo-webhook-service.kudo-system.svc:443/validate-kudo-dev-v1beta1-operatorversion?timeout=10s": ` +
		`dial tcp 10.96.173.250:443: connect: no route to host`))
	denied = apierrors.NewForbidden(corev1.Resource("configmaps"), "x",
		errors.New(`admission webhook "vinstance.kudo.dev" denied the request: parameter NODE_COUNT is immutable`))
	badResponse = apierrors.NewInternalError(errors.New(`failed calling webhook "vinstance.kudo.dev": failed to call webhook: ` +
		`the server rejected our request for an unknown reason`))
)

// failing is a cluster whose creates fail with errs, one after another,
// before they succeed.
func failing(errs ...error) (client.WithWatch, *int) {
	calls := 0
	c := fake.NewClientBuilder().WithScheme(Scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			calls++
			if calls <= len(errs) {
				return errs[calls-1]
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	return c, &calls
}

func TestWritesTheWebhooksCouldNotAdmitAreSentAgain(t *testing.T) {
	saved := webhookBackoff
	webhookBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 4}
	t.Cleanup(func() { webhookBackoff = saved })

	tests := []struct {
		name      string
		errs      []error
		wantErr   error
		wantCalls int
		notices   int
		probe     bool
	}{
		{"a killed replica's endpoint, then the other replica", []error{killedReplica}, nil, 2, 1, false},
		{"no replica serving while the only one restarts, then it serves", []error{noReplica, noReplica, killedReplica}, nil, 4, 3, false},
		{"a new manager's Service before its endpoints are ready, then it serves", []error{noEndpointYet, noEndpointYet}, nil, 3, 2, false},
		{"a webhook's refusal is final", []error{denied}, denied, 1, 0, false},
		{"a webhook's bad answer is final", []error{badResponse}, badResponse, 1, 0, false},
		{"unreachable for longer than the backoff", []error{noReplica, noReplica, noReplica, noReplica, noReplica}, noReplica, 4, 4, false},
		{"a probe of whether the webhooks answer is sent once", []error{killedReplica}, killedReplica, 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner, calls := failing(tt.errs...)
			var notices bytes.Buffer
			c := retryUnreachableWebhooks(inner, &notices)
			ctx := context.Background()
			if tt.probe {
				ctx = Probe(ctx)
			}
			err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}})
			if !errors.Is(err, tt.wantErr) && (err == nil || tt.wantErr == nil || err.Error() != tt.wantErr.Error()) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if *calls != tt.wantCalls {
				t.Errorf("%d creates sent, want %d", *calls, tt.wantCalls)
			}
			if n := strings.Count(notices.String(), "could not reach an admission webhook"); n != tt.notices {
				t.Errorf("%d notices, want %d:\n%s", n, tt.notices, notices.String())
			}
		})
	}
}
