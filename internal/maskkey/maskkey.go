// Package maskkey keeps the keys the manager masks sensitive values with
// (params.MaskKeys) in a Secret of its own namespace: made at the manager's
// first start, read at every start, rotated by hand (docs/secrets.md).
package maskkey

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/internal/params"
)

const (
	// DefaultName is the Secret's name.
	DefaultName = "kudo-ng-mask-key"
	// Current is the data key of the key that masks; Previous, optional, of
	// the one it replaced, whose masks still verify.
	Current  = "current"
	Previous = "previous"
	// Size is the length of a key the manager makes, and the least it takes:
	// an HMAC-SHA256 key as long as its output.
	Size = 32
)

// The manager makes the Secret and reads it, in its own namespace only
// (a Role, which config/rbac binds): it never changes it, and reads it from
// the API server, as its cache holds no Secret's data.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=create
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get,resourceNames=kudo-ng-mask-key

// Load reads the mask keys from the Secret, and makes it, with a new random
// current key, when it does not exist yet. c must read from the API server.
// Replicas starting at once make it once: the one whose create fails reads
// the other's.
func Load(ctx context.Context, c client.Client, key types.NamespacedName) (params.MaskKeys, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		secret, err = create(ctx, c, key)
		if apierrors.IsAlreadyExists(err) {
			secret = &corev1.Secret{}
			err = c.Get(ctx, key, secret)
		}
	}
	if err != nil {
		return params.MaskKeys{}, fmt.Errorf("reading the mask key, Secret %s: %w", key, err)
	}
	keys, err := FromData(secret.Data)
	if err != nil {
		return params.MaskKeys{}, fmt.Errorf("secret %s: %w", key, err)
	}
	return keys, nil
}

func create(ctx context.Context, c client.Client, key types.NamespacedName) (*corev1.Secret, error) {
	current := make([]byte, Size)
	if _, err := rand.Read(current); err != nil {
		return nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{"app.kubernetes.io/name": "kudo-ng"}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{Current: current},
	}
	if err := c.Create(ctx, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: create the namespace, or name another with --mask-key-namespace", err)
		}
		return nil, err
	}
	return secret, nil
}

// FromData reads the keys from the Secret's data: current, and previous if
// it is there, each of at least Size bytes.
func FromData(data map[string][]byte) (params.MaskKeys, error) {
	keys := params.MaskKeys{Current: data[Current]}
	if len(keys.Current) < Size {
		return params.MaskKeys{}, fmt.Errorf("data key %q holds %d bytes, a mask key needs %d or more: "+
			"put %d random bytes there (docs/secrets.md)", Current, len(keys.Current), Size, Size)
	}
	if previous, ok := data[Previous]; ok {
		if len(previous) < Size {
			return params.MaskKeys{}, fmt.Errorf("data key %q holds %d bytes, a mask key needs %d or more: "+
				"put the key current held there, or remove it", Previous, len(previous), Size)
		}
		keys.Previous = [][]byte{previous}
	}
	return keys, nil
}
