package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// The names config/default gives the manager's objects, and the local
// control plane's real node (hack/cluster/node.sh).
const (
	managerNamespace  = "kudo-system"
	managerDeployment = "kudo-controller-manager"
	realNode          = "kudo-ng-node"
	// Two tags of one build: a rollout needs a new image reference.
	managerImage     = "kudo-ng.local/kudo:e2e"
	nextManagerImage = "kudo-ng.local/kudo:e2e-next"
)

// loadImage builds the manager's image (make docker-build, with no container
// engine) and imports it into the real node's containerd.
func loadImage(image string) {
	GinkgoHelper()
	tar := filepath.Join(cluster.Dir, "image", strings.ReplaceAll(image, "/", "_")+".tar")
	Expect(cluster.Make("docker-build", "IMG="+image, "IMAGE_TAR="+tar)).To(Succeed())
	Expect(cluster.Make("cluster-load-image", "IMAGE_TAR="+tar)).To(Succeed())
}

// managerPods returns the manager's pods, inside an Eventually, once its
// replicas (two, the default) all run image and are ready; and the one that
// leads.
func managerPods(ctx context.Context, g Gomega, image string) (pods []corev1.Pod, leading *corev1.Pod) {
	list := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, list, client.InNamespace(managerNamespace),
		client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
	for _, pod := range list.Items {
		// A rollout's old pods linger, terminating.
		if pod.DeletionTimestamp == nil {
			pods = append(pods, pod)
		}
	}
	g.Expect(pods).To(HaveLen(2))
	holder := leader(ctx, g)
	for i := range pods {
		g.Expect(pods[i].Spec.Containers[0].Image).To(Equal(image))
		g.Expect(pods[i].Status.Conditions).To(ContainElement(And(
			HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))))
		if strings.HasPrefix(holder, pods[i].Name+"_") {
			leading = &pods[i]
		}
	}
	g.Expect(leading).NotTo(BeNil(), "no manager pod holds the lease: %s does", holder)
	return pods, leading
}

// leader is the holder of the manager's leader election lease.
func leader(ctx context.Context, g Gomega) string {
	lease := &coordinationv1.Lease{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: "manager.kudo.dev"}, lease)).To(Succeed())
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// planStarts counts the plan runs an Instance started, by its PlanStarted
// events.
func planStarts(ctx context.Context, ns, instance string) int {
	GinkgoHelper()
	events := &corev1.EventList{}
	Expect(k8sClient.List(ctx, events, client.InNamespace(ns), client.MatchingFields{"involvedObject.name": instance})).To(Succeed())
	starts := 0
	for _, e := range events.Items {
		if e.Reason == "PlanStarted" {
			starts += int(max(e.Count, 1))
		}
	}
	return starts
}

// jobUIDs are the uids of the Jobs of a name that events were recorded for:
// each Job a step created left events under its own uid.
func jobUIDs(ctx context.Context, g Gomega, ns, name string) map[string]bool {
	events := &corev1.EventList{}
	g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	uids := map[string]bool{}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "Job" && e.InvolvedObject.Name == name {
			uids[string(e.InvolvedObject.UID)] = true
		}
	}
	return uids
}

