package clientutil

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// webhookBackoff paces the writes sent again after the API server could not
// reach an admission webhook: for about 25 s, which covers a replica that
// died until its endpoint leaves the webhooks' Service (a second or two), and
// a lone manager's restart.
var webhookBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 8, Cap: 5 * time.Second}

// unreachable are how the API server says it could not reach a webhook: a
// replica gone, none serving (kube-proxy rejects a Service without ready
// endpoints: "no route to host"), or one that stopped answering.
var unreachable = []string{"connection refused", "no endpoints available", "no route to host", "connection reset", "i/o timeout",
	"context deadline exceeded"}

// webhookUnreachable: the API server refused the write because it could not
// reach an admission webhook (a manager replica killed while the Service
// still routes to it, or no replica serving). It admitted nothing, so the
// write may be sent again. A webhook's own refusal is not this.
func webhookUnreachable(err error) bool {
	if !apierrors.IsInternalError(err) {
		return false
	}
	msg := err.Error()
	if !strings.Contains(msg, "failed calling webhook") {
		return false
	}
	for _, transport := range unreachable {
		if strings.Contains(msg, transport) {
			return true
		}
	}
	return false
}

type probeKey struct{}

// Probe marks the writes of ctx as asking whether the webhooks answer (kubectl
// kudo init --wait): they are sent once, and their errors are the answer.
func Probe(ctx context.Context) context.Context { return context.WithValue(ctx, probeKey{}, true) }

// retryUnreachableWebhooks sends a write again, saying so on notices, while
// the API server could not reach an admission webhook to admit it.
func retryUnreachableWebhooks(c client.WithWatch, notices io.Writer) client.WithWatch {
	send := func(ctx context.Context, write func() error) error {
		if ctx.Value(probeKey{}) != nil {
			return write()
		}
		return retry.OnError(webhookBackoff, func(err error) bool {
			if !webhookUnreachable(err) {
				return false
			}
			_, _ = fmt.Fprintf(notices, "The API server could not reach an admission webhook, so it admitted nothing: sending again (%v)\n", err)
			return true
		}, write)
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return send(ctx, func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return send(ctx, func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return send(ctx, func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return send(ctx, func() error { return c.Delete(ctx, obj, opts...) })
		},
	})
}
