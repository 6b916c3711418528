package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The cluster's registry, on the real node's bridge (hack/cluster/node.sh),
// and the Makefile's LOCAL_REGISTRY.
const localRegistry = "10.244.0.1:5000"

// busyboxOnly is an image of one file, the machine's busybox-static, built
// here rather than taken from the node, so that the real node has never
// seen it before it pulls it.
func busyboxOnly() v1.Image {
	GinkgoHelper()
	binary, err := os.ReadFile("/bin/busybox")
	Expect(err).NotTo(HaveOccurred())
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	Expect(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "bin/", Mode: 0o755})).To(Succeed())
	Expect(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(binary))})).To(Succeed())
	_, err = tw.Write(binary)
	Expect(err).NotTo(HaveOccurred())
	Expect(tw.Close()).To(Succeed())
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	})
	Expect(err).NotTo(HaveOccurred())
	img, err := mutate.AppendLayers(empty.Image, layer)
	Expect(err).NotTo(HaveOccurred())
	cf, err := img.ConfigFile()
	Expect(err).NotTo(HaveOccurred())
	cf = cf.DeepCopy()
	// containerd pulls a single manifest only if its config names the node's platform.
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Cmd = []string{"/bin/busybox", "echo", "pulled from the registry"}
	img, err = mutate.ConfigFile(img, cf)
	Expect(err).NotTo(HaveOccurred())
	return img
}

var _ = Describe("The cluster's registry", func() {
	var (
		ctx       context.Context
		ns        string
		transport *http.Transport
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		var err error
		transport, err = cluster.RegistryTransport()
		Expect(err).NotTo(HaveOccurred())
	})

	It("answers on the bridge, over TLS with a certificate of the cluster's registry CA", func() {
		resp, err := (&http.Client{Transport: transport}).Get("https://" + localRegistry + "/v2/")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(resp.Body.Close)
		Expect(resp).To(HaveHTTPStatus(http.StatusOK))
		Expect(resp).To(HaveHTTPHeaderWithValue("Docker-Distribution-Api-Version", "registry/2.0"))

		_, err = http.Get("https://" + localRegistry + "/v2/")
		Expect(err).To(MatchError(ContainSubstring("certificate signed by unknown authority")), "a client trusting only the system's CAs")
	})

	It("serves an image pushed there to the real node, which pulls it by reference", func() {
		ref, err := name.NewTag(localRegistry + "/test/busybox:" + ns)
		Expect(err).NotTo(HaveOccurred())
		img := busyboxOnly()
		Expect(remote.Write(ref, img, remote.WithTransport(transport))).To(Succeed())
		digest, err := img.Digest()
		Expect(err).NotTo(HaveOccurred())

		pod := onRealNode(ns, "pulled", ref.String())
		// Always: the kubelet asks the registry even for an image it has.
		pod.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded))
		}).Should(Succeed())
		Expect(pod.Status.ContainerStatuses[0].ImageID).To(Equal(localRegistry + "/test/busybox@" + digest.String()))
		Expect(kubectl("logs", "-n", ns, "pulled")).To(Equal("pulled from the registry\n"))

		events := &corev1.EventList{}
		Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		Expect(events.Items).To(ContainElement(And(
			HaveField("InvolvedObject.Name", "pulled"),
			HaveField("Reason", "Pulled"),
			HaveField("Message", ContainSubstring("Successfully pulled image \"%s\"", ref.String())))))
	})

	It("holds the manager's image after make docker-push", func() {
		// The image's files of a test of its own, not the developer's bin/.
		tmp := GinkgoT().TempDir()
		tarPath := filepath.Join(tmp, "manager.tar")
		Expect(cluster.Make("docker-push", "VERSION=0.0.0-registry-test",
			"MANAGER_LINUX="+filepath.Join(tmp, "manager"), "IMAGE_TAR="+tarPath)).To(Succeed())

		built, err := tarball.ImageFromPath(tarPath, nil)
		Expect(err).NotTo(HaveOccurred())
		want, err := built.Digest()
		Expect(err).NotTo(HaveOccurred())
		ref, err := name.NewTag(localRegistry + "/kudo:v0.0.0-registry-test")
		Expect(err).NotTo(HaveOccurred())
		pushed, err := remote.Head(ref, remote.WithTransport(transport))
		Expect(err).NotTo(HaveOccurred())
		Expect(pushed.Digest).To(Equal(want))
	})
})