var _ = Describe("kudo-ng in the cluster, from its image, on the real node", Ordered, func() {
	var ctx context.Context
	BeforeAll(func() {
		ctx = context.Background()
		loadImage(managerImage)
		loadImage(nextManagerImage)
		DeferCleanup(handOverToClusterManager())
	})

	It("kubectl kudo init runs the manager's two replicas as pods on the real node: ready, one leading, its webhooks called through their Service", func() {
		start := time.Now()
		out := mustKudo("default", "init", "--unsafe-self-signed-webhook-ca", "--wait",
			"--kudo-image", managerImage, "--kudo-image-pull-policy", "Never")
		Expect(out).To(ContainSubstring("kudo-ng is ready: deployment kudo-system/kudo-controller-manager rolled out, its webhooks answer"))
		AddReportEntry("init --wait took", time.Since(start).String())
		var pods []corev1.Pod
		Eventually(func(g Gomega) { pods, _ = managerPods(ctx, g, managerImage) }).Should(Succeed())
		for _, pod := range pods {
			Expect(pod.Spec.NodeName).To(Equal(realNode))
			Expect(pod.Status.ContainerStatuses[0].ImageID).NotTo(BeEmpty())
		}

		// The API server calls the validating webhook at its Service.
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "admission"), "adm", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		out, err := cluster.Kubectl("-n", ns, "patch", "instance", "adm", "--type", "merge", "-p", `{"spec":{"parameters":{"SIZE":"large"}}}`)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring(`parameter SIZE is immutable`))
		validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-validating-webhook-configuration"}, validating)).To(Succeed())
		Expect(validating.Webhooks[0].ClientConfig.Service).NotTo(BeNil())
		Expect(validating.Webhooks[0].ClientConfig.Service.Name).To(Equal("kudo-webhook-service"))
	})

	It("serves its metrics only to who may read them", func() {
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: "kudo-controller-manager-metrics-service"},
			&corev1.Service{})).To(Succeed())
		// Each replica serves its own metrics, as Prometheus scrapes them pod
		// by pod: the leader's, since a standby runs no controller and counts
		// no reconcile.
		var leading *corev1.Pod
		Eventually(func(g Gomega) { _, leading = managerPods(ctx, g, managerImage) }).Should(Succeed())
		url := fmt.Sprintf("https://%s:8443/metrics", leading.Status.PodIP)
		ns := newNamespace(ctx)
		token := func(sa string, reader bool) string {
			GinkgoHelper()
			Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})).To(Succeed())
			if reader {
				Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + sa},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kudo-metrics-reader"},
					Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
				})).To(Succeed())
			}
			clientset, err := kubernetes.NewForConfig(cluster.Config)
			Expect(err).NotTo(HaveOccurred())
			tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			return tr.Status.Token
		}
		// The manager's serving certificate is its own; what is checked is
		// who it answers.
		httpClient := &http.Client{Timeout: 5 * time.Second,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec
		scrape := func(token string) (int, string, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return 0, "", err
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := httpClient.Do(req)
			if err != nil {
				return 0, "", err
			}
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body), err
		}
		reader, stranger := token("reader", true), token("stranger", false)
		Eventually(func(g Gomega) {
			code, body, err := scrape(reader)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK))
			g.Expect(body).To(ContainSubstring(`controller_runtime_reconcile_total{controller="instance"`))
		}).Should(Succeed())
		code, _, err := scrape(stranger)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusForbidden))
		code, _, err = scrape("")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusUnauthorized))
	})

	It("installs, updates and uninstalls every conformance package that completes", func() {
		names := []string{"first-operator", "zookeeper", "redis", "mysql", "flink", "rabbitmq", "confluent-rest-proxy", "confluent-schema-registry"}
		instances := map[string]*kudov1beta1.Instance{}
		for _, name := range names {
			instances[name] = install(ctx, newNamespace(ctx), conformancePackage(name), name+"-instance", nil)
		}
		var wg sync.WaitGroup
		for _, name := range names {
			wg.Go(func() {
				defer GinkgoRecover()
				i := instances[name]
				got := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
				Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue(), name)
				Eventually(func(g Gomega) { workloadsReady(ctx, g, i.Namespace) }).Should(Succeed(), name)
			})
		}
		wg.Wait()

		first := instances["first-operator"]
		mustKudo(first.Namespace, "update", "--instance", first.Name, "-p", "replicas=3", "--wait")
		Eventually(func(g Gomega) {
			g.Expect(deployment(ctx, g, first.Namespace, "nginx-deployment").Status.AvailableReplicas).To(BeEquivalentTo(3))
		}).Should(Succeed())

		for _, name := range names {
			i := instances[name]
			mustKudo(i.Namespace, "uninstall", "--instance", i.Name, "--wait")
			Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), &kudov1beta1.Instance{}))).To(BeTrue(), name)
		}
	})

	It("serves zookeeper as a typed API: kubectl get, explain and wait, the API server validating its fields, kubectl kudo update and uninstall", func() {
		typedZookeeper(ctx, newNamespace(ctx))
		widgetEnumRefused(newNamespace(ctx))
	})

	It("serves examples/ensemble's three versions as API versions: converted by its webhook through its Service, storage migrated, "+
		"a breaking version refused (issue 65)", func() {
		ensembleEvolves(ctx, newNamespace(ctx))
	})

	It("installs, updates and uninstalls a package that ships a CRD and a custom resource of it: nothing remains, the CRD included", func() {
		ns, other := newNamespace(ctx), newNamespace(ctx)
		mustKudo(ns, "install", filepath.Join("testdata", "wide"), "--instance", "wide", "-p", "OTHER_NAMESPACE="+other, "--wait")
		widget := &unstructured.Unstructured{}
		widget.SetAPIVersion("e2e.kudo-ng.dev/v1")
		widget.SetKind("Widget")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "wide"}, widget)).To(Succeed())
		Expect(widget.Object["spec"]).To(HaveKeyWithValue("size", BeEquivalentTo(3)))

		mustKudo(ns, "update", "--instance", "wide", "-p", "SIZE=5", "--wait")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "wide"}, widget)).To(Succeed())
		Expect(widget.Object["spec"]).To(HaveKeyWithValue("size", BeEquivalentTo(5)))

		mustKudo(ns, "uninstall", "--instance", "wide", "--wait")
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: other, Name: "wide-elsewhere"}, &corev1.ConfigMap{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: ns + "-wide-widgets"}, &rbacv1.ClusterRole{}))).To(BeTrue())
		Eventually(func(g Gomega) {
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "widgets.e2e.kudo-ng.dev"}, crd))).To(BeTrue())
		}, "30s").Should(Succeed())
	})

	It("runs a Pipe task's pod on the real node, stores its file, and a later step's Job reads it and succeeds", func() {
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "realnode"), "real", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		configMaps := &corev1.ConfigMapList{}
		Expect(k8sClient.List(ctx, configMaps, client.InNamespace(ns))).To(Succeed())
		var greeting string
		for _, cm := range configMaps.Items {
			if strings.HasSuffix(cm.Name, ".greeting") {
				greeting = cm.Data["greeting.txt"]
			}
		}
		Expect(greeting).To(MatchRegexp(`^hello from real-deploy-main-greet-greet on the real node\n$`))
		job := &batchv1.Job{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "real-check"}, job)).To(Succeed())
		Expect(job.Status.Succeeded).To(BeEquivalentTo(1))
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"job-name": "real-check"})).To(Succeed())
		Expect(pods.Items).To(HaveLen(1))
		Expect(pods.Items[0].Spec.NodeName).To(Equal(realNode))
		Expect(pods.Items[0].Status.ContainerStatuses[0].State.Terminated.ExitCode).To(BeZero())
	})

	It("fails a Pipe of /dev/zero at 1 MiB, naming the file and the limit, while the manager stays up", func() {
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "pipe-zero"), "zero", nil)
		got := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionFatalError)
		Expect(describe(ptr.To(got.Status.PlanStatus["deploy"]))).To(ContainSubstring(
			"pipe file /dev/zero: more than 1048576 bytes, the most a ConfigMap holds"))
		Eventually(func(g Gomega) {
			pods, _ := managerPods(ctx, g, managerImage)
			for _, pod := range pods {
				g.Expect(pod.Status.ContainerStatuses[0].RestartCount).To(BeZero(), pod.Name)
			}
		}).Should(Succeed())
	})

	It("fails the step of a Job that really exits 1, with its pod's message", func() {
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "realnode"), "real", map[string]string{"EXIT_CODE": "1"})
		got := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionFatalError)
		step := got.Status.PlanStatus["deploy"].Phases[0].Steps[1]
		Expect(step.Name).To(Equal("check"))
		Expect(step.Status).To(Equal(kudov1beta1.ExecutionFatalError))
		Expect(step.Message).To(MatchRegexp(
			`Job \S*real-check failed: BackoffLimitExceeded: .* \(pod real-check-\w+: container check: Error, exit code 1: the check failed on purpose\)`))
	})

	tenantAttacks(false)

	It("rolls the manager to a new image with kubectl kudo init --upgrade while a plan runs, which completes once", func() {
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "realnode"), "slow", map[string]string{"SLEEP": "15"})
		Eventually(func(g Gomega) {
			_, step := firstDeployStep(ctx, g, i)
			g.Expect(step.Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(jobUIDs(ctx, g, ns, "slow-check")).To(HaveLen(1))
		}).Should(Succeed())

		out, err := kudo("default", "init", "--unsafe-self-signed-webhook-ca", "--kudo-image", nextManagerImage, "--kudo-image-pull-policy", "Never")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("kudo-ng is already installed with image kudo-ng.local/kudo:e2e: pass --upgrade to change it to kudo-ng.local/kudo:e2e-next"))

		start := time.Now()
		mustKudo("default", "init", "--upgrade", "--unsafe-self-signed-webhook-ca", "--wait",
			"--kudo-image", nextManagerImage, "--kudo-image-pull-policy", "Never")
		AddReportEntry("init --upgrade --wait took", time.Since(start).String())
		Eventually(func(g Gomega) { managerPods(ctx, g, nextManagerImage) }).Should(Succeed())
		got := planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		AddReportEntry("the plan completed after", time.Since(start).String())

		Expect(jobUIDs(ctx, Default, ns, "slow-check")).To(HaveLen(1), "the check Job ran more than once")
		Expect(planStarts(ctx, ns, "slow")).To(Equal(1), "plan deploy started more than once")
		Expect(got.Status.PlanStatus["deploy"].Phases[0].Steps[1].Status).To(Equal(kudov1beta1.ExecutionComplete))
	})
})

