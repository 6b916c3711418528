package controllers_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
)

// credentialsTemplate hands the password to the application as a Secret,
// and, to see it arrive, its length in a ConfigMap.
const credentialsTemplate = `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Name }}-credentials
stringData:
  password: {{ .Params.PASSWORD | quote }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Name }}-seen
data:
  length: {{ len .Params.PASSWORD | quote }}
  user: {{ .Params.USER | quote }}
`

var _ = Describe("Secret parameters", func() {
	var (
		ctx context.Context
		ns  string
		ov  *kudov1beta1.OperatorVersion
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		ov = &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator:  corev1.ObjectReference{Name: "db", Kind: "Operator"},
				Version:   "0.1.0",
				Templates: map[string]string{"credentials.yaml": credentialsTemplate},
				Parameters: []kudov1beta1.Parameter{
					{Name: "USER", Default: ptr.To("admin")},
					{Name: "PASSWORD", Required: ptr.To(true), Sensitive: ptr.To(true)},
				},
				Tasks: []kudov1beta1.Task{applyTask("credentials", "credentials.yaml")},
				Plans: map[string]kudov1beta1.Plan{
					"deploy": plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("credentials", "credentials"))),
					"update": plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("credentials", "credentials"))),
				},
			},
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
	})

	secret := func(name, password string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"password": []byte(password)}}
	}
	withSecretPassword := func(name string) *kudov1beta1.Instance {
		i := newInstance(ns, "db", ov.Name)
		i.Spec.SecretParameters = map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: name, Key: "password"}}
		return i
	}
	// noValueIn fails when the Instance's status or the namespace's events
	// hold a password, in any form.
	noValueIn := func(g Gomega, key types.NamespacedName, passwords ...string) {
		status, err := json.Marshal(getInstance(ctx, g, key).Status)
		g.Expect(err).NotTo(HaveOccurred())
		events := &corev1.EventList{}
		g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		eventText, err := json.Marshal(events.Items)
		g.Expect(err).NotTo(HaveOccurred())
		for _, p := range passwords {
			g.Expect(string(status)).NotTo(ContainSubstring(p))
			g.Expect(string(eventText)).NotTo(ContainSubstring(p))
		}
	}

	It("gives templates the Secret key's value, records only its mask, and runs the trigger's plan when the Secret changes", func() {
		Expect(k8sClient.Create(ctx, secret("db-password", "first-s3cr3t-value"))).To(Succeed())
		Expect(k8sClient.Create(ctx, withSecretPassword("db-password"))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "db"}
		seen := &corev1.ConfigMap{}
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, key)
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(params.IsMasked(i.Status.AppliedParameters["PASSWORD"])).To(BeTrue(), "%v", i.Status.AppliedParameters)
			g.Expect(i.Status.Revisions[0].SecretParameters).To(HaveKeyWithValue("PASSWORD",
				kudov1beta1.SecretKeyReference{Name: "db-password", Key: "password"}))
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db-seen"}, seen)).To(Succeed())
		}).Should(Succeed())
		Expect(seen.Data).To(Equal(map[string]string{"length": "18", "user": "admin"}))
		credentials := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db-credentials"}, credentials)).To(Succeed())
		Expect(string(credentials.Data["password"])).To(Equal("first-s3cr3t-value"))

		changed := secret("db-password", "second-s3cr3t-value!")
		Expect(k8sClient.Update(ctx, changed)).To(Succeed())
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, key)
			g.Expect(i.Status.PlanStatus["update"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db-credentials"}, credentials)).To(Succeed())
			g.Expect(string(credentials.Data["password"])).To(Equal("second-s3cr3t-value!"))
		}).Should(Succeed())
		Consistently(func(g Gomega) { noValueIn(g, key, "s3cr3t") }, "1s").Should(Succeed())
		// The plan the Secret's change ran completed in one reconcile: what
		// it wrote is judged as written, not as the cache held it before.
		events := &corev1.EventList{}
		Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		Expect(events.Items).NotTo(ContainElement(HaveField("Reason", "Drifted")))

		// A change of another key, or of the Secret's labels, runs nothing.
		runs := len(getInstance(ctx, Default, key).Status.Revisions)
		changed.Labels = map[string]string{"team": "db"}
		changed.Data["other"] = []byte("x")
		Expect(k8sClient.Update(ctx, changed)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(getInstance(ctx, g, key).Status.Revisions).To(HaveLen(runs))
		}, "1s").Should(Succeed())
	})

	It("gives a KudoOperator child the parent's sensitive value through a Secret, and waits for the child to run with a new one", func() {
		// The child's package does not mark PASSWORD sensitive: the parent's
		// does. Its update plan waits for a Deployment, available when the
		// test says so.
		child := ov.DeepCopy()
		child.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "db-0.2.0"}
		child.Spec.Version = secondVersion
		child.Spec.Parameters[1].Sensitive = nil
		child.Spec.Templates["web.yaml"] = webTemplate
		child.Spec.Tasks = append(child.Spec.Tasks, applyTask("web", "web.yaml"))
		child.Spec.Plans["update"] = plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("credentials", "credentials"), step("web", "web")))
		Expect(k8sClient.Create(ctx, child)).To(Succeed())
		deps := plan(kudov1beta1.Serial, phase("deps", kudov1beta1.Serial, step("db", "db")))
		parent := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator:   corev1.ObjectReference{Name: "shop"},
				Version:    "0.1.0",
				Parameters: []kudov1beta1.Parameter{{Name: "DB_PASSWORD", Required: ptr.To(true), Sensitive: ptr.To(true)}},
				Templates:  map[string]string{"db-params.yaml": "PASSWORD: {{ .Params.DB_PASSWORD | quote }}\n"},
				Tasks: []kudov1beta1.Task{{Name: "db", Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{
					KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "db", OperatorVersion: secondVersion, ParameterFile: "db-params.yaml"}}}},
				Plans: map[string]kudov1beta1.Plan{"deploy": deps, "update": deps},
			},
		}
		Expect(k8sClient.Create(ctx, parent)).To(Succeed())
		i := newInstance(ns, "shop", parent.Name)
		i.Spec.Parameters = map[string]string{"DB_PASSWORD": "first-s3cr3t-value"}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key, childKey := client.ObjectKeyFromObject(i), types.NamespacedName{Namespace: ns, Name: "shop-db"}
		planOf := func(g Gomega, key types.NamespacedName, name string) kudov1beta1.ExecutionStatus {
			return getInstance(ctx, g, key).Status.PlanStatus[name].Status
		}
		password := func(g Gomega) string {
			credentials := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop-db-credentials"}, credentials)).To(Succeed())
			return string(credentials.Data["password"])
		}
		readsFrom := func(g Gomega) string {
			c := getInstance(ctx, g, childKey)
			g.Expect(c.Spec.Parameters).NotTo(HaveKey("PASSWORD"))
			spec, err := json.Marshal(c.Spec)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(spec)).NotTo(ContainSubstring("s3cr3t"))
			ref := c.Spec.SecretParameters["PASSWORD"]
			g.Expect(ref.Name).To(HavePrefix("shop-db-parameters-"))
			g.Expect(ref.Key).To(Equal("PASSWORD"))
			return ref.Name
		}
		Eventually(func(g Gomega) {
			g.Expect(planOf(g, key, "deploy")).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(planOf(g, childKey, "deploy")).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(password(g)).To(Equal("first-s3cr3t-value"))
		}).Should(Succeed())
		first := readsFrom(Default)

		Expect(k8sClient.Get(ctx, key, i)).To(Succeed())
		i.Spec.Parameters["DB_PASSWORD"] = "second-s3cr3t-value!"
		Expect(k8sClient.Update(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(password(g)).To(Equal("second-s3cr3t-value!"))
			g.Expect(planOf(g, childKey, "update")).To(Equal(kudov1beta1.ExecutionInProgress))
		}).Should(Succeed())
		Expect(readsFrom(Default)).NotTo(Equal(first))
		// The parent's plan waits for the child's, as for a change of its spec.
		Consistently(func(g Gomega) {
			g.Expect(planOf(g, key, "update")).To(Equal(kudov1beta1.ExecutionInProgress))
		}, "1s").Should(Succeed())
		makeAvailable(ctx, types.NamespacedName{Namespace: ns, Name: "shop-db-web"})
		Eventually(func(g Gomega) {
			g.Expect(planOf(g, childKey, "update")).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(planOf(g, key, "update")).To(Equal(kudov1beta1.ExecutionComplete))
			// The first run's Secret is pruned.
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: first}, &corev1.Secret{}))).To(BeTrue())
		}).Should(Succeed())
		noValueIn(Default, key, "s3cr3t")
		noValueIn(Default, childKey, "s3cr3t")
	})

	It("waits for a missing Secret, naming it, and deploys once it exists", func() {
		Expect(k8sClient.Create(ctx, withSecretPassword("late"))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "db"}
		Eventually(func(g Gomega) {
			ready := meta.FindStatusCondition(getInstance(ctx, g, key).Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Message).To(Equal("parameter PASSWORD: secret " + ns + "/late not found"))
		}).Should(Succeed())

		Expect(k8sClient.Create(ctx, secret("late", "late-s3cr3t-value"))).To(Succeed())
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, key)
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(meta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
		}).Should(Succeed())
	})

	// uidMask is the mask kudo-ng recorded before the manager had a key of
	// its own: the HMAC of the value keyed with the Instance's uid, which
	// whoever reads the Instance reads too.
	uidMask := func(uid types.UID, value string) string {
		mac := hmac.New(sha256.New, []byte(uid))
		mac.Write([]byte(value))
		return "<sensitive sha256:" + hex.EncodeToString(mac.Sum(nil))[:16] + ">"
	}
	deployed := func(key types.NamespacedName) *kudov1beta1.Instance {
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, key)
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(meta.IsStatusConditionTrue(i.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
			// The spec, as its planExecution was cleared, asks for nothing:
			// kubectl kudo rollback may take its sensitive values.
			g.Expect(i.Status.AppliedGeneration).To(Equal(i.Generation))
		}).Should(Succeed())
		return getInstance(ctx, Default, key)
	}

	It("records a mask no reader of the Instance can make: not the HMAC of the value keyed with its uid", func() {
		i := newInstance(ns, "db", ov.Name)
		i.Spec.Parameters = map[string]string{"PASSWORD": "123456"}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		got := deployed(types.NamespacedName{Namespace: ns, Name: "db"})
		applied := got.Status.AppliedParameters["PASSWORD"]
		Expect(params.IsMasked(applied)).To(BeTrue(), applied)
		Expect(applied).NotTo(Equal(uidMask(got.UID, "123456")), "a reader tries every 6-digit PIN against it in 0.4 s")
		Expect(engine.Revisions(&got.Status)).To(ConsistOf(HaveField("Parameters", HaveKeyWithValue("PASSWORD", applied))))
	})

	It("makes the masks recorded before the manager had a key again with its key, and starts no plan", func() {
		i := newInstance(ns, "db", ov.Name)
		i.Spec.Parameters = map[string]string{"PASSWORD": "hunter2-long"}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "db"}
		got := deployed(key)
		recorded := got.Status.AppliedParameters["PASSWORD"]

		// The status as the manager before this one recorded it, revisions whole.
		before := got.DeepCopy()
		got.Status.AppliedParameters["PASSWORD"] = uidMask(got.UID, "hunter2-long")
		got.Status.Revisions[0].Parameters = map[string]string{"PASSWORD": uidMask(got.UID, "hunter2-long")}
		Expect(k8sClient.Status().Patch(ctx, got, client.MergeFrom(before))).To(Succeed())
		// Any reconcile makes the masks again; a new annotation wakes it.
		before = got.DeepCopy()
		got.Annotations = map[string]string{"test": "wake up"}
		Expect(k8sClient.Patch(ctx, got, client.MergeFrom(before))).To(Succeed())

		Eventually(func(g Gomega) {
			now := getInstance(ctx, g, key)
			g.Expect(now.Status.AppliedParameters).To(HaveKeyWithValue("PASSWORD", recorded))
			g.Expect(engine.Revisions(&now.Status)).To(ConsistOf(HaveField("Parameters", HaveKeyWithValue("PASSWORD", recorded))))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			now := getInstance(ctx, g, key)
			g.Expect(now.Status.Revisions).To(HaveLen(1))
			g.Expect(now.Status.PlanStatus["update"].Status).To(Equal(kudov1beta1.ExecutionNeverRun))
		}, "1s").Should(Succeed())
	})

	It("masks a sensitive value set in the spec in the status and in the messages of a step that fails on it", func() {
		bad := ov.DeepCopy()
		bad.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "db-0.2.0"}
		bad.Spec.Version = secondVersion
		// The API server refuses the label value, and says what it was.
		bad.Spec.Templates = map[string]string{"credentials.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Name }}-labelled
  labels: {password: {{ .Params.PASSWORD | quote }}}
`}
		Expect(k8sClient.Create(ctx, bad)).To(Succeed())
		i := newInstance(ns, "db", bad.Name)
		i.Spec.Parameters = map[string]string{"PASSWORD": "not a label/s3cr3t"}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "db"}
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			ps := got.Status.PlanStatus["deploy"]
			g.Expect(ps.Status).To(Equal(kudov1beta1.ExecutionFatalError))
			g.Expect(ps.Message).To(ContainSubstring("<sensitive PASSWORD>"))
			g.Expect(params.IsMasked(got.Status.AppliedParameters["PASSWORD"])).To(BeTrue())
		}).Should(Succeed())
		noValueIn(Default, key, "s3cr3t")
	})
})
