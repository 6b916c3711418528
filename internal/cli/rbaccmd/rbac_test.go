package rbaccmd

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/test/corpus"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// run runs the command offline and parses its output back: every object
// must be a role or a binding, of RBAC's fields only.
func run(t *testing.T, opts *Options) (string, []rbacv1.PolicyRule, error) {
	t.Helper()
	if opts.ServiceAccount == "" {
		opts.ServiceAccount = "default"
	}
	if opts.KubernetesVersion == "" {
		opts.KubernetesVersion = "1.34"
	}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(context.Background(), streams, opts); err != nil {
		return "", nil, err
	}
	objs, err := render.Objects("output", out.String())
	if err != nil {
		t.Fatalf("the output does not parse: %v\n%s", err, out)
	}
	var rules []rbacv1.PolicyRule
	for _, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		var into any
		switch obj.GetKind() {
		case "Role":
			into = &rbacv1.Role{}
		case "ClusterRole":
			into = &rbacv1.ClusterRole{}
		case "RoleBinding":
			into = &rbacv1.RoleBinding{}
		case "ClusterRoleBinding":
			into = &rbacv1.ClusterRoleBinding{}
		default:
			t.Fatalf("the output has a %s", obj.GetKind())
		}
		if err := yaml.UnmarshalStrict(data, into); err != nil {
			t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		if role, ok := into.(*rbacv1.Role); ok {
			rules = append(rules, role.Rules...)
		}
	}
	return out.String(), rules, nil
}

// resources lists the resources the rules name, with their names if any.
func resources(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, res := range r.Resources {
			if len(r.ResourceNames) > 0 {
				res += "[" + strings.Join(r.ResourceNames, ",") + "]"
			}
			out = append(out, res)
		}
	}
	slices.Sort(out)
	return out
}

// TestExamples runs rbac on the project's example packages: the output is
// the golden file's (go test -run TestExamples -update rewrites them).
func TestExamples(t *testing.T) {
	tests := map[string]struct {
		opts *Options
		want []string
	}{
		"hello": {
			opts: &Options{Package: filepath.Join(corpus.Examples(), "hello", "operator"), Namespace: "default"},
			want: []string{"deployments[hello-instance]", "instances/finalizers[hello-instance]", "services[hello-instance]"},
		},
		// Every task kind; the child hello Instance runs as the same account.
		"all-tasks": {
			opts: &Options{Package: filepath.Join(corpus.Examples(), "all-tasks", "operator"), Namespace: "team-a", Instance: "web",
				ServiceAccount: "deployer", ParameterOptions: action.ParameterOptions{Parameters: []string{"expose=false"}}},
			want: []string{"configmaps[web-settings,web.deploy.setup.secrets.generate.identity]", "deployments[web,web-hello]",
				"instances/finalizers[web,web-hello]", "instances[web-hello]", "jobs[web-farewell,web-migrate]",
				"pods/exec[web-deploy-setup-secrets-generate]", "pods[web-deploy-setup-secrets-generate]",
				"secrets[web.deploy.setup.secrets.generate.credentials]", "services[web,web-hello]"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, rules, err := run(t, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, resources(rules)); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), out); diff != "" {
				t.Errorf("output (-%s +got):\n%s", golden, diff)
			}
		})
	}
}

func TestSecretParameters(t *testing.T) {
	out, rules, err := run(t, &Options{Package: filepath.Join(corpus.Examples(), "hello", "operator"), Namespace: "default",
		ParameterOptions: action.ParameterOptions{Parameters: []string{"image=@secret:web-image/ref"}}})
	if err != nil {
		t.Fatal(err)
	}
	if note := "# Note: secret parameters image are rendered with their defaults, or a placeholder: their Secrets are not read\n"; !strings.Contains(out, note) {
		t.Errorf("no note %q in\n%s", note, out)
	}
	if got := resources(rules); !slices.Contains(got, "secrets[web-image]") {
		t.Errorf("no get on the Secret of the parameter: %v", got)
	}
}

