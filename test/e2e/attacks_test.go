package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/packages"
)

// The attacks of issue 45, tried against the in-cluster manager of each mode
// by a user who may only create and edit Instances in one namespace. Each
// asserts the cluster afterwards: nothing of anyone else's deleted or taken
// over, the manager's pods not restarted, another tenant deploying
// meanwhile. docs/security.md lists them.

const attacker = "e2e-mallory"

// aliasBomb is one 40,000-character anchored scalar aliased 10,000 times:
// 70 KB of text that expand to 400 MB.
func aliasBomb() string {
	return "&a " + strings.Repeat("x", 40000) + "\n  b: [" + strings.Repeat("*a,", 9999) + "*a]"
}

// documentsBomb is issue 62's first attack: seven documents, each a list
// of small maps aliased a thousand times, each within the limits alone
// (195,000 nodes), which parsed together took 500 MB of the manager's.
func documentsBomb() string {
	var doc strings.Builder
	doc.WriteString("kind: ConfigMap\napiVersion: v1\nm: &m [")
	for i := range 64 {
		fmt.Fprintf(&doc, "{k%d: v},", i)
	}
	doc.WriteString("{}]\nl: [" + strings.Repeat("*m,", 1000) + "*m]\n")
	return "x\n" + strings.Repeat("---\n"+doc.String(), 7)
}

// openNamespace is a namespace for a tenant's Instances: in lockdown it is
// opened to the manager, and its default account, which they act as, is
// admin there.
func openNamespace(ctx context.Context, lockdown bool) string {
	GinkgoHelper()
	if !lockdown {
		return newNamespace(ctx)
	}
	ns := tenantNamespace(ctx)
	bindRole(ctx, ns, "admin", accountSubject(ns, "default"))
	return ns
}

// attackerNamespace is an open namespace where the attacker may only create
// and edit Instances, with the attacker package an admin installed.
func attackerNamespace(ctx context.Context, lockdown bool) (string, *kudov1beta1.OperatorVersion) {
	GinkgoHelper()
	ns := openNamespace(ctx, lockdown)
	bindRole(ctx, ns, "kudo-instance-editor-role", userSubject(attacker))
	_, ov := installPackage(ctx, ns, filepath.Join("testdata", "attacker"))
	return ns, ov
}

// attack creates, as the attacker, an Instance of the attacker package.
func attack(ctx context.Context, ns string, ov *kudov1beta1.OperatorVersion, name string, params map[string]string) *kudov1beta1.Instance {
	GinkgoHelper()
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}, Parameters: params},
	}
	Expect(asUser(attacker).Create(ctx, i)).To(Succeed())
	deleteAfterSpec(i)
	return i
}

// colleagues makes what another user of ns made, named name: a ConfigMap
// and a Service, no Instance's, on the port the attacker package's has, so
// that once handed over the two applies merge into a valid Service.
func colleagues(ctx context.Context, ns, name string) (*corev1.ConfigMap, *corev1.Service) {
	GinkgoHelper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"owner": "colleague"}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	Expect(k8sClient.Create(ctx, cm)).To(Succeed())
	Expect(k8sClient.Create(ctx, svc)).To(Succeed())
	return cm, svc
}

// untouched asserts that obj is as it was made: there, not being deleted,
// and carrying nothing of kudo-ng's.
func untouched(ctx context.Context, obj client.Object) {
	GinkgoHelper()
	live := obj.DeepCopyObject().(client.Object)
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), live)).To(Succeed())
	Expect(live.GetDeletionTimestamp()).To(BeNil(), "%T %s is being deleted", obj, obj.GetName())
	Expect(live.GetOwnerReferences()).To(BeEmpty(), "%T %s was taken over", obj, obj.GetName())
	Expect(live.GetLabels()).NotTo(HaveKey(kudov1beta1.InstanceLabel), "%T %s was taken over", obj, obj.GetName())
	Expect(live.GetAnnotations()).NotTo(HaveKey(kudov1beta1.AppliedHashAnnotation), "%T %s was applied over", obj, obj.GetName())
}

// managerRestarts is each manager pod's uid and restart count.
func managerRestarts(ctx context.Context) map[types.UID]int32 {
	GinkgoHelper()
	list := &corev1.PodList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(managerNamespace), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
	restarts := map[types.UID]int32{}
	for _, pod := range list.Items {
		if pod.DeletionTimestamp == nil && len(pod.Status.ContainerStatuses) > 0 {
			restarts[pod.UID] = pod.Status.ContainerStatuses[0].RestartCount
		}
	}
	Expect(restarts).To(HaveLen(2))
	return restarts
}