// The cluster has no cert-manager: `make deploy` takes its self-signed path.
var _ = Describe("make deploy", Ordered, func() {
	var (
		ctx       context.Context
		deployDir string
	)
	BeforeAll(func() {
		ctx = context.Background()
		deployDir = filepath.Join(cluster.Dir, "deploy")
		loadImage(managerImage)
		DeferCleanup(handOverToClusterManager())
		Expect(cluster.Make("deploy", "IMG="+managerImage, "DEPLOY_DIR="+deployDir)).To(Succeed())
	})

	It("runs the manager's two replicas from the image asked for as pods on the real node, ready, one leading", func() {
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: managerDeployment}, d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal("kudo-controller-manager"))
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(2))
			pods, _ := managerPods(ctx, g, managerImage)
			for _, pod := range pods {
				g.Expect(pod.Spec.NodeName).To(Equal(realNode))
			}
		}).Should(Succeed())
		// Unlike kubectl kudo init --wait, make deploy does not wait for the
		// Service's endpoints and the node's proxy rules to follow the pod.
		Eventually(func(g Gomega) {
			probe := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: "probe"}}
			err := k8sClient.Create(ctx, probe, client.DryRunAll)
			g.Expect(err).To(Or(Succeed(), Not(MatchError(ContainSubstring("failed calling webhook")))))
		}).Should(Succeed())
		ns := newNamespace(ctx)
		i := install(ctx, ns, hello, "first", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
	})

	It("makes the webhooks trust the CA that signed the serving certificate the manager mounts", func() {
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: "webhook-server-cert"}, secret)).To(Succeed())
		ca, err := os.ReadFile(filepath.Join(deployDir, "certs", "ca.crt"))
		Expect(err).NotTo(HaveOccurred())
		roots := x509.NewCertPool()
		Expect(roots.AppendCertsFromPEM(ca)).To(BeTrue())
		block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
		Expect(block).NotTo(BeNil())
		cert, err := x509.ParseCertificate(block.Bytes)
		Expect(err).NotTo(HaveOccurred())
		_, err = cert.Verify(x509.VerifyOptions{DNSName: "kudo-webhook-service.kudo-system.svc", Roots: roots})
		Expect(err).NotTo(HaveOccurred())

		mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-mutating-webhook-configuration"}, mutating)).To(Succeed())
		validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-validating-webhook-configuration"}, validating)).To(Succeed())
		var configs []admissionregistrationv1.WebhookClientConfig
		for _, w := range mutating.Webhooks {
			configs = append(configs, w.ClientConfig)
		}
		for _, w := range validating.Webhooks {
			configs = append(configs, w.ClientConfig)
		}
		// Instances (mutating and validating), OperatorVersions, typed objects, Rollouts.
		Expect(configs).To(HaveLen(5))
		for _, c := range configs {
			Expect(c.Service).NotTo(BeNil())
			Expect(c.Service.Namespace + "/" + c.Service.Name).To(Equal("kudo-system/kudo-webhook-service"))
			Expect(c.CABundle).To(Equal(ca))
		}
		Expect(mutating.Annotations).NotTo(HaveKey("cert-manager.io/inject-ca-from"))
	})

	It("binds the manager its privileged ClusterRole, openly: any kind, as KUDO's manager", func() {
		role := &rbacv1.ClusterRole{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-manager-privileged-role"}, role)).To(Succeed())
		Expect(role.Rules).To(ConsistOf(HaveField("Verbs", ConsistOf("*"))))
		binding := &rbacv1.ClusterRoleBinding{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-manager-privileged-rolebinding"}, binding)).To(Succeed())
		Expect(binding.Subjects).To(ConsistOf(HaveField("Name", managerDeployment)))
	})

	It("runs a shard's manager beside it with make deploy-shard, leading its own shard and reconciling its Instances", func() {
		Expect(cluster.Make("deploy-shard", "SHARD=two", "IMG="+managerImage, "DEPLOY_DIR="+deployDir)).To(Succeed())
		shardLease := &coordinationv1.Lease{}
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(managerNamespace),
				client.MatchingLabels{kudov1beta1.ShardLabel: "two"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(1))
			g.Expect(pods.Items[0].Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))))
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: "manager-two.kudo.dev"}, shardLease)).To(Succeed())
			g.Expect(ptr.Deref(shardLease.Spec.HolderIdentity, "")).To(HavePrefix(pods.Items[0].Name + "_"))
		}).Should(Succeed())
		// The webhook Service still selects the unsharded manager only.
		endpoints := &discoveryv1.EndpointSliceList{}
		Expect(k8sClient.List(ctx, endpoints, client.InNamespace(managerNamespace),
			client.MatchingLabels{discoveryv1.LabelServiceName: "kudo-webhook-service"})).To(Succeed())
		for _, slice := range endpoints.Items {
			for _, e := range slice.Endpoints {
				Expect(e.TargetRef.Name).To(HavePrefix(managerDeployment+"-"), "the webhook Service selects a shard's pod")
				Expect(e.TargetRef.Name).NotTo(HavePrefix(managerDeployment + "-two-"))
			}
		}

		ns := newNamespace(ctx)
		op, ov := installPackage(ctx, ns, hello)
		i := &kudov1beta1.Instance{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sharded",
				Labels: map[string]string{"kudo.dev/operator": op.Name, kudov1beta1.ShardLabel: "two"}},
			Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}},
		}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)

		Expect(cluster.Make("undeploy-shard", "SHARD=two", "IMG="+managerImage, "DEPLOY_DIR="+deployDir)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: managerDeployment + "-two"},
				&appsv1.Deployment{}))
		}).Should(BeTrue())
	})

	It("is removed by make undeploy, which keeps the CRDs and so every Instance", func() {
		Expect(cluster.Make("undeploy", "IMG="+managerImage, "DEPLOY_DIR="+deployDir)).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Name: managerNamespace}, &corev1.Namespace{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s: %v", managerNamespace, err)
		}).Should(Succeed())
		roles := &rbacv1.ClusterRoleList{}
		Expect(k8sClient.List(ctx, roles, client.MatchingLabels{"app.kubernetes.io/name": "kudo-ng"})).To(Succeed())
		Expect(roles.Items).To(BeEmpty())
		bindings := &rbacv1.ClusterRoleBindingList{}
		Expect(k8sClient.List(ctx, bindings, client.MatchingLabels{"app.kubernetes.io/name": "kudo-ng"})).To(Succeed())
		Expect(bindings.Items).To(BeEmpty())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-manager-role"}, &rbacv1.ClusterRole{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "kudo-validating-webhook-configuration"},
			&admissionregistrationv1.ValidatingWebhookConfiguration{}))).To(BeTrue())
		Expect(k8sClient.List(ctx, &kudov1beta1.InstanceList{})).To(Succeed(), "the Instance CRD is gone")
	})
})