// TestZookeeper: the conformance corpus' zookeeper derives offline — a
// StatefulSet, Services, a PodDisruptionBudget (policy/v1beta1, migrated),
// ConfigMaps, and the validation plan's Job, applied and deleted.
func TestZookeeper(t *testing.T) {
	out, rules, err := run(t, &Options{Package: corpus.Package(t, "zookeeper"), Namespace: "zk", Instance: "zk",
		ParameterOptions: action.ParameterOptions{Parameters: []string{"NODE_COUNT=5"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"configmaps[zk-bootstrap,zk-healthcheck]", "instances/finalizers[zk]", "jobs[zk-validation]",
		"poddisruptionbudgets[zk-pdb]", "services[zk-cs,zk-hs]", "statefulsets[zk-zookeeper]"}
	if diff := cmp.Diff(want, resources(rules)); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if strings.Contains(out, "ClusterRole") {
		t.Errorf("zookeeper needs no ClusterRole:\n%s", out)
	}
}

// pkg writes a package of one Apply task per template, run by the deploy
// plan, and a backup plan that renders backup.yaml, if given.
func pkg(t *testing.T, templates map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	operator := "apiVersion: kudo.dev/v1beta1\nname: demo\noperatorVersion: 0.1.0\nkubernetesVersion: 1.25.0\ntasks:\n"
	var names []string
	for name := range templates {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		task := strings.TrimSuffix(name, ".yaml")
		operator += "  - name: " + task + "\n    kind: Apply\n    spec:\n      resources: [" + name + "]\n"
	}
	operator += "plans:\n  deploy:\n    phases:\n      - name: main\n        steps:\n          - name: all\n            tasks: [app]\n"
	if _, ok := templates["backup.yaml"]; ok {
		operator += "  backup:\n    phases:\n      - name: main\n        steps:\n          - name: dump\n            tasks: [backup]\n"
	}
	files := map[string]string{
		"operator.yaml": operator,
		"params.yaml":   "apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: BUCKET\n    required: false\n",
	}
	for name, text := range templates {
		files[filepath.Join("templates", name)] = text
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAnotherNamespace: an object the kudo.dev/namespace annotation puts in
// another namespace, as the renderer does, is granted there.
func TestAnotherNamespace(t *testing.T) {
	dir := pkg(t, map[string]string{"app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboards\n" +
		"  annotations: {kudo.dev/namespace: monitoring}\n"})
	out, _, err := run(t, &Options{Package: dir, Namespace: "team-a", Instance: "web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Role\nmetadata:\n  name: kudo-team-a-web\n  namespace: monitoring\nrules:\n- apiGroups:\n  - \"\"\n" +
		"  resourceNames:\n  - dashboards\n  resources:\n  - configmaps\n", "kind: RoleBinding\nmetadata:\n  name: kudo-team-a-web\n  namespace: monitoring\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no\n%s\nin\n%s", want, out)
		}
	}
}

func TestErrorsName(t *testing.T) {
	app := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"
	for name, tc := range map[string]struct {
		templates map[string]string
		want      string
	}{
		"the template of a kind that is not known offline": {
			templates: map[string]string{"app.yaml": app, "backup.yaml": "apiVersion: velero.io/v1\nkind: Backup\nmetadata:\n  name: nightly\n"},
			want: "plan backup, phase main, step dump, task backup: kind Backup.velero.io (template backup.yaml): " +
				"not a built-in kind and its CRD is not in the package; run against a cluster that serves it",
		},
		"the plan of a template that does not render": {
			templates: map[string]string{"app.yaml": app, "backup.yaml": "bucket: {{ .Params.BUCKET.name }}\n"},
			want:      "plan backup, phase main, step dump, task backup: template: backup.yaml:1:",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, &Options{Package: pkg(t, tc.templates), Namespace: "default"})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want %s…", err, tc.want)
			}
		})
	}
}

// TestHeld: what the Instance holds now, read from the cluster, is granted
// for pruning; an Instance that cannot be read is a note, not an error.
func TestHeld(t *testing.T) {
	hello := filepath.Join(corpus.Examples(), "hello", "operator")
	i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-instance"}}
	i.Status.Inventory = []kudov1beta1.TaskInventory{{Objects: []kudov1beta1.InventoryObject{
		{ObjectRef: kudov1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "hello-renamed"}},
	}}}
	live := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(i).Build()
	_, rules, err := run(t, &Options{Package: hello, Namespace: "default", Live: live})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"deployments[hello-instance,hello-renamed]", "deployments[hello-instance]",
		"instances/finalizers[hello-instance]", "services[hello-instance]"}
	if diff := cmp.Diff(want, resources(rules)); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}

	refused := interceptor.NewClient(live, interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("connection refused")
		},
	})
	out, _, err := run(t, &Options{Package: hello, Namespace: "default", Live: refused})
	if err != nil {
		t.Fatal(err)
	}
	if note := "# Note: Instance hello-instance could not be read (connection refused): what it holds now is not granted, " +
		"and new parameters that rename it cannot prune it\n"; !strings.Contains(out, note) {
		t.Errorf("no note %q in\n%s", note, out)
	}
}
