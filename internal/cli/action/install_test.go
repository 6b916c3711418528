package action

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/test/corpus"
)

// installed is an OperatorVersion of operator web in namespace apps.
func installed(version, appVersion string) *kudov1beta1.OperatorVersion {
	return &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web-" + appVersion + "-" + version},
		Spec: kudov1beta1.OperatorVersionSpec{Operator: corev1.ObjectReference{Name: "web"}, Version: version, AppVersion: appVersion,
			Parameters: []kudov1beta1.Parameter{{Name: "REPLICAS", Default: ptr.To("1")}}},
	}
}

func TestInstallAction(t *testing.T) {
	hello := filepath.Join(corpus.Examples(), "hello", "operator")
	existing := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "taken"}}
	tests := []struct {
		name    string
		install Install
		// wantInstance and wantOV are the Instance created and the
		// OperatorVersion it runs; wantErr the error, after which the
		// namespace has only what it had.
		wantInstance, wantOV string
		wantErr              string
	}{
		{name: "in cluster: the newest OperatorVersion, the Instance named after its operator",
			install:      Install{Package: "web", InCluster: true},
			wantInstance: "web-instance", wantOV: "web-2.0-0.2.0"},
		{name: "in cluster: the versions asked for",
			install:      Install{Package: "web", Instance: "old", InCluster: true, PackageOptions: PackageOptions{OperatorVersion: "0.1.0"}},
			wantInstance: "old", wantOV: "web-1.0-0.1.0"},
		{name: "in cluster: no OperatorVersion of the versions asked for",
			install: Install{Package: "web", InCluster: true, PackageOptions: PackageOptions{AppVersion: "3.0"}},
			wantErr: "no OperatorVersion of operator web app version 3.0 in namespace apps"},
		{name: "in cluster: with --skip-instance there is nothing to install",
			install: Install{Package: "web", InCluster: true, SkipInstance: true},
			wantErr: "--skip-instance would install nothing"},
		{name: "in cluster: a parameter the OperatorVersion does not declare",
			install: Install{Package: "web", InCluster: true, ParameterOptions: ParameterOptions{Parameters: []string{"COLOR=red"}}},
			wantErr: "parameter COLOR is not defined"},
		{name: "an Instance of the name exists",
			install: Install{Package: "web", Instance: "taken", InCluster: true},
			wantErr: "instance taken already exists in namespace apps"},
		{name: "a package into a namespace that does not exist",
			install: Install{Package: hello},
			wantErr: "namespace apps does not exist: create it, or pass --create-namespace"},
		{name: "a package, the namespace created",
			install:      Install{Package: hello, Instance: "hi", CreateNamespace: true},
			wantInstance: "hi", wantOV: "hello-1.27.0-0.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []client.Object{installed("0.1.0", "1.0"), installed("0.2.0", "2.0"), existing.DeepCopy()}
			c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(objs...).Build()
			i, err := tt.install.Run(context.Background(), Config{Client: c, Namespace: "apps", Out: io.Discard, ErrOut: io.Discard})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				list := &kudov1beta1.InstanceList{}
				if err := c.List(context.Background(), list); err != nil || len(list.Items) != 1 {
					t.Errorf("a refused install left %d Instances (%v), want only the one there was", len(list.Items), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := &kudov1beta1.Instance{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "apps", Name: tt.wantInstance}, got); err != nil {
				t.Fatal(err)
			}
			if i.Name != tt.wantInstance || got.Spec.OperatorVersion.Name != tt.wantOV {
				t.Errorf("created %s of %s, want %s of %s", i.Name, got.Spec.OperatorVersion.Name, tt.wantInstance, tt.wantOV)
			}
		})
	}
}

func TestUpgradeOnlyGoesForward(t *testing.T) {
	tests := []struct {
		next, current string
		wantErr       string
	}{
		{"0.2.0", "0.1.0", ""},
		{"1.0.0", "0.9.9", ""},
		{"0.1.0", "0.1.0", "operator version 0.1.0 is not newer than the installed 0.1.0: upgrade only goes forward"},
		{"0.1.0", "0.2.0", "operator version 0.1.0 is not newer than the installed 0.2.0"},
		{"latest", "0.1.0", `operator version "latest" is not a semantic version`},
		// KUDO's OperatorVersions may carry any version: one that is not
		// semantic is upgraded from.
		{"0.1.0", "one", ""},
	}
	for _, tt := range tests {
		t.Run(tt.next+" over "+tt.current, func(t *testing.T) {
			err := newer(tt.next, tt.current)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("newer = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
