package diagnostics

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// TestCollectWritesTheOperatorVersionOfSpecOperatorVersionNamespace: the
// OperatorVersion collected is the one the Instance uses, in the namespace
// spec.operatorVersion.namespace names.
func TestCollectWritesTheOperatorVersionOfSpecOperatorVersionNamespace(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(
		&kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "shared", Name: "web-0.1.0"}, Spec: kudov1beta1.OperatorVersionSpec{Version: "0.1.0"}},
		&kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "web-0.1.0", Namespace: "shared"}},
		},
	).Build()
	dir := t.TempDir()
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	if err := Run(context.Background(), c, clientsetfake.NewClientset(), "apps", streams, &Options{Instance: "web", Directory: dir}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "operatorversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ov := &kudov1beta1.OperatorVersion{}
	if err := yaml.Unmarshal(data, ov); err != nil {
		t.Fatal(err)
	}
	if ov.Namespace != "shared" || ov.Name != "web-0.1.0" {
		t.Errorf("collected OperatorVersion %s/%s, want shared/web-0.1.0", ov.Namespace, ov.Name)
	}
}
