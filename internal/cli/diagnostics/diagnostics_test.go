package diagnostics

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
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

// TestCollectHidesSensitiveValues: the values of sensitive parameters —
// given in the spec, defaulted, or read from a Secret — appear in no file,
// whatever object holds them.
func TestCollectHidesSensitiveValues(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(
		&kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "db-0.1.0"}, Spec: kudov1beta1.OperatorVersionSpec{
			Parameters: []kudov1beta1.Parameter{
				{Name: "PIN", Sensitive: ptr.To(true)}, {Name: "SALT", Sensitive: ptr.To(true), Default: ptr.To("default-s3cr3t")},
				{Name: "PASSWORD"},
			},
		}},
		&kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "db"},
			Spec: kudov1beta1.InstanceSpec{
				OperatorVersion:  corev1.ObjectReference{Name: "db-0.1.0"},
				Parameters:       map[string]string{"PIN": "spec-s3cr3t"},
				SecretParameters: map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "db", Key: "password"}},
			},
		},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "db"}, Data: map[string][]byte{"password": []byte("secret-s3cr3t")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "db-config", Labels: map[string]string{kudov1beta1.InstanceLabel: "db"}},
			Data: map[string]string{"pin": "spec-s3cr3t", "salt": "default-s3cr3t", "password": "secret-s3cr3t"}},
	).Build()
	dir := t.TempDir()
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	if err := Run(context.Background(), c, clientsetfake.NewClientset(), "apps", streams, &Options{Instance: "db", Directory: dir}); err != nil {
		t.Fatal(err)
	}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(path)
		if strings.Contains(string(data), "s3cr3t") {
			t.Errorf("%s holds a sensitive value:\n%s", path, data)
		}
		return err
	})
	if err != nil || files < 3 {
		t.Fatalf("walked %d files: %v", files, err)
	}
	config, err := os.ReadFile(filepath.Join(dir, "objects", "configmap-db-config.yaml"))
	if err != nil || !strings.Contains(string(config), "pin: <sensitive PIN>") {
		t.Errorf("configmap-db-config.yaml: %v\n%s", err, config)
	}
}