// stepOf waits for a step of deploy to reach a status with a message.
func stepOf(ctx context.Context, i *kudov1beta1.Instance, step string, status kudov1beta1.ExecutionStatus, message string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		got := &kudov1beta1.Instance{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
		ps := got.Status.PlanStatus["deploy"]
		for _, s := range ps.Steps() {
			if s.Name == step {
				g.Expect(s.Status).To(Equal(status), describe(&ps))
				g.Expect(s.Message).To(ContainSubstring(message), describe(&ps))
				return
			}
		}
		g.Expect(ps.Phases).NotTo(BeEmpty(), "no step %s yet", step)
	}).Should(Succeed())
}

// valueFailsItsStep is the attacker's Instance named name, its VALUE value:
// its step fails saying why, the manager's pods do not restart, and another
// tenant's Instance deploys meanwhile.
func valueFailsItsStep(lockdown bool, name, value, why string) {
	GinkgoHelper()
	ctx := context.Background()
	before := managerRestarts(ctx)
	ns, ov := attackerNamespace(ctx, lockdown)
	bomb := attack(ctx, ns, ov, name, map[string]string{"VALUE": value})

	other := openNamespace(ctx, lockdown)
	meanwhile := install(ctx, other, filepath.Join("testdata", "tenant"), "meanwhile", nil)
	deleteAfterSpec(meanwhile)

	stepOf(ctx, bomb, "value", kudov1beta1.ExecutionFatalError, why)
	planStatus(ctx, meanwhile, "deploy", kudov1beta1.ExecutionComplete)
	Expect(managerRestarts(ctx)).To(Equal(before), "a manager pod restarted or was replaced")
}

// readyConditionOf is obj's Ready condition, read inside an Eventually.
func readyConditionOf(ctx context.Context, g Gomega, obj interface {
	client.Object
	GetConditions() []metav1.Condition
}) *metav1.Condition {
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	ready := meta.FindStatusCondition(obj.GetConditions(), kudov1beta1.ReadyCondition)
	g.Expect(ready).NotTo(BeNil())
	return ready
}

