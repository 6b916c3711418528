package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

var _ = Describe("Secret parameters", func() {
	It("reach the templates from a Secret, run the parameter's plan when the Secret changes, and appear in no output", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		const first, second = "e2e-first-s3cr3t", "e2e-second-s3cr3t-value"
		password := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-password"},
			Data: map[string][]byte{"password": []byte(first)}}
		Expect(k8sClient.Create(ctx, password)).To(Succeed())
		pkg := filepath.Join("testdata", "secret-params")
		// Everything kudo-ng printed, wrote or logged about the Instance.
		var outputs []string
		run := func(args ...string) string {
			GinkgoHelper()
			out := mustKudo(ns, args...)
			outputs = append(outputs, out)
			return out
		}

		Expect(run("install", pkg, "--instance", "db", "-p", "PASSWORD=@secret:db-password/password", "--wait")).
			To(ContainSubstring("instance db is deployed"))
		passwordIn := func(g Gomega) string {
			credentials := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-credentials"}, credentials)).To(Succeed())
			return string(credentials.Data["password"])
		}
		Expect(passwordIn(Default)).To(Equal(first))
		i := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, i)).To(Succeed())
		Expect(i.Spec.Parameters).NotTo(HaveKey("PASSWORD"))
		Expect(i.Spec.SecretParameters).To(Equal(map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "db-password", Key: "password"}}))

		run("update", "--instance", "db", "-p", "USER=root", "--wait")
		password.Data["password"] = []byte(second)
		Expect(k8sClient.Update(ctx, password)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, i)).To(Succeed())
			g.Expect(i.Status.Revisions).To(HaveLen(3))
			g.Expect(i.Status.Revisions[2].Plan).To(Equal("update"))
			g.Expect(i.Status.Revisions[2].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(passwordIn(g)).To(Equal(second))
		}).Should(Succeed())

		events := &corev1.EventList{}
		Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		Expect(events.Items).NotTo(ContainElement(HaveField("Reason", "Drifted")), "what the plan wrote was judged as the cache held it before")

		Expect(run("plan", "history", "--instance", "db")).To(ContainSubstring("PASSWORD=@secret:db-password/password"))
		run("plan", "status", "--instance", "db")
		Expect(run("rollback", "--instance", "db", "--to-revision", "1", "--wait")).To(ContainSubstring(
			"Instance db rolled back to revision 1: OperatorVersion secret-params-0.1.0, parameters PASSWORD=@secret:db-password/password"))
		run("package", "render", pkg, "-p", "PASSWORD="+first)
		diag := GinkgoT().TempDir()
		run("diagnostics", "collect", "--instance", "db", "--output-directory", diag)
		Expect(filepath.Walk(diag, func(path string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				var data []byte
				data, err = os.ReadFile(path)
				outputs = append(outputs, string(data))
			}
			return err
		})).To(Succeed())
		for _, what := range [][]string{{"get", "instance", "db", "-o", "yaml"}, {"get", "events", "-o", "yaml"}} {
			out, err := cluster.Kubectl(append([]string{"-n", ns}, what...)...)
			Expect(err).NotTo(HaveOccurred())
			outputs = append(outputs, out)
		}
		outputs = append(outputs, string(managerOutput.Contents()))
		for _, out := range outputs {
			Expect(out).NotTo(ContainSubstring("s3cr3t"))
		}

		// A sensitive value given on the command line is stored in the spec: say so.
		out, err := kudo(ns, "install", pkg, "--instance", "plain", "-p", "PASSWORD=typed-in")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("Warning: parameter PASSWORD is sensitive, and its value is stored in the Instance's spec: " +
			"keep it in a Secret and pass -p PASSWORD=@secret:SECRET/KEY"))
		Expect(strings.Count(out, "Warning:")).To(Equal(1))
	})
})
