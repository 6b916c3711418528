package upgrade

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/get"
	"github.com/kudo-ng/kudo/internal/cli/install"
)

var firstOperator = filepath.Join("..", "..", "..", "..", "shared", "conformance", "first-operator", "operator")

// version writes a copy of first-operator with another operatorVersion.
func version(t *testing.T, v string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"operator.yaml", "params.yaml", "templates/deployment.yaml"} {
		data, err := os.ReadFile(filepath.Join(firstOperator, f))
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.Replace(data, []byte(`operatorVersion: "0.2.0"`), []byte(`operatorVersion: "`+v+`"`), 1)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestUpgrade(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).Build()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := install.Run(ctx, c, "default", streams, &install.Options{Package: firstOperator, Instance: "web"}); err != nil {
		t.Fatal(err)
	}

	err := Run(ctx, c, "default", streams, &Options{Package: firstOperator, Instance: "web"})
	if err == nil || err.Error() != "operator version 0.2.0 is not newer than the installed 0.2.0: upgrade only goes forward" {
		t.Errorf("upgrade to the same version: %v", err)
	}
	out.Reset()
	if err := Run(ctx, c, "default", streams, &Options{Package: version(t, "0.3.0"), Instance: "web", Parameters: []string{"replicas=4"}}); err != nil {
		t.Fatal(err)
	}
	if want := "operator.kudo.dev/first-operator unchanged\noperatorversion.kudo.dev/first-operator-0.3.0 created\n" +
		"instance.kudo.dev/web upgraded to first-operator-0.3.0\n"; out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, i); err != nil {
		t.Fatal(err)
	}
	if i.Spec.OperatorVersion.Name != "first-operator-0.3.0" || i.Spec.Parameters["replicas"] != "4" {
		t.Errorf("Instance spec = %+v", i.Spec)
	}

	out.Reset()
	if err := get.Run(ctx, c, "default", out, "operatorversions"); err != nil {
		t.Fatal(err)
	}
	want := "OPERATOR VERSION      OPERATOR        VERSION  APP VERSION\n" +
		"first-operator-0.2.0  first-operator  0.2.0    \nfirst-operator-0.3.0  first-operator  0.3.0    \n"
	if out.String() != want {
		t.Errorf("get operatorversions:\n%q\nwant\n%q", out, want)
	}
	if err := get.Run(ctx, c, "default", out, "pods"); err == nil {
		t.Error("get pods must be refused")
	}
}
