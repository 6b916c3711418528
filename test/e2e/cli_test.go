package e2e

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/inventory"
)

// kudo runs the kubectl-kudo plugin against the cluster, in a namespace.
func kudo(ns string, args ...string) (string, error) { return cluster.Kudo(ns, args...) }

func mustKudo(ns string, args ...string) string {
	GinkgoHelper()
	out, err := kudo(ns, args...)
	Expect(err).NotTo(HaveOccurred(), "kubectl kudo %s:\n%s", strings.Join(args, " "), out)
	return out
}

var _ = Describe("kubectl kudo", func() {
	It("installs zookeeper, updates it, shows its plans and uninstalls it", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		zk := conformancePackage("zookeeper")
		Expect(mustKudo(ns, "install", zk, "--instance", "zk", "-p", "NODE_COUNT=3", "--wait")).To(ContainSubstring("instance zk is deployed"))
		Expect(mustKudo(ns, "update", "--instance", "zk", "-p", "NODE_COUNT=5", "--wait")).To(ContainSubstring("instance.kudo.dev/zk updated"))

		sts := &appsv1.StatefulSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "zk-zookeeper"}, sts)).To(Succeed())
		Expect(*sts.Spec.Replicas).To(BeEquivalentTo(5))
		status := mustKudo(ns, "plan", "status", "--instance", "zk")
		Expect(status).To(ContainSubstring(`└── zk (Operator-Version: "zookeeper-3.6.2-0.3.3" Active-Plan: "deploy")`))
		Expect(status).To(MatchRegexp(`Plan deploy \(serial strategy\) \[COMPLETE\], last updated`))
		Expect(mustKudo(ns, "plan", "history", "--instance", "zk")).To(MatchRegexp(`── deploy \(last finished run at \S+ \(COMPLETE\)\) uid [0-9a-f-]+`))

		// Shell completion knows the Instances and their parameters.
		Expect(mustKudo(ns, "__complete", "plan", "status", "--instance", "")).To(ContainSubstring("zk\n"))
		Expect(mustKudo(ns, "__complete", "update", "--instance", "zk", "-p", "NODE")).To(ContainSubstring("NODE_COUNT=\n"))

		out, err := kudo(ns, "update", "--instance", "zk", "-p", "NODE_COUNTS=7")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("Error: parameter NODE_COUNTS is not defined; the parameters are"))

		diag := GinkgoT().TempDir()
		Expect(mustKudo(ns, "diagnostics", "collect", "--instance", "zk", "--output-directory", diag)).To(ContainSubstring("diagnostics of Instance zk written"))
		for _, f := range []string{"instance.yaml", "operatorversion.yaml", "events.yaml", "objects/statefulset-zk-zookeeper.yaml", "manager.log"} {
			Expect(filepath.Join(diag, f)).To(BeAnExistingFile())
		}
		Expect(mustKudo(ns, "init", "--crd-only")).To(ContainSubstring("CustomResourceDefinition/instances.kudo.dev applied"))

		Expect(mustKudo(ns, "uninstall", "--instance", "zk", "--wait")).To(ContainSubstring("instance.kudo.dev/zk deleted"))
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "zk-zookeeper"}, &appsv1.StatefulSet{})
		}).Should(Satisfy(apierrors.IsNotFound))
	})

	It("prints the plan's progress on install --wait, and returns from uninstall --wait only once every object the Instance applied is gone", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		Expect(mustKudo(ns, "install", hello, "--instance", "first", "--wait")).
			To(ContainSubstring("Step main/everything [COMPLETE]\nPlan deploy [COMPLETE]\ninstance first is deployed\n"))
		i := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "first"}, i)).To(Succeed())
		applied := inventory.All(i.Status.Inventory)
		Expect(applied).NotTo(BeEmpty())

		mustKudo(ns, "uninstall", "--instance", "first", "--wait")
		for _, ref := range applied {
			obj := &metav1.PartialObjectMetadata{}
			obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj)
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s %s is still there: %v", ref.Kind, ref.Name, err)
		}
	})

	It("installs a package by name from a repository served over HTTP", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		repo := GinkgoT().TempDir()
		mustKudo(ns, "package", "create", hello, "-d", repo)

		listener, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		server := &http.Server{Handler: http.FileServer(http.Dir(repo))}
		go func() { _ = server.Serve(listener) }()
		DeferCleanup(server.Close)
		url := "http://" + listener.Addr().String()
		mustKudo(ns, "repo", "index", repo, "--url", url)

		mustKudo(ns, "repo", "add", "local", url)
		mustKudo(ns, "repo", "context", "local")
		Expect(mustKudo(ns, "search", "hel")).To(MatchRegexp(`hello\s+0\.1\.0`))
		Expect(mustKudo(ns, "install", "hello", "--wait")).To(ContainSubstring("instance hello-instance is deployed"))
		out, err := kudo(ns, "install", "cassandra", "--repo", url)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("package cassandra not found in repository " + url))
	})

	It("installs a package by name from a repository on disk, as an air-gapped site serves them", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		repo := GinkgoT().TempDir()
		mustKudo(ns, "package", "create", hello, "-d", repo)
		url := "file://" + repo
		mustKudo(ns, "repo", "index", repo, "--url", url)
		Expect(mustKudo(ns, "search", "hel", "--repo", url)).To(MatchRegexp(`hello\s+0\.1\.0`))
		Expect(mustKudo(ns, "install", "hello", "--repo", url, "--instance", "from-disk", "--wait")).
			To(ContainSubstring("instance from-disk is deployed"))
	})

	It("installs a package with a KudoOperator dependency", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		out := mustKudo(ns, "install", filepath.Join("testdata", "deps", "parent"), "--instance", "app", "--wait")
		Expect(out).To(ContainSubstring("operatorversion.kudo.dev/child-0.1.0 created"))
		Expect(out).To(ContainSubstring("operatorversion.kudo.dev/parent-0.1.0 created"))

		child := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-child"}, child)).To(Succeed())
		Expect(child.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		d := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-child-app"}, d)).To(Succeed())
		Expect(d.Annotations["message"]).To(Equal("hello from the parent"))
		Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(2))
	})
})
