package task

import (
	"context"
	"fmt"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/internal/health"
)

// storageClassReadTimeout bounds the first read of a StorageClass, which
// starts the cache's informer of them: a manager whose RBAC lacks them
// must not hang a reconcile.
const storageClassReadTimeout = 10 * time.Second

// Judge is health.Check, with the verdict that needs another object than the
// one judged: a Pending claim whose StorageClass binds on first consumer is
// healthy (health.AwaitsFirstConsumer). c reads the StorageClass, from the
// manager's cache.
func Judge(ctx context.Context, c client.Reader, obj *unstructured.Unstructured) health.Result {
	verdict := health.Check(obj)
	class, pending := health.PendingClaimClass(obj)
	if verdict.Healthy || !pending {
		return verdict
	}
	ctx, cancel := context.WithTimeout(ctx, storageClassReadTimeout)
	defer cancel()
	sc := &storagev1.StorageClass{}
	if err := c.Get(ctx, client.ObjectKey{Name: class}, sc); err != nil {
		verdict.Message += fmt.Sprintf(" (its StorageClass %s cannot be read: %v)", class, err)
		return verdict
	}
	if ptr.Deref(sc.VolumeBindingMode, storagev1.VolumeBindingImmediate) == storagev1.VolumeBindingWaitForFirstConsumer {
		return health.AwaitsFirstConsumer(obj, class)
	}
	return verdict
}
