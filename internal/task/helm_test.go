package task

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
	"github.com/kudo-ng/kudo/internal/inventory"
)

// testChart is helm-operator-plugins' test chart, as its authors packaged it.
func testChart(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "chartrender", "testdata", "test-chart-1.2.3.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// chartOf is a chart named c of the templates given.
func chartOf(t *testing.T, templates map[string]string) []byte {
	t.Helper()
	files := map[string][]byte{"Chart.yaml": []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n")}
	for name, text := range templates {
		files["templates/"+name] = []byte(text)
	}
	chart, err := chartrender.Pack("c", files)
	if err != nil {
		t.Fatal(err)
	}
	return chart
}

func helmTask(chart, values string) *kudov1beta1.Task {
	return &kudov1beta1.Task{Name: "web", Kind: kudov1beta1.HelmTaskKind,
		Spec: kudov1beta1.TaskSpec{HelmTaskSpec: kudov1beta1.HelmTaskSpec{Chart: chart, Values: values}}}
}

func TestHelmBuild(t *testing.T) {
	in := buildInput(map[string]any{"COUNT": "2"})
	in.Site.OperatorVersion.Spec.Templates["web-values.yaml"] = "replicaCount: {{ .Params.COUNT }}\n"
	in.Site.OperatorVersion.Spec.Charts = map[string][]byte{"web": testChart(t)}
	in.Site.OperatorVersion.Spec.Charts["hooked"] = chartOf(t, map[string]string{
		"migrate.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations: {helm.sh/hook: pre-install}\n",
		"notify.yaml":  "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: notify\n  annotations: {helm.sh/hook: post-upgrade}\n",
		"cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n",
	})
	in.Site.OperatorVersion.Spec.Charts["weighted"] = chartOf(t, map[string]string{
		"schema.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: schema\n" +
			"  annotations: {helm.sh/hook: pre-install, helm.sh/hook-weight: \"5\"}\n",
		"secrets.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: secrets\n" +
			"  annotations: {helm.sh/hook: pre-install, helm.sh/hook-weight: \"-1\"}\n",
		"data.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: data\n" +
			"  annotations: {helm.sh/hook: \"pre-install,pre-upgrade\", helm.sh/hook-weight: \"5\"}\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n",
	})
	in.Site.OperatorVersion.Spec.Charts["undoing"] = chartOf(t, map[string]string{
		"undo.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: undo\n  annotations: {helm.sh/hook: pre-delete}\n",
	})
	tests := []struct {
		name, chart, values string
		// revision is the plan run's: 1 installs the chart.
		revision      int64
		want, wantErr string
	}{
		{"a chart nobody here wrote, with the values its template renders", "web", "web-values.yaml", 2,
			"[ServiceAccount/demo-test-chart Service/demo-test-chart Deployment/demo-test-chart] replicas 2 # test hooks not run: Pod demo-test-chart-test-connection", ""},
		{"the hooks in waves around the chart's objects, the install hooks kept, the upgrade hooks made anew", "hooked", "", 2,
			"[Job/migrate+] [ConfigMap/settings] [Job/notify*]", ""},
		{"hooks of one weight in a wave, lighter first", "weighted", "", 2,
			"[Secret/secrets+] [Job/data* Job/schema+] [ConfigMap/settings]", ""},
		{"at install, the hooks of upgrades only are left out", "hooked", "", 1,
			"[Job/migrate+] [ConfigMap/settings] # upgrade hooks not run at install: Job notify", ""},
		{"a plan run the status does not number makes every hook", "hooked", "", 0,
			"[Job/migrate+] [ConfigMap/settings] [Job/notify*]", ""},
		{"a hook of deletion is refused", "undoing", "", 2, "",
			"chart undoing: hook Job undo runs at pre-delete, which a Helm task does not run: do it in a plan of its own"},
		{"a chart the OperatorVersion does not hold", "gone", "", 2, "", `chart "gone" is not in the OperatorVersion`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in.Site.Revision = tt.revision
			intent, err := helm{}.Build(helmTask(tt.chart, tt.values), in)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var waves []string
			for _, wave := range intent.Waves {
				var names []string
				for _, o := range wave {
					name := o.GetKind() + "/" + o.GetName()
					switch intent.Hooks[inventory.RefOf(o)] {
					case KeptHook:
						name += "+" // kept once made
					case RemadeHook:
						name += "*" // made anew by each plan run
					}
					names = append(names, name)
					if o.GetLabels()[kudov1beta1.InstanceLabel] != "demo" {
						t.Errorf("%s/%s is not marked the Instance's: %v", o.GetKind(), o.GetName(), o.GetLabels())
					}
				}
				waves = append(waves, "["+strings.Join(names, " ")+"]")
			}
			got := strings.Join(waves, " ")
			for _, o := range intent.Objects {
				if o.GetKind() == "Deployment" {
					replicas, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
					got += fmt.Sprintf(" replicas %d", replicas)
				}
			}
			if intent.Note != "" {
				got += " # " + intent.Note
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// A chart renders with the Capabilities of the run's cluster; a cluster
// that cannot say them fails the step, saying so, rather than rendering
// with Helm's defaults what the cluster may not serve.
func TestHelmBuildRendersWithTheClustersCapabilities(t *testing.T) {
	in := buildInput(nil)
	in.Site.OperatorVersion.Spec.Charts = map[string][]byte{"kube": chartOf(t, map[string]string{
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube}\ndata: {minor: {{ .Capabilities.KubeVersion.Minor | quote }}}\n",
	})}
	in.Capabilities = func() (*chartrender.Capabilities, error) {
		return &chartrender.Capabilities{KubeVersion: "v1.34.4", APIVersions: []string{"v1"}}, nil
	}
	intent, err := helm{}.Build(helmTask("kube", ""), in)
	if err != nil {
		t.Fatal(err)
	}
	if minor, _, _ := unstructured.NestedString(intent.Objects[0].Object, "data", "minor"); minor != "34" {
		t.Errorf("minor %q, want the cluster's, 34", minor)
	}

	in.Capabilities = func() (*chartrender.Capabilities, error) { return nil, errors.New("connection refused") }
	if _, err := (helm{}).Build(helmTask("kube", ""), in); err == nil || err.Error() != "chart kube: its .Capabilities: connection refused" {
		t.Errorf("got %v", err)
	}
}
