package rbac

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/render"
	"github.com/kudo-ng/kudo/internal/task"
)

// objects parses the YAML documents of a rendered template.
func objects(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.Objects("test.yaml", strings.Join(docs, "\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

const (
	deployment    = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}"
	service       = "apiVersion: v1\nkind: Service\nmetadata: {name: web}"
	configMap     = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}"
	namespacedCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: bkps.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Backup, plural: bkps}
  versions: [{name: v1, served: true, storage: true}]`
	clusterCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: stores.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Store, plural: stores}`
	backup = "apiVersion: example.com/v1\nkind: Backup\nmetadata: {name: nightly}"
	store  = "apiVersion: example.com/v1\nkind: Store\nmetadata: {name: shared}"
	pod    = "apiVersion: v1\nkind: Pod\nmetadata: {name: demo-deploy-main-gen-gen}"
)

// apply is the verbs of applied objects, as the summaries write them.
const apply = "get,create,update,patch,delete"

// finalizers is the rule every Instance "demo" of namespace "ns" has.
const finalizers = "ns kudo.dev/instances/finalizers [demo]: update"

func TestDerive(t *testing.T) {
	tests := []struct {
		name    string
		tasks   func(t *testing.T) []Task
		secrets []string
		held    []kudov1beta1.ObjectRef
		want    []string
		notes   []string
	}{{
		name: "a Deployment, a Service and a ConfigMap: one Role",
		tasks: func(t *testing.T) []Task {
			return []Task{{Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t, deployment, service, configMap)}}}
		},
		want: []string{"ns /configmaps,services [web]: " + apply, "ns apps/deployments [web]: " + apply, finalizers},
	}, {
		name: "a CRD and its custom resource: the CRD in the ClusterRole, the resource by the CRD's plural in the Role",
		tasks: func(t *testing.T) []Task {
			return []Task{
				{Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t, namespacedCRD, clusterCRD)}},
				{Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t, backup, store)}},
			}
		},
		want: []string{
			"cluster apiextensions.k8s.io/customresourcedefinitions [bkps.example.com,stores.example.com]: " + apply,
			"cluster example.com/stores [shared]: " + apply,
			"ns example.com/bkps [nightly]: " + apply,
			finalizers,
		},
	}, {
		name: "a Pipe task: its pod, exec into it, and the ConfigMap and Secret of its files",
		tasks: func(t *testing.T) []Task {
			return []Task{{Kind: kudov1beta1.PipeTaskKind, Rendered: task.Rendered{Objects: objects(t, pod), Pipes: []task.PipeFile{
				{Kind: "ConfigMap", Name: "demo.deploy.main.gen.gen.conf"}, {Kind: "Secret", Name: "demo.deploy.main.gen.gen.key"},
			}}}}
		},
		want: []string{
			"ns /configmaps [demo.deploy.main.gen.gen.conf]: " + apply,
			"ns /pods [demo-deploy-main-gen-gen]: get,create,patch,delete",
			"ns /pods/exec [demo-deploy-main-gen-gen]: get,create",
			"ns /secrets [demo.deploy.main.gen.gen.key]: " + apply,
			finalizers,
		},
	}, {
		name: "a Delete task: get and delete, merged into the rule of what is applied too",
		tasks: func(t *testing.T) []Task {
			return []Task{
				{Kind: kudov1beta1.DeleteTaskKind, Rendered: task.Rendered{Objects: objects(t, deployment, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}")}},
				{Kind: kudov1beta1.ToggleTaskKind, Rendered: task.Rendered{Objects: objects(t, deployment)}},
			}
		},
		want: []string{"ns apps/deployments [web]: " + apply, "ns batch/jobs [migrate]: get,delete", finalizers},
	}, {
		name: "a KudoOperator task: the child Instance, which its objects name their owner",
		tasks: func(t *testing.T) []Task {
			return []Task{
				{Kind: kudov1beta1.KudoOperatorTaskKind, Rendered: task.Rendered{Child: "demo-zookeeper"}},
				{Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: zk}")}},
			}
		},
		want: []string{
			"ns apps/statefulsets [zk]: " + apply,
			"ns kudo.dev/instances [demo-zookeeper]: " + apply,
			"ns kudo.dev/instances/finalizers [demo,demo-zookeeper]: update",
		},
	}, {
		name: "a KudoOperator task whose child gets sensitive values: the Secret it applies, and the child reads",
		tasks: func(t *testing.T) []Task {
			return []Task{{Where: "plan deploy", Kind: kudov1beta1.KudoOperatorTaskKind,
				Rendered: task.Rendered{Child: "demo-zookeeper", ChildSecret: true}}}
		},
		want: []string{
			"ns /secrets: " + apply,
			"ns kudo.dev/instances [demo-zookeeper]: " + apply,
			"ns kudo.dev/instances/finalizers [demo,demo-zookeeper]: update",
		},
		notes: []string{"plan deploy: the Secret of the child's sensitive values is named after the plan run: " +
			"the account may read and write every Secret it knows the name of"},
	}, {
		name: "objects in another namespace, which the package makes: a Role there",
		tasks: func(t *testing.T) []Task {
			return []Task{{Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t,
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: monitoring}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dashboards, namespace: monitoring}", service)}}}
		},
		want: []string{
			"cluster /namespaces [monitoring]: " + apply,
			"monitoring /configmaps [dashboards]: " + apply,
			"ns /services [web]: " + apply,
			finalizers,
		},
		notes: []string{"namespace monitoring is made by the package: the Role in it can be applied once it exists"},
	}, {
		name: "a ClusterRole and its binding: the ClusterRole's rules are held, in every namespace",
		tasks: func(t *testing.T) []Task {
			return []Task{{Where: "plan deploy", Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules:
- {apiGroups: [""], resources: [nodes], verbs: [get, list]}
- {apiGroups: [""], resources: [configmaps], resourceNames: [settings], verbs: [get]}
- {nonResourceURLs: [/metrics], verbs: [get]}`, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects: [{kind: ServiceAccount, name: app, namespace: ns}]`)}}}
		},
		want: []string{
			"cluster /nodes: get,list",
			"cluster /configmaps [settings]: get",
			"cluster rbac.authorization.k8s.io/clusterrolebindings,clusterroles [reader]: " + apply,
			"cluster /metrics: get",
			finalizers,
		},
		notes: []string{"ClusterRole reader (plan deploy): the account holds the rules it grants, in every namespace, as RBAC requires of who writes it"},
	}, {
		name: "a Role and bindings to it and to a ClusterRole the package does not make: bind on that one",
		tasks: func(t *testing.T) []Task {
			return []Task{{Where: "plan deploy", Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: peers}
rules: [{apiGroups: [""], resources: [endpoints], verbs: [get]}]`, `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: peers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: peers}`, `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: view}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}`)}}}
		},
		want: []string{
			"ns /endpoints: get",
			finalizers,
			"ns rbac.authorization.k8s.io/clusterroles [view]: bind",
			"ns rbac.authorization.k8s.io/rolebindings [peers,view]: " + apply,
			"ns rbac.authorization.k8s.io/roles [peers]: " + apply,
		},
		notes: []string{
			"Role peers (plan deploy): the account holds the rules it grants, as RBAC requires of who writes it",
			"RoleBinding view (plan deploy) binds ClusterRole view, which the package does not make: the account may bind it",
		},
	}, {
		name: "secret parameters: get on their Secrets, unless the package applies Secrets",
		tasks: func(t *testing.T) []Task {
			return []Task{{Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t, service)}}}
		},
		secrets: []string{"db-creds", "api-token"},
		want:    []string{"ns /secrets [api-token,db-creds]: get", "ns /services [web]: " + apply, finalizers},
	}, {
		name: "secret parameters of a package that applies Secrets: get on each, beside what it applies",
		tasks: func(t *testing.T) []Task {
			return []Task{{Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: tls}")}}}
		},
		secrets: []string{"db-creds"},
		want:    []string{"ns /secrets [db-creds,tls]: get", "ns /secrets [tls]: create,update,patch,delete", finalizers},
	}, {
		name: "what the Instance holds under names the plans no longer render: get and delete, for pruning",
		tasks: func(t *testing.T) []Task {
			return []Task{{Kind: kudov1beta1.ApplyTaskKind, Rendered: task.Rendered{Objects: objects(t, deployment)}}}
		},
		held: []kudov1beta1.ObjectRef{
			{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"},
			{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web-old"},
			{APIVersion: "v1", Kind: "Namespace", Name: "monitoring"},
			{APIVersion: "example.com/v1", Kind: "Gone", Namespace: "ns", Name: "x"},
		},
		want: []string{
			"cluster /namespaces [monitoring]: get,delete",
			"ns apps/deployments [web]: create,update,patch",
			"ns apps/deployments [web,web-old]: get,delete",
			finalizers,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &Input{Namespace: "ns", Instance: "demo", Secrets: tc.secrets, Tasks: tc.tasks(t), Held: tc.held}
			g, err := Derive(in, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summary(g)); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.notes, g.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// summary writes each rule on a line: scope, group/resources, names, verbs.
func summary(g *Grants) []string {
	var out []string
	write := func(scope string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			line := scope + " "
			if len(r.NonResourceURLs) > 0 {
				line += strings.Join(r.NonResourceURLs, ",")
			} else {
				line += strings.Join(r.APIGroups, ",") + "/" + strings.Join(r.Resources, ",")
			}
			if len(r.ResourceNames) > 0 {
				line += " [" + strings.Join(r.ResourceNames, ",") + "]"
			}
			out = append(out, line+": "+strings.Join(r.Verbs, ","))
		}
	}
	write("cluster", g.Cluster)
	for _, ns := range []string{"monitoring", "ns"} {
		write(ns, g.Namespaces[ns])
	}
	return out
}

func TestDeriveUnknownKinds(t *testing.T) {
	tasks := []Task{{
		Where: "plan deploy, phase main, step one, task app", Kind: kudov1beta1.ApplyTaskKind, Template: "monitor.yaml",
		Rendered: task.Rendered{Objects: objects(t, "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: web}")},
	}}
	in := &Input{Namespace: "ns", Instance: "demo", Tasks: tasks}

	_, err := Derive(in, nil)
	want := "plan deploy, phase main, step one, task app: kind ServiceMonitor.monitoring.coreos.com (template monitor.yaml): " +
		"not a built-in kind and its CRD is not in the package; run against a cluster that serves it"
	if err == nil || err.Error() != want {
		t.Errorf("offline: %v, want %s", err, want)
	}

	_, err = Derive(in, Unreachable{Err: fmt.Errorf("connection refused")})
	if err == nil || err.Error() != want+" (the cluster could not tell: connection refused)" {
		t.Errorf("unreachable cluster: %v", err)
	}

	cluster := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "monitoring.coreos.com", Version: "v1"}})
	_, err = Derive(in, cluster)
	if err == nil || !strings.HasSuffix(err.Error(), "(template monitor.yaml): not a built-in kind, its CRD is not in the package "+
		"and the cluster does not serve it: install its CRD first") {
		t.Errorf("a cluster without the CRD: %v", err)
	}

	cluster.AddSpecific(schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"},
		schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"},
		schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitor"}, meta.RESTScopeNamespace)
	g, err := Derive(in, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{finalizers, "ns monitoring.coreos.com/servicemonitors [web]: " + apply}, summary(g)); diff != "" {
		t.Errorf("a cluster that serves it (-want +got):\n%s", diff)
	}
}

// TestBuiltinPlurals: the plurals meta.RESTMapper guesses are the
// resources of Kubernetes' kinds, irregular ones included.
func TestBuiltinPlurals(t *testing.T) {
	for gk, want := range map[schema.GroupKind]mapping{
		{Kind: "Endpoints"}:                           {resource: schema.GroupResource{Resource: "endpoints"}, namespaced: true},
		{Group: "networking.k8s.io", Kind: "Ingress"}: {resource: schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, namespaced: true},
		{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: {
			resource: schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, namespaced: true},
		{Kind: "PersistentVolume"}: {resource: schema.GroupResource{Resource: "persistentvolumes"}},
		{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}: {
			resource: schema.GroupResource{Group: "storage.k8s.io", Resource: "csistoragecapacities"}, namespaced: true},
		{Group: "kudo.dev", Kind: "Instance"}: {resource: schema.GroupResource{Group: "kudo.dev", Resource: "instances"}, namespaced: true},
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: {
			resource: schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}},
	} {
		if got := builtin[gk]; got != want {
			t.Errorf("%s: %+v, want %+v", gk, got, want)
		}
	}
}

func TestManifests(t *testing.T) {
	g := &Grants{
		Namespaces: map[string][]rbacv1.PolicyRule{
			"team-a":     {{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get"}}},
			"monitoring": {{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		},
		Cluster: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}}},
	}
	var got []string
	for _, obj := range Manifests(g, Subject{Namespace: "team-a", Instance: "web", ServiceAccount: "deployer"}) {
		o := obj.(interface {
			GetName() string
			GetNamespace() string
		})
		got = append(got, fmt.Sprintf("%s %s/%s", obj.GetObjectKind().GroupVersionKind().Kind, o.GetNamespace(), o.GetName()))
	}
	want := []string{
		"Role team-a/kudo-web", "RoleBinding team-a/kudo-web",
		"Role monitoring/kudo-team-a-web", "RoleBinding monitoring/kudo-team-a-web",
		"ClusterRole /kudo-team-a-web", "ClusterRoleBinding /kudo-team-a-web",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifests (-want +got):\n%s", diff)
	}
}
