package install

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

var zookeeper = filepath.Join("..", "..", "..", "..", "shared", "conformance", "zookeeper", "operator")

func newClient() client.Client {
	return fake.NewClientBuilder().WithScheme(clientutil.Scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).Build()
}

// kudoObjects counts the Operators, OperatorVersions and Instances of a namespace.
func kudoObjects(t *testing.T, c client.Client, ns string) int {
	t.Helper()
	ops, ovs, is := &kudov1beta1.OperatorList{}, &kudov1beta1.OperatorVersionList{}, &kudov1beta1.InstanceList{}
	for _, l := range []client.ObjectList{ops, ovs, is} {
		if err := c.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	return len(ops.Items) + len(ovs.Items) + len(is.Items)
}

func TestInstall(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	ctx := context.Background()
	c := newClient()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(ctx, c, "default", streams, &Options{Package: zookeeper, Instance: "zk", Parameters: []string{"NODE_COUNT=5"}}); err != nil {
		t.Fatal(err)
	}
	want := "operator.kudo.dev/zookeeper created\noperatorversion.kudo.dev/zookeeper-3.6.2-0.3.3 created\ninstance.kudo.dev/zk created\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	i := &kudov1beta1.Instance{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "zk"}, i); err != nil {
		t.Fatal(err)
	}
	if i.Spec.OperatorVersion.Name != "zookeeper-3.6.2-0.3.3" || i.Spec.Parameters["NODE_COUNT"] != "5" || i.Labels["kudo.dev/operator"] != "zookeeper" {
		t.Errorf("Instance = %+v", i)
	}

	err := Run(ctx, c, "default", streams, &Options{Package: zookeeper, Instance: "zk"})
	if err == nil || err.Error() != "instance zk already exists in namespace default: change it with kubectl kudo update or upgrade" {
		t.Errorf("second install: %v", err)
	}
	out.Reset()
	if err := Run(ctx, c, "default", streams, &Options{Package: zookeeper, SkipInstance: true}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "operator.kudo.dev/zookeeper unchanged\noperatorversion.kudo.dev/zookeeper-3.6.2-0.3.3 unchanged\n" {
		t.Errorf("an installed OperatorVersion must be reused: %s", out)
	}
}

func TestInstallRefusesBeforeWriting(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	bad := filepath.Join("..", "..", "packages", "testdata", "bad", "undefined-task")
	tests := []struct {
		name string
		ns   string
		opts Options
		want string
	}{
		{"an undefined parameter", "default", Options{Package: zookeeper, Parameters: []string{"NODE_COUNTS=5"}},
			"parameter NODE_COUNTS is not defined; the parameters are "},
		{"a bad parameter syntax", "default", Options{Package: zookeeper, Parameters: []string{"NODE_COUNT"}},
			`parameter "NODE_COUNT": expected NAME=VALUE`},
		{"a missing namespace", "prod", Options{Package: zookeeper},
			"namespace prod does not exist: create it, or pass --create-namespace"},
		{"an invalid package", "default", Options{Package: bad},
			`package bad is not valid: operator.yaml: plans.deploy.phases[0].steps[0].tasks[1]: task "ghost" is not defined in tasks`},
		{"a package that does not exist", "default", Options{Package: "./nowhere"}, "package ./nowhere: no such directory or file"},
		{"a name without a repository", "default", Options{Package: "zookeeper"},
			"package zookeeper is not a directory or file, and no repository is configured: pass --repo URL"},
		{"an unreachable repository", "default", Options{Package: "zookeeper", Repo: "http://127.0.0.1:1"},
			"repository http://127.0.0.1:1 is unreachable: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient()
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			err := Run(context.Background(), c, tt.ns, streams, &tt.opts)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one starting %q", err, tt.want)
			}
			if n := kudoObjects(t, c, tt.ns) + kudoObjects(t, c, "default"); n != 0 {
				t.Errorf("%d objects written despite the error", n)
			}
		})
	}
}
