package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/corpus"
)

// asUser is a client that acts as user, as kubectl --as does.
func asUser(user string) client.Client {
	GinkgoHelper()
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: k8sClient.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// bindRole binds a ClusterRole to a subject in one namespace.
func bindRole(ctx context.Context, ns, clusterRole string, subject rbacv1.Subject) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: clusterRole + "-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{subject},
	})).To(Succeed())
}

func userSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func accountSubject(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

// tenantNamespace is a namespace a cluster admin opened to the locked-down
// manager (config/tenancy): it may act as the namespace's service accounts.
func tenantNamespace(ctx context.Context) string {
	GinkgoHelper()
	ns := newNamespace(ctx)
	bindRole(ctx, ns, "kudo-tenant-impersonation", accountSubject(managerNamespace, managerDeployment))
	return ns
}

// tenantInstance creates an Instance of the tenant package, installed by an
// admin in the Instance's namespace.
func tenantInstance(ctx context.Context, ns, name, account string, params map[string]string) *kudov1beta1.Instance {
	GinkgoHelper()
	_, ov := installPackage(ctx, ns, filepath.Join("testdata", "tenant"))
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kudov1beta1.InstanceSpec{
			OperatorVersion: corev1.ObjectReference{Name: ov.Name}, ServiceAccountName: account, Parameters: params,
		},
	}
	Expect(k8sClient.Create(ctx, i)).To(Succeed())
	deleteAfterSpec(i)
	return i
}

// deleteAfterSpec deletes the Instance while the locked-down manager runs:
// the suite's privileged one would otherwise retry its escalations when it
// takes over.
func deleteAfterSpec(i *kudov1beta1.Instance) {
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, i))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), &kudov1beta1.Instance{}))
		}).Should(BeTrue())
	})
}

// deployFails waits for the first step of deploy to fail with a message.
func deployFails(ctx context.Context, i *kudov1beta1.Instance, message string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		_, step := firstDeployStep(ctx, g, i)
		g.Expect(step.Status).To(BeElementOf(kudov1beta1.ExecutionError, kudov1beta1.ExecutionFatalError))
		g.Expect(step.Message).To(ContainSubstring(message))
	}).Should(Succeed())
}

