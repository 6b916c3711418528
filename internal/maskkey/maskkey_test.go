package maskkey

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

var (
	key      = types.NamespacedName{Namespace: "kudo-system", Name: DefaultName}
	current  = bytes.Repeat([]byte{1}, Size)
	previous = bytes.Repeat([]byte{2}, Size)
)

func secret(data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: data}
}

func TestFromData(t *testing.T) {
	tests := []struct {
		name         string
		data         map[string][]byte
		wantPrevious bool
		wantErr      string
	}{
		{name: "the current key", data: map[string][]byte{Current: current}},
		{name: "and the previous one", data: map[string][]byte{Current: current, Previous: previous}, wantPrevious: true},
		{name: "no current key", data: map[string][]byte{Previous: previous},
			wantErr: `data key "current" holds 0 bytes, a mask key needs 32 or more`},
		{name: "a current key too short to guess at no cost", data: map[string][]byte{Current: []byte("123456")},
			wantErr: `data key "current" holds 6 bytes`},
		{name: "a previous key too short", data: map[string][]byte{Current: current, Previous: []byte("123456")},
			wantErr: `data key "previous" holds 6 bytes, a mask key needs 32 or more: put the key current held there, or remove it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromData(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got.Current, current) || (len(got.Previous) == 1) != tt.wantPrevious ||
				(tt.wantPrevious && !bytes.Equal(got.Previous[0], previous)) {
				t.Errorf("FromData = %+v, %v", got, err)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name string
		objs []client.Object
		// create stands in for the API server's answer to a create.
		create      func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error
		wantCurrent []byte
		wantErr     string
	}{
		{name: "reads the Secret there is", objs: []client.Object{secret(map[string][]byte{Current: current})}, wantCurrent: current},
		{name: "makes the Secret, with a random key, when there is none"},
		{name: "reads the Secret another replica made first",
			create: func(ctx context.Context, c client.WithWatch, _ client.Object, _ ...client.CreateOption) error {
				if err := c.Create(ctx, secret(map[string][]byte{Current: current})); err != nil {
					return err
				}
				return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, key.Name)
			},
			wantCurrent: current},
		{name: "says what to do when its namespace does not exist",
			create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, key.Namespace)
			},
			wantErr: `namespaces "kudo-system" not found: create the namespace, or name another with --mask-key-namespace`},
		{name: "refuses a Secret without a key", objs: []client.Object{secret(map[string][]byte{"other": current})},
			wantErr: "secret kudo-system/kudo-ng-mask-key: data key \"current\" holds 0 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tt.objs...).
				WithInterceptorFuncs(interceptor.Funcs{Create: tt.create}).Build()
			got, err := Load(context.Background(), c, key)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			stored := &corev1.Secret{}
			if err := c.Get(context.Background(), key, stored); err != nil {
				t.Fatal(err)
			}
			if len(got.Current) != Size || !bytes.Equal(stored.Data[Current], got.Current) ||
				(tt.wantCurrent != nil && !bytes.Equal(got.Current, tt.wantCurrent)) {
				t.Errorf("Load = %x, the Secret holds %x, want %x", got.Current, stored.Data[Current], tt.wantCurrent)
			}
			if tt.wantCurrent == nil && bytes.Equal(got.Current, make([]byte, Size)) {
				t.Error("the key made is all zeroes")
			}
		})
	}
}
