package controllers_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"oras.land/oras-go/v2/registry/remote/auth"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/ocipkg/ocitest"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/internal/trust"
)

// greetingPackage writes a package of one ConfigMap, which envtest can
// run to the end, named name.
func greetingPackage(name string) string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	files := map[string]string{
		"operator.yaml": `apiVersion: kudo.dev/v1beta1
name: ` + name + `
operatorVersion: 0.1.0
kubernetesVersion: 1.20.0
tasks:
- name: app
  kind: Apply
  spec:
    resources: [greeting.yaml]
plans:
  deploy:
    strategy: serial
    phases:
    - name: main
      strategy: serial
      steps:
      - name: app
        tasks: [app]
`,
		"params.yaml":             "apiVersion: kudo.dev/v1beta1\nparameters:\n- name: GREETING\n  default: hello\n",
		"templates/greeting.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-greeting\ndata:\n  greeting: {{ .Params.GREETING }}\n",
	}
	for file, content := range files {
		Expect(os.MkdirAll(filepath.Join(dir, filepath.Dir(file)), 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644)).To(Succeed())
	}
	return dir
}

var _ = Describe("TrustPolicies", func() {
	var (
		ctx  context.Context
		ns   string
		c    *ocipkg.Client
		repo string
		// held keeps the registry from answering while it is locked.
		held sync.RWMutex
		// login, once set, is what the registry requires.
		login atomic.Pointer[auth.Credential]
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		var host string
		host, c = ocitest.Registry(GinkgoT(), true, func(registry http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				held.RLock()
				defer held.RUnlock()
				required := login.Load()
				if user, password, ok := r.BasicAuth(); required != nil && (!ok || user != required.Username || password != required.Password) {
					w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				registry.ServeHTTP(w, r)
			})
		})
		repo = "oci://" + host + "/" + ns + "/"
		login.Store(nil)
	})

	// push pushes the package named name and returns its OperatorVersion,
	// as kubectl kudo install makes it from the registry.
	push := func(name string) *kudov1beta1.OperatorVersion {
		GinkgoHelper()
		p, err := packages.Read(greetingPackage(name))
		Expect(err).NotTo(HaveOccurred())
		_, err = c.Push(ctx, p, repo+name+":0.1.0")
		Expect(err).NotTo(HaveOccurred())
		pulled, err := c.Pull(ctx, repo+name+":0.1.0")
		Expect(err).NotTo(HaveOccurred())
		_, ov, err := pulled.Package.Convert(ns)
		Expect(err).NotTo(HaveOccurred())
		return ov
	}
	condition := func(g Gomega, ov *kudov1beta1.OperatorVersion, kind string) *metav1.Condition {
		current := &kudov1beta1.OperatorVersion{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ov), current)).To(Succeed())
		c := meta.FindStatusCondition(current.Status.Conditions, kind)
		g.Expect(c).NotTo(BeNil(), "%s of %s", kind, ov.Name)
		g.Expect(c.ObservedGeneration).To(Equal(current.Generation))
		return c
	}

	It("runs a package it enforces signatures on once it verifies, refuses one unsigned or forged naming the policy, and lets them run in Audit", func() {
		signer, public := ocitest.Signer(GinkgoT())
		signed := push("signed")
		_, err := c.Sign(ctx, repo+"signed:0.1.0", signer)
		Expect(err).NotTo(HaveOccurred())
		unsigned := push("unsigned")
		forged := signed.DeepCopy()
		forged.Name = "forged-0.1.0"
		forged.Spec.Templates["greeting.yaml"] = strings.ReplaceAll(forged.Spec.Templates["greeting.yaml"], "greeting:", "forged:")

		policy := &kudov1alpha1.TrustPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: ns},
			Spec: kudov1alpha1.TrustPolicySpec{
				Packages:    []kudov1alpha1.PackageMatch{{Prefix: strings.TrimPrefix(repo, ocipkg.Scheme)}},
				Authorities: []kudov1alpha1.Authority{{Name: "release", Key: &kudov1alpha1.KeyAuthority{PublicKey: public}}},
				Registry:    kudov1alpha1.RegistryAccess{PlainHTTP: true},
			},
		}
		Expect(k8sClient.Create(ctx, policy)).To(Succeed())
		DeferCleanup(func() { Expect(k8sClient.Delete(ctx, policy)).To(Succeed()) })
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(policy), policy)).To(Succeed())
			g.Expect(policy.Spec.Mode).To(Equal(kudov1alpha1.Enforce), "the default mode")
			g.Expect(meta.IsStatusConditionTrue(policy.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
		}).Should(Succeed())

		By("the signed package: its Instance, made before it is verified, runs once it is")
		Expect(k8sClient.Create(ctx, signed)).To(Succeed())
		Expect(k8sClient.Create(ctx, newInstance(ns, "signed", signed.Name))).To(Succeed())
		Eventually(func(g Gomega) {
			verified := condition(g, signed, trust.VerifiedCondition)
			g.Expect(verified.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(verified.Message).To(ContainSubstring("signed by release of TrustPolicy " + ns))
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "signed-greeting"}, &corev1.ConfigMap{})).To(Succeed())
		}).Should(Succeed())

		By("an Instance of the forged one, made before it is judged, runs none of it")
		held.Lock()
		Expect(k8sClient.Create(ctx, forged)).To(Succeed())
		forgedInstance := newInstance(ns, "forged", forged.Name)
		Expect(k8sClient.Create(ctx, forgedInstance)).To(Succeed())
		Eventually(func(g Gomega) {
			ready := meta.FindStatusCondition(getInstance(ctx, g, client.ObjectKeyFromObject(forgedInstance)).Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionUnknown))
			g.Expect(ready.Message).To(ContainSubstring("is not verified yet"))
		}).Should(Succeed())
		held.Unlock()
		Eventually(func(g Gomega) {
			ready := meta.FindStatusCondition(getInstance(ctx, g, client.ObjectKeyFromObject(forgedInstance)).Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(trust.UnsignedReason))
			g.Expect(ready.Message).To(ContainSubstring("its spec is not the package"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(reasons(ctx, g, client.ObjectKeyFromObject(forgedInstance))).To(HaveKeyWithValue(trust.UnsignedReason, BeEquivalentTo(1)))
			g.Expect(eventsOn(ctx, g, "OperatorVersion", client.ObjectKeyFromObject(forged))).
				To(HaveKey(HavePrefix(trust.UnsignedReason + ": TrustPolicy " + ns + ": ")))
			g.Expect(eventsOn(ctx, g, "OperatorVersion", client.ObjectKeyFromObject(signed))).
				To(HaveKey(HavePrefix(trust.SignedReason + ": signed by release of TrustPolicy " + ns)))
		}).Should(Succeed())
		Consistently(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "forged-greeting"}, &corev1.ConfigMap{})
		}, "1s").ShouldNot(Succeed())

		By("the unsigned one: not Ready, and admission refuses its Instances naming the policy")
		Expect(k8sClient.Create(ctx, unsigned)).To(Succeed())
		Eventually(func(g Gomega) {
			verified := condition(g, unsigned, trust.VerifiedCondition)
			g.Expect(verified.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(verified.Message).To(ContainSubstring("is not signed"))
			ready := condition(g, unsigned, kudov1beta1.ReadyCondition)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(trust.UnsignedReason))
		}).Should(Succeed())
		err = k8sClient.Create(ctx, newInstance(ns, "unsigned", unsigned.Name))
		Expect(err).To(MatchError(ContainSubstring("TrustPolicy " + ns + " enforces signatures on it")))

		By("in Audit, it runs, still not verified")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(policy), policy)).To(Succeed())
		policy.Spec.Mode = kudov1alpha1.Audit
		Expect(k8sClient.Update(ctx, policy)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(condition(g, unsigned, kudov1beta1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, unsigned, trust.VerifiedCondition).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())
		Expect(k8sClient.Create(ctx, newInstance(ns, "unsigned", unsigned.Name))).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "unsigned-greeting"}, &corev1.ConfigMap{})
		}).Should(Succeed())
	})

	It("logs in to the registry with the pull Secret a policy names, from the manager's namespace", func() {
		signer, public := ocitest.Signer(GinkgoT())
		private := push("private")
		_, err := c.Sign(ctx, repo+"private:0.1.0", signer)
		Expect(err).NotTo(HaveOccurred())
		login.Store(&auth.Credential{Username: "kudo", Password: ns})

		policy := &kudov1alpha1.TrustPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: ns},
			Spec: kudov1alpha1.TrustPolicySpec{
				Packages:    []kudov1alpha1.PackageMatch{{Prefix: strings.TrimPrefix(repo, ocipkg.Scheme)}},
				Authorities: []kudov1alpha1.Authority{{Name: "release", Key: &kudov1alpha1.KeyAuthority{PublicKey: public}}},
				Registry: kudov1alpha1.RegistryAccess{PlainHTTP: true, Authentication: &kudov1alpha1.RegistryAuthentication{
					PullSecretRef: kudov1alpha1.SecretReference{Name: ns}}},
			},
		}
		Expect(k8sClient.Create(ctx, policy)).To(Succeed())
		DeferCleanup(func() { Expect(k8sClient.Delete(ctx, policy)).To(Succeed()) })
		Expect(k8sClient.Create(ctx, private)).To(Succeed())
		Eventually(func(g Gomega) {
			verified := condition(g, private, trust.VerifiedCondition)
			g.Expect(verified.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(verified.Message).To(ContainSubstring(`spec.registry.authentication.pullSecretRef: secrets "` + ns + `" not found`))
		}).Should(Succeed())

		By("the Secret made, and the policy changed, which verifies what it covers again")
		host := strings.Split(strings.TrimPrefix(repo, ocipkg.Scheme), "/")[0]
		config := `{"auths":{"` + host + `":{"username":"kudo","password":"` + ns + `"}}}`
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: ns},
			Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(config)}}
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())
		DeferCleanup(func() { Expect(k8sClient.Delete(ctx, secret)).To(Succeed()) })
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(policy), policy)).To(Succeed())
		policy.Spec.Authorities[0].Name = "releases"
		Expect(k8sClient.Update(ctx, policy)).To(Succeed())
		Eventually(func(g Gomega) {
			verified := condition(g, private, trust.VerifiedCondition)
			g.Expect(verified.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(verified.Message).To(ContainSubstring("signed by releases of TrustPolicy " + ns))
		}).Should(Succeed())
	})
})