var _ = Describe("kudo-ng locked down for tenants (make deploy MULTI_TENANT=true)", Ordered, func() {
	var ctx context.Context
	BeforeAll(func() {
		ctx = context.Background()
		deployDir := filepath.Join(cluster.Dir, "deploy-multi-tenant")
		loadImage(managerImage)
		DeferCleanup(handOverToClusterManager())
		DeferCleanup(func() {
			Expect(cluster.Make("undeploy", "MULTI_TENANT=true", "ignore-not-found=true", "IMG="+managerImage, "DEPLOY_DIR="+deployDir)).To(Succeed())
		})
		Expect(cluster.Make("deploy", "MULTI_TENANT=true", "IMG="+managerImage, "DEPLOY_DIR="+deployDir)).To(Succeed())
		Eventually(func(g Gomega) { managerPods(ctx, g, managerImage) }).Should(Succeed())
	})

	It("runs the manager with --multi-tenant, without its privileged ClusterRole, impersonating only in namespaces opened to it", func() {
		d := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: managerDeployment}, d)).To(Succeed())
		Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--multi-tenant"))
		err := k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-manager-privileged-rolebinding"}, &rbacv1.ClusterRoleBinding{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)

		manager := "system:serviceaccount:" + managerNamespace + ":" + managerDeployment
		tenant := tenantNamespace(ctx)
		for _, check := range []struct{ args, want string }{
			{"create clusterrolebindings", "no"},
			{"create configmaps -n " + tenant, "no"},
			// kubectl 1.34 execs with a websocket GET: no get on any
			// subresource that runs or proxies (issue 45). TYPE/NAME would
			// name a pod: subresources are asked with --subresource.
			{"create pods --subresource=exec -n " + tenant, "no"},
			{"get pods --subresource=exec -n " + managerNamespace, "no"},
			{"get pods --subresource=attach -n " + tenant, "no"},
			{"get pods --subresource=portforward -n " + tenant, "no"},
			{"get pods --subresource=proxy -n " + tenant, "no"},
			{"get services --subresource=proxy -n " + tenant, "no"},
			{"get nodes --subresource=proxy", "no"},
			{"create serviceaccounts --subresource=token -n " + tenant, "no"},
			{"get pods -n kube-system", "yes"},
			{"create secrets -n " + tenant, "no"},
			// The Secret of its mask key, in its own namespace only.
			{"create secrets -n " + managerNamespace, "yes"},
			{"update secrets -n " + managerNamespace, "no"},
			{"impersonate serviceaccounts -n kube-system", "no"},
			{"impersonate serviceaccounts -n " + tenant, "yes"},
			{"watch configmaps -n kube-system", "yes"},
		} {
			Eventually(func(g Gomega) {
				args := append([]string{"auth", "can-i"}, strings.Fields(check.args)...)
				got, _ := cluster.Kubectl(append(args, "--as", manager)...)
				g.Expect(got).To(HaveSuffix(check.want+"\n"), "can-i %s", check.args)
			}).Should(Succeed())
		}

		// Its role may write every CustomResourceDefinition (the names of the
		// typed APIs come with packages); an admission policy lets it write
		// only those of the typed APIs it serves (issue 62).
		out, _ := cluster.Kubectl("auth", "can-i", "patch", "customresourcedefinitions", "--as", manager)
		Expect(out).To(HaveSuffix("yes\n"))
		Eventually(func(g Gomega) {
			out, err := cluster.Kubectl("patch", "crd", "trustpolicies.kudo.dev", "--as", manager, "--dry-run=server", "--type=merge",
				"-p", `{"metadata":{"labels":{"kudo.dev/operator":"hijack"}}}`)
			g.Expect(err).To(HaveOccurred(), "the manager patched another CustomResourceDefinition: %s", out)
			g.Expect(out + err.Error()).To(ContainSubstring("the manager writes only the CustomResourceDefinitions of the typed APIs it serves " +
				"(labelled kudo.dev/operator), not trustpolicies.kudo.dev"))
		}).Should(Succeed())

		var pods []corev1.Pod
		Eventually(func(g Gomega) { pods, _ = managerPods(ctx, g, managerImage) }).Should(Succeed())
		out, err = cluster.Kubectl("exec", "--as", manager, "-n", managerNamespace, pods[0].Name, "--", "/manager", "--help")
		Expect(err).To(HaveOccurred(), "kubectl exec as the manager ran: %s", out)
		Expect(out + err.Error()).To(ContainSubstring("forbidden"))
	})

	It("runs a tenant's Instance as its namespace's default service account, from install to uninstall and its cleanup plan", func() {
		ns := tenantNamespace(ctx)
		mustKudo(ns, "install", filepath.Join("testdata", "tenant"), "--instance", "t")
		i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t"}}
		deployFails(ctx, i, fmt.Sprintf(`User "system:serviceaccount:%s:default" cannot patch resource "configmaps"`, ns))

		bindRole(ctx, ns, "admin", accountSubject(ns, "default"))
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		mustKudo(ns, "update", "--instance", "t", "-p", "MESSAGE=bye", "--wait")
		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "t-config"}, cm)).To(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("message", "bye"))

		mustKudo(ns, "uninstall", "--instance", "t", "--wait")
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "t-config"}, &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
			err = k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "t-farewell"}, &corev1.Secret{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		}).Should(Succeed())
	})

	// grantAsPrinted applies what kubectl kudo rbac prints for the package,
	// less the first rule of the Instance's Role when lessOne.
	grantAsPrinted := func(ns, dir, instance string, lessOne bool) {
		GinkgoHelper()
		printed := mustKudo(ns, "rbac", dir, "--instance", instance)
		var docs []string
		for _, doc := range strings.Split(printed, "\n---\n") {
			obj := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal([]byte(doc), &obj.Object)).To(Succeed())
			if obj.GetKind() == "Role" && obj.GetName() == "kudo-"+instance && lessOne {
				rules, _, _ := unstructured.NestedSlice(obj.Object, "rules")
				Expect(unstructured.SetNestedSlice(obj.Object, rules[1:], "rules")).To(Succeed())
				out, err := yaml.Marshal(obj.Object)
				Expect(err).NotTo(HaveOccurred())
				doc = string(out)
			}
			docs = append(docs, doc)
		}
		file := filepath.Join(GinkgoT().TempDir(), "rbac.yaml")
		Expect(os.WriteFile(file, []byte(strings.Join(docs, "\n---\n")), 0o600)).To(Succeed())
		_, err := cluster.Kubectl("apply", "-f", file)
		Expect(err).NotTo(HaveOccurred())
	}

	// canI is kubectl auth can-i's answer for the namespace's default
	// service account.
	canI := func(ns, verb, object string) string {
		GinkgoHelper()
		out, _ := cluster.Kubectl("auth", "can-i", verb, object, "-n", ns, "--as", "system:serviceaccount:"+ns+":default")
		return strings.TrimSpace(out)
	}

	for _, pkg := range []struct{ name, dir, instance, update, object string }{
		{"the hello example", filepath.Join(corpus.Examples(), "hello", "operator"), "hello", "replicas=3", "deployments/hello"},
		{"zookeeper", "zookeeper", "zk", "NODE_COUNT=5", "statefulsets/zk-zookeeper"},
	} {
		It("grants exactly what kubectl kudo rbac prints for "+pkg.name+", on the objects it names: enough to install, update "+
			"and uninstall; one rule less is not", func() {
			dir := pkg.dir
			if pkg.name == "zookeeper" {
				dir = conformancePackage("zookeeper")
			}
			ns := tenantNamespace(ctx)
			grantAsPrinted(ns, dir, pkg.instance, false)
			resource, _, _ := strings.Cut(pkg.object, "/")
			Expect(canI(ns, "patch", pkg.object)).To(Equal("yes"))
			Expect(canI(ns, "patch", resource+"/a-colleagues")).To(Equal("no"))
			Expect(canI(ns, "delete", resource+"/a-colleagues")).To(Equal("no"))
			Expect(canI(ns, "list", resource)).To(Equal("no"))
			mustKudo(ns, "install", dir, "--instance", pkg.instance, "--wait")
			mustKudo(ns, "update", "--instance", pkg.instance, "-p", pkg.update, "--wait")
			mustKudo(ns, "uninstall", "--instance", pkg.instance, "--wait")

			short := tenantNamespace(ctx)
			grantAsPrinted(short, dir, pkg.instance, true)
			mustKudo(short, "install", dir, "--instance", pkg.instance)
			i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: short, Name: pkg.instance}}
			deleteAfterSpec(i)
			deployFails(ctx, i, fmt.Sprintf(`User "system:serviceaccount:%s:default" cannot`, short))
		})
	}

	It("runs zookeeper as a typed object in a tenant's namespace, as the account kubectl kudo rbac prints for it", func() {
		ns := tenantNamespace(ctx)
		grantAsPrinted(ns, conformancePackage("zookeeper"), "zk", false)
		typedZookeeper(ctx, ns)
	})

	It("runs a Pipe task as the tenant's service account on the real node, granted what kubectl kudo rbac prints: its pod, the copy of its file, its ConfigMap", func() {
		ns := tenantNamespace(ctx)
		dir := filepath.Join("testdata", "realnode")
		grantAsPrinted(ns, dir, "real", false)
		// The manager itself holds no pods/exec here: the copy ran as the account.
		mustKudo(ns, "install", dir, "--instance", "real", "--wait")
		mustKudo(ns, "uninstall", "--instance", "real", "--wait")
	})

	It("refuses an OperatorVersion from a user with edit in the namespace: supplying code is a cluster admin's", func() {
		ns := tenantNamespace(ctx)
		bindRole(ctx, ns, "edit", userSubject("e2e-tenant"))
		_, ov := installPackage(ctx, newNamespace(ctx), filepath.Join("testdata", "tenant"))
		own := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ov.Name}, Spec: ov.Spec}
		err := asUser("e2e-tenant").Create(ctx, own)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(`cannot create resource "operatorversions"`))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(own), &kudov1beta1.OperatorVersion{}))).To(BeTrue())
	})

	It("refuses a package's ClusterRoleBinding to cluster-admin: the service account may not make it", func() {
		ns := tenantNamespace(ctx)
		bindRole(ctx, ns, "admin", accountSubject(ns, "default"))
		i := tenantInstance(ctx, ns, "crb", "", map[string]string{"ESCALATE": "clusterrolebinding"})
		deployFails(ctx, i, fmt.Sprintf(`User "system:serviceaccount:%s:default" cannot patch resource "clusterrolebindings"`, ns))
		err := k8sClient.Get(ctx, client.ObjectKey{Name: ns + "-crb-admin"}, &rbacv1.ClusterRoleBinding{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	})

	It("refuses an object a package puts in kube-system with kudo.dev/namespace", func() {
		ns := tenantNamespace(ctx)
		bindRole(ctx, ns, "admin", accountSubject(ns, "default"))
		i := tenantInstance(ctx, ns, "away", "", map[string]string{"ESCALATE": "kube-system"})
		deployFails(ctx, i, `cannot patch resource "configmaps" in API group "" in the namespace "kube-system"`)
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: ns + "-away"}, &corev1.ConfigMap{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	})

	It("refuses a parameter value that injects a document, naming the parameter, and applies nothing of the template", func() {
		ns := tenantNamespace(ctx)
		bindRole(ctx, ns, "admin", accountSubject(ns, "default"))
		injected := "hi\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: injected\n  namespace: " + ns + "\ndata:\n  a: b"
		i := tenantInstance(ctx, ns, "inject", "", map[string]string{"MESSAGE": injected})
		deployFails(ctx, i, "MESSAGE")
		for _, name := range []string{"injected", "inject-config"} {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s: %v", name, err)
		}
	})

	It("refuses an Instance naming an OperatorVersion of a namespace its user may not read, until the user may", func() {
		ns, shared := tenantNamespace(ctx), newNamespace(ctx)
		bindRole(ctx, ns, "edit", userSubject("e2e-tenant"))
		bindRole(ctx, ns, "admin", accountSubject(ns, "default"))
		_, ov := installPackage(ctx, shared, filepath.Join("testdata", "tenant"))
		i := &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "borrowed"},
			Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name, Namespace: shared}},
		}
		err := asUser("e2e-tenant").Create(ctx, i.DeepCopy())
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("e2e-tenant may not get OperatorVersion %s/%s", shared, ov.Name))))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), &kudov1beta1.Instance{}))).To(BeTrue())

		bindRole(ctx, shared, "view", userSubject("e2e-tenant"))
		Eventually(func() error { return asUser("e2e-tenant").Create(ctx, i.DeepCopy()) }).Should(Succeed())
		deleteAfterSpec(i)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
	})

	It("keeps a deleted Instance's identity: dropping its service account is refused, and its cleanup runs as that account", func() {
		ns := tenantNamespace(ctx)
		Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}})).To(Succeed())
		configMaps := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
		}
		Expect(k8sClient.Create(ctx, configMaps)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
			Subjects:   []rbacv1.Subject{accountSubject(ns, "deployer")},
		})).To(Succeed())
		// The namespace's default account may do anything there: the
		// manager must not fall back to it.
		bindRole(ctx, ns, "admin", accountSubject(ns, "default"))
		i := tenantInstance(ctx, ns, "held", "deployer", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)

		Expect(k8sClient.Delete(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &kudov1beta1.Instance{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
			ready := meta.FindStatusCondition(got.Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Message).To(ContainSubstring(
				fmt.Sprintf(`User "system:serviceaccount:%s:deployer" cannot patch resource "secrets"`, ns)))
		}).Should(Succeed())

		got := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
		patch := client.MergeFrom(got.DeepCopy())
		got.Spec.ServiceAccountName = ""
		Expect(k8sClient.Patch(ctx, got, patch)).To(MatchError(ContainSubstring(
			"spec.serviceAccountName cannot change while the Instance is being deleted")))

		patchRole := client.MergeFrom(configMaps.DeepCopy())
		configMaps.Rules[0].Resources = append(configMaps.Rules[0].Resources, "secrets")
		Expect(k8sClient.Patch(ctx, configMaps, patchRole)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), &kudov1beta1.Instance{}))
		}).Should(BeTrue())
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "held-config"}, &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
			err = k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "held-farewell"}, &corev1.Secret{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		}).Should(Succeed())
	})

	tenantAttacks(true)
})
