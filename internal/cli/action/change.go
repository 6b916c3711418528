package action

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// Change is what update, upgrade or rollback changed: the object written
// (the Instance, or the typed object that makes it) and how to tell that
// the Instance has the change.
type Change struct {
	// Instance is the Instance changed, as it was read before.
	Instance *kudov1beta1.Instance
	// Object names the object written, as kubectl does:
	// instance.kudo.dev/zk, or zookeeper.zookeeper.kudo.dev/zk.
	Object string
	// typed is the typed object written, nil for the Instance.
	typed *unstructured.Unstructured
	// reached tells whether the manager has written the change of the typed
	// object into its Instance; nil when the change waits for nothing.
	reached func(*kudov1beta1.Instance) bool
}

func instanceChange(i *kudov1beta1.Instance) *Change {
	return &Change{Instance: i, Object: "instance.kudo.dev/" + i.Name}
}

func typedChange(i *kudov1beta1.Instance, typed *unstructured.Unstructured, reached func(*kudov1beta1.Instance) bool) *Change {
	return &Change{Instance: i, Object: clientutil.TypedName(typed), typed: typed, reached: reached}
}

// Wait waits until the Instance has the change, then until the plan it
// runs ends, printing its progress.
func (c *Change) Wait(ctx context.Context, cfg Config, timeout time.Duration) error {
	if c.reached != nil {
		if err := clientutil.AwaitInstanceOf(ctx, cfg.Client, c.typed, c.reached); err != nil {
			return err
		}
	}
	return Wait(ctx, cfg.Client, cfg.Namespace, cfg.Out, c.Instance.Name, timeout)
}