// tenantAttacks are the specs of issue 45's attacks, for the ordered
// container of a mode whose manager runs in the cluster.
func tenantAttacks(lockdown bool) {
	mode := "default mode"
	if lockdown {
		mode = "lockdown"
	}

	It(mode+": a parameter value that is an alias bomb fails its step, the manager stays up, and another tenant deploys meanwhile", func() {
		valueFailsItsStep(lockdown, "bomb", aliasBomb(),
			"parameter VALUE's value breaks the template's YAML: document 1: its aliases (*name) expand it to more than 4 MiB")
	})

	It(mode+": a parameter value of many documents, each within the limits alone, fails its step, the manager stays up, "+
		"and another tenant deploys meanwhile (issue 62)", func() {
		valueFailsItsStep(lockdown, "documents", documentsBomb(),
			"parameter VALUE's value breaks the template's YAML: document 3: it holds more than 262144 YAML nodes")
	})

	It(mode+": a health rule that would build gigabytes is refused when compiled, naming it, and the manager stays up (issue 62)", func() {
		ctx := context.Background()
		before := managerRestarts(ctx)
		ns := newNamespace(ctx)
		p, err := packages.Read(filepath.Join("testdata", "attacker"))
		Expect(err).NotTo(HaveOccurred())
		op, ov, err := p.Convert(ns)
		Expect(err).NotTo(HaveOccurred())
		// Eight replaces, each turning one character into sixteen: 4 GiB.
		rule := "'" + strings.Repeat("a", 16) + "'" + strings.Repeat(".replace('a', '"+strings.Repeat("a", 16)+"')", 8) + " != ''"
		ov.Spec.HealthChecks = []kudov1beta1.HealthCheck{{APIVersion: "v1", Kind: "ConfigMap", Current: rule}}
		Expect(k8sClient.Create(ctx, op)).To(Succeed())
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		Eventually(func(g Gomega) {
			ready := readyConditionOf(ctx, g, ov)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Message).To(ContainSubstring("healthChecks[0].current"))
			g.Expect(ready.Message).To(ContainSubstring("estimated rule cost exceeds budget"))
		}).Should(Succeed())
		Expect(managerRestarts(ctx)).To(Equal(before), "a manager pod restarted or was replaced")
	})

	It(mode+": a package's own typed API group, which the typed objects' webhook does not admit, is not served (issue 62)", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		p, err := packages.Read(filepath.Join("testdata", "attacker"))
		Expect(err).NotTo(HaveOccurred())
		op, ov, err := p.Convert(ns)
		Expect(err).NotTo(HaveOccurred())
		ov.Spec.TypedAPI = &kudov1beta1.TypedAPI{Group: ns + ".example.com"}
		Expect(k8sClient.Create(ctx, op)).To(Succeed())
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(readyConditionOf(ctx, g, op).Message).To(ContainSubstring(fmt.Sprintf("no typed API: webhook vtyped.kudo.dev does not admit the creates and updates of attackers.%s.example.com", ns)))
		}).Should(Succeed())
		err = k8sClient.Get(ctx, client.ObjectKey{Name: "attackers." + ns + ".example.com"}, customResourceDefinition())
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	})

	It(mode+": an Operator's status counts the Instances of other namespaces, naming none (issue 62)", func() {
		ctx := context.Background()
		ns, ov := attackerNamespace(ctx, lockdown)
		other := openNamespace(ctx, lockdown)
		elsewhere := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "elsewhere"},
			Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name, Namespace: ns}}}
		Expect(k8sClient.Create(ctx, elsewhere)).To(Succeed())
		deleteAfterSpec(elsewhere)
		Eventually(func(g Gomega) {
			op := &kudov1beta1.Operator{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: ov.Spec.Operator.Name}, op)).To(Succeed())
			g.Expect(op.Status.Versions).To(HaveLen(1))
			g.Expect(op.Status.Versions[0].InstancesElsewhere).To(Equal(int32(1)))
			g.Expect(fmt.Sprint(op.Status)).NotTo(ContainSubstring(other))
		}).Should(Succeed())
	})

	It(mode+": a flood of OperatorVersions that render until their timeout at most doubles another tenant's install time, or adds a second (issue 62)", func() {
		floodDelaysOnlyItsSender(lockdown)
	})

	It(mode+": a typed object's status forged to list another tenant's ConfigMap deletes it neither at an update nor at uninstall (issue 62)", func() {
		forgedStatusDeletesNothing(lockdown)
	})

	It(mode+": another namespace's newer package of the same name and kind neither takes the kind nor types its objects (issue 62)", func() {
		squatterTypesNothing(lockdown)
	})

	It(mode+": an Instance named after another's objects neither deletes them (Toggle off, Delete) nor takes them over (Apply)", func() {
		ctx := context.Background()
		ns, ov := attackerNamespace(ctx, lockdown)
		victim := newNamespace(ctx)
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: victim}}
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, role))).To(Succeed()) })
		cm, svc := colleagues(ctx, ns, victim)

		// Named after the other tenant's namespace, the admin's ClusterRole
		// and the colleague's objects, switched off: its plan deletes them.
		deleting := attack(ctx, ns, ov, victim, nil)
		planStatus(ctx, deleting, "deploy", kudov1beta1.ExecutionComplete)
		stepOf(ctx, deleting, "workload", kudov1beta1.ExecutionComplete, fmt.Sprintf("kept ConfigMap %s/%s: it is no Instance's", ns, victim))
		stepOf(ctx, deleting, "cluster", kudov1beta1.ExecutionComplete, fmt.Sprintf("kept Namespace %s: it is no Instance's", victim))
		stepOf(ctx, deleting, "delete", kudov1beta1.ExecutionComplete, fmt.Sprintf("kept ClusterRole %s: it is no Instance's", victim))
		for _, obj := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: victim}}, role, cm, svc} {
			untouched(ctx, obj)
		}

		// Named after the colleague's web objects, switched on: its plan
		// applies over them.
		webCM, webSvc := colleagues(ctx, ns, "web")
		taking := attack(ctx, ns, ov, "web", map[string]string{"WORKLOAD": "true"})
		stepOf(ctx, taking, "workload", kudov1beta1.ExecutionError,
			fmt.Sprintf("ConfigMap %s/web exists and is not Instance %s/web's: an Instance takes over nothing it did not make; "+
				"to hand it over, annotate it kudo.dev/adopt=%s/web", ns, ns, ns))
		untouched(ctx, webCM)
		untouched(ctx, webSvc)
		Expect(webCM.Data).To(HaveKeyWithValue("owner", "colleague"))

		// Handed over by whoever may write them, they are the Instance's.
		for _, obj := range []client.Object{webCM, webSvc} {
			patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
			obj.SetAnnotations(map[string]string{kudov1beta1.AdoptAnnotation: ns + "/web"})
			Expect(k8sClient.Patch(ctx, obj, patch)).To(Succeed())
		}
		stepOf(ctx, taking, "workload", kudov1beta1.ExecutionComplete, "")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(webCM), webCM)).To(Succeed())
		Expect(webCM.Data).To(HaveKeyWithValue("owner", "attacker"))
	})

	It(mode+": an Instance acts as no service account and reads no Secret its user may not", func() {
		ctx := context.Background()
		ns, ov := attackerNamespace(ctx, lockdown)
		Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci"}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci-token"},
			StringData: map[string]string{"token": "s3cr3t-token"}})).To(Succeed())

		asCI := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "as-ci"},
			Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}, ServiceAccountName: "ci"}}
		err := asUser(attacker).Create(ctx, asCI)
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("spec.serviceAccountName: %s may not impersonate ServiceAccount %s/ci", attacker, ns))))

		reading := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reading"},
			Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name},
				SecretParameters: map[string]kudov1beta1.SecretKeyReference{"VALUE": {Name: "ci-token", Key: "token"}}}}
		err = asUser(attacker).Create(ctx, reading)
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("spec.secretParameters.VALUE: %s may not get Secret %s/ci-token", attacker, ns))))
		for _, i := range []*kudov1beta1.Instance{asCI, reading} {
			Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), &kudov1beta1.Instance{}))).To(BeTrue())
		}
		err = k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "reading-value"}, &corev1.ConfigMap{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	})

	It(mode+": an Instance acts on no cluster whose kubeconfig its user may not get, nor on one the admin did not list (issue 70)", func() {
		ctx := context.Background()
		ns, ov := attackerNamespace(ctx, lockdown)
		// The manager's own API server, as any pod sees it, with a program
		// to run for a token: both refused, and nothing applied here.
		kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://kubernetes.default.svc'}\n" +
			"users:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}\n" +
			"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod-kubeconfig"},
			StringData: map[string]string{"value": kubeconfig}})).To(Succeed())
		remote := func(name string) *kudov1beta1.Instance {
			return &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name},
					KubeConfig: &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "prod-kubeconfig"}}}}
		}
		err := asUser(attacker).Create(ctx, remote("elsewhere"))
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("spec.kubeConfig.secretRef: %s may not get Secret %s/prod-kubeconfig", attacker, ns))))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "elsewhere"}, &kudov1beta1.Instance{}))).To(BeTrue())

		before := managerRestarts(ctx)
		byAdmin := remote("by-admin")
		Expect(k8sClient.Create(ctx, byAdmin)).To(Succeed())
		deleteAfterSpec(byAdmin)
		Eventually(func(g Gomega) {
			ready := readyConditionOf(ctx, g, byAdmin)
			g.Expect(ready.Reason).To(Equal(kudov1beta1.InvalidKubeConfigReason))
			g.Expect(ready.Message).To(ContainSubstring("Secret " + ns + "/prod-kubeconfig key value"))
		}).Should(Succeed())
		list := &corev1.ConfigMapList{}
		Expect(k8sClient.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{kudov1beta1.InstanceLabel: "by-admin"})).To(Succeed())
		Expect(list.Items).To(BeEmpty(), "an Instance of another cluster applied here")
		Expect(managerRestarts(ctx)).To(Equal(before), "a manager pod restarted or was replaced")
	})

	It(mode+": a chart's value cannot make its render take the manager down (issue 71)", func() {
		ctx := context.Background()
		before := managerRestarts(ctx)
		ns := openNamespace(ctx, lockdown)
		bindRole(ctx, ns, "kudo-instance-editor-role", userSubject(attacker))
		_, ov := installPackage(ctx, ns, filepath.Join("testdata", "attacker-chart"))
		// A hundred million ConfigMaps: the render stops at its memory,
		// output or time limit, in its own process.
		bomb := attack(ctx, ns, ov, "shards", map[string]string{"SHARDS": "100000000"})

		other := openNamespace(ctx, lockdown)
		meanwhile := install(ctx, other, filepath.Join("testdata", "tenant"), "meanwhile", nil)
		deleteAfterSpec(meanwhile)

		stepOf(ctx, bomb, "shards", kudov1beta1.ExecutionFatalError, "than the limit")
		planStatus(ctx, meanwhile, "deploy", kudov1beta1.ExecutionComplete)
		Expect(managerRestarts(ctx)).To(Equal(before), "a manager pod restarted or was replaced")
	})

	It(mode+": the OperatorVersion an Instance runs cannot change under it", func() {
		ctx := context.Background()
		ns, ov := attackerNamespace(ctx, lockdown)
		i := attack(ctx, ns, ov, "pinned", nil)
		deployed := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		// Where admission does not ask, the pin holds (envtest "An Instance
		// whose OperatorVersion was made again with other content").
		Expect(deployed.Status.AppliedOperatorVersionDigest).To(Equal(engine.OperatorVersionDigest(ov)))
		patch := client.MergeFrom(ov.DeepCopy())
		ov.Spec.Templates["value.yaml"] += "  injected: by the package's author\n"
		Expect(k8sClient.Patch(ctx, ov, patch)).To(MatchError(ContainSubstring(
			fmt.Sprintf("spec: OperatorVersion %s/%s is used by Instance pinned", ns, ov.Name))))
		// Nor go, to come again with other code (issue 62).
		Expect(k8sClient.Delete(ctx, ov)).To(MatchError(ContainSubstring(
			fmt.Sprintf("OperatorVersion %s/%s is used by Instance pinned, and the code Instances run cannot be taken from under them", ns, ov.Name))))
	})
}
