package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hack/cluster/node.sh's names.
const (
	realNode      = "kudo-ng-node"
	realNodeTaint = "kudo-ng.dev/real"
	busyboxImage  = "kudo-ng.local/busybox:1"
	kubectlImage  = "kudo-ng.local/kubectl:v1.34.4"
)

// onRealNode is a pod that runs on the real node, from a local image.
func onRealNode(ns, name, image string, command ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{realNodeTaint: "true"},
			Tolerations:                   []corev1.Toleration{{Key: realNodeTaint, Operator: corev1.TolerationOpExists}},
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{
				Name: "main", Image: image, ImagePullPolicy: corev1.PullNever, Command: command,
			}},
		},
	}
}

var _ = Describe("The real node", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("is Ready, tainted so that simulated workloads stay off it", func() {
		node := &corev1.Node{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: realNode}, node)).To(Succeed())
		Expect(node.Status.Conditions).To(ContainElement(And(
			HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))
		Expect(node.Spec.Taints).To(ContainElement(And(
			HaveField("Key", realNodeTaint), HaveField("Effect", corev1.TaintEffectNoSchedule))))
		Expect(node.Status.NodeInfo.ContainerRuntimeVersion).To(HavePrefix("containerd://"))
	})

	It("runs a pod from a local image, whose logs, exec and cp work", func() {
		pod := onRealNode(ns, "busybox", busyboxImage, "sh", "-c", "echo started; exec sleep 3600")
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
		}).Should(Succeed())
		Expect(pod.Spec.NodeName).To(Equal(realNode))
		Expect(pod.Status.PodIP).To(HavePrefix("10.244.0."))

		Eventually(func() (string, error) { return cluster.Kubectl("logs", "-n", ns, "busybox") }).Should(Equal("started\n"))
		Expect(kubectl("exec", "-n", ns, "busybox", "--", "cat", "/proc/1/cmdline")).To(Equal("sleep\x003600\x00"))
		local := filepath.Join(GinkgoT().TempDir(), "in.txt")
		Expect(os.WriteFile(local, []byte("copied in\n"), 0o644)).To(Succeed())
		kubectl("cp", local, ns+"/busybox:/tmp/in.txt")
		Expect(kubectl("exec", "-n", ns, "busybox", "--", "cat", "/tmp/in.txt")).To(Equal("copied in\n"))
		out := filepath.Join(GinkgoT().TempDir(), "out.txt")
		kubectl("cp", ns+"/busybox:/tmp/in.txt", out)
		Expect(os.ReadFile(out)).To(BeEquivalentTo("copied in\n"))
	})

	It("lets a pod reach the API server through the kubernetes Service, resolve cluster names, and nothing off this machine", func() {
		// kubectl in the pod finds the API server at the kubernetes Service
		// (KUBERNETES_SERVICE_HOST) and verifies it with the service account's CA.
		pod := onRealNode(ns, "client", kubectlImage, "sh", "-c",
			`kubectl get --raw /version && echo "service: $KUBERNETES_SERVICE_HOST" && ip route && cat /etc/resolv.conf && `+
				`echo "cluster: $(nslookup kubernetes.default.svc.cluster.local | grep -A1 '^Name:' | tail -1)" && `+
				`if nslookup example.com; then echo "outside: resolved"; else echo "outside: unresolved"; fi`)
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded))
		}).Should(Succeed())
		logs := kubectl("logs", "-n", ns, "client")
		Expect(logs).To(ContainSubstring(`"gitVersion": "v1.34.4"`))
		Expect(logs).To(ContainSubstring("service: 10.96.0.1"))
		// Routes to the pod and Service ranges only, and the cluster's DNS,
		// which resolves its own names only.
		var routes []string
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, " dev eth0") {
				routes = append(routes, strings.Fields(line)[0])
			}
		}
		Expect(routes).To(ConsistOf("10.96.0.0/16", "10.244.0.0/24"))
		Expect(logs).To(ContainSubstring("nameserver 10.244.0.1\n"))
		Expect(strings.Count(logs, "nameserver")).To(Equal(1))
		Expect(logs).To(ContainSubstring("cluster: Address: 10.96.0.1\n"))
		Expect(logs).To(ContainSubstring("outside: unresolved\n"))
	})
})
