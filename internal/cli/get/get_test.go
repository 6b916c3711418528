package get

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/output"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGetInKUDOsShape: get prints KUDO's trees, each line saying more at
// its end, and with -o KUDO's documents or array of the objects, their
// kinds set, so that yq and jq lines written against KUDO keep working.
func TestGetInKUDOsShape(t *testing.T) {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "team-a", Name: name} }
	zk := &kudov1beta1.Operator{ObjectMeta: meta("zookeeper")}
	zk.Status.Versions = []kudov1beta1.OperatorVersionSummary{{Version: "0.3.3"}}
	ov := &kudov1beta1.OperatorVersion{ObjectMeta: meta("zookeeper-3.4.14-0.3.3"), Spec: kudov1beta1.OperatorVersionSpec{
		Version: "0.3.3", AppVersion: "3.4.14"}}
	ov.Spec.Operator.Name = "zookeeper"
	i := &kudov1beta1.Instance{ObjectMeta: meta("zk")}
	i.Spec.OperatorVersion.Name = ov.Name
	i.Status.ActivePlan = &kudov1beta1.ActivePlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionComplete}
	i.Status.Conditions = []metav1.Condition{{Type: kudov1beta1.ReadyCondition, Status: metav1.ConditionTrue}}
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(zk, ov, i).Build()

	for _, tt := range []struct {
		golden, what string
		format       output.Format
	}{
		{"instances.golden", "instances", ""},
		{"all.golden", "all", ""},
		{"instances.yaml.golden", "instances", output.YAML},
		{"all.json.golden", "all", output.JSON},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := Run(context.Background(), c, "team-a", &out, tt.what, tt.format); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), out.String()); diff != "" {
				t.Errorf("output (-%s +got):\n%s", path, diff)
			}
		})
	}
}

// An Instance acting on another cluster says which, at the end of its line.
func TestGetNamesTheClusterOfAnInstance(t *testing.T) {
	i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "db"}}
	i.Spec.OperatorVersion.Name = "postgres-0.1.0"
	i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "prod"}}
	want := `db (Operator-Version: "postgres-0.1.0" Active-Plan: "" Ready: Unknown Cluster: "prod:value")`
	if got := instanceLine(i); got != want {
		t.Errorf("instanceLine = %s, want %s", got, want)
	}
}
