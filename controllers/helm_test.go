package controllers_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/chartrender"
)

// helmChart is a chart "settings" of a pre-install hook ConfigMap, a hook
// ConfigMap of installs and upgrades, a post-upgrade one, and a ConfigMap of
// the values greeting and mood, as `helm package` writes one.
func helmChart() []byte {
	GinkgoHelper()
	chart, err := chartrender.Pack("settings", map[string][]byte{
		"Chart.yaml":  []byte("apiVersion: v2\nname: settings\nversion: 0.1.0\n"),
		"values.yaml": []byte("greeting: hello\nmood: calm\n"),
		"templates/settings.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\n" +
			"data:\n  greeting: {{ .Values.greeting | quote }}\n  mood: {{ .Values.mood | quote }}\n"),
		"templates/hook.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-before\n" +
			"  annotations: {helm.sh/hook: pre-install}\ndata:\n  ran: \"yes\"\n"),
		"templates/migrate.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-migrate\n" +
			"  annotations: {helm.sh/hook: \"pre-install,pre-upgrade\"}\ndata:\n  ran: \"yes\"\n"),
		"templates/notify.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-upgraded\n" +
			"  annotations: {helm.sh/hook: post-upgrade}\ndata:\n  ran: \"yes\"\n"),
	})
	Expect(err).NotTo(HaveOccurred())
	return chart
}

// installCharted creates chartedVersion and its Instance "app" in a new
// namespace.
func installCharted(ctx context.Context) (string, *kudov1beta1.Instance) {
	GinkgoHelper()
	ns := newNamespace(ctx)
	ov := chartedVersion(ns)
	Expect(k8sClient.Create(ctx, ov)).To(Succeed())
	i := newInstance(ns, "app", ov.Name)
	Expect(k8sClient.Create(ctx, i)).To(Succeed())
	return ns, i
}

// chartedVersion is an OperatorVersion of one Helm task of helmChart,
// its greeting the parameter GREETING.
func chartedVersion(ns string) *kudov1beta1.OperatorVersion {
	return &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "charted-0.1.0"},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator:   corev1.ObjectReference{Name: "charted"},
			Version:    "0.1.0",
			Parameters: []kudov1beta1.Parameter{{Name: "GREETING", Default: ptr.To("hi"), Trigger: "deploy"}},
			Templates:  map[string]string{"values.yaml": "greeting: {{ .Params.GREETING | quote }}\n"},
			Charts:     map[string][]byte{"settings": helmChart()},
			Tasks: []kudov1beta1.Task{{Name: "chart", Kind: kudov1beta1.HelmTaskKind, Spec: kudov1beta1.TaskSpec{
				HelmTaskSpec: kudov1beta1.HelmTaskSpec{Chart: "settings", Values: "values.yaml"}}}},
			Plans: map[string]kudov1beta1.Plan{"deploy": plan("", phase("main", "", step("chart", "chart")))},
		},
	}
}

var _ = Describe("A Helm task", func() {
	It("adopts the objects of a Helm release of the Instance's name that were handed over, without re-creating them", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		// As helm install left it, then annotated as docs/helm.md says.
		released := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-settings",
				Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"},
				Annotations: map[string]string{"meta.helm.sh/release-name": "app", "meta.helm.sh/release-namespace": ns,
					kudov1beta1.AdoptAnnotation: ns + "/app"}},
			Data: map[string]string{"greeting": "hello", "mood": "calm"},
		}
		Expect(k8sClient.Create(ctx, released)).To(Succeed())
		ov := chartedVersion(ns)
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i := newInstance(ns, "app", ov.Name)
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())
		adopted := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(released), adopted)).To(Succeed())
		Expect(adopted.UID).To(Equal(released.UID))
		Expect(adopted.Data).To(Equal(map[string]string{"greeting": "hi", "mood": "calm"}))
		Expect(metav1.GetControllerOf(adopted).Name).To(Equal("app"))
	})

	It("applies its chart's objects, its pre-install hook first, with the values its template renders, and again when they change", func() {
		ctx := context.Background()
		ns, i := installCharted(ctx)
		settings := func(g Gomega) *corev1.ConfigMap {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-settings"}, cm)).To(Succeed())
			return cm
		}
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(settings(g).Data).To(Equal(map[string]string{"greeting": "hi", "mood": "calm"}))
		}).Should(Succeed())
		before := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-before"}, before)).To(Succeed())
		Expect(before.CreationTimestamp.Time).NotTo(BeTemporally(">", settings(Default).CreationTimestamp.Time))
		Expect(metav1.GetControllerOf(settings(Default)).Name).To(Equal("app"))
		Expect(settings(Default).Labels).To(HaveKeyWithValue(kudov1beta1.InstanceLabel, "app"))

		setParameters(ctx, client.ObjectKeyFromObject(i), map[string]string{"GREETING": "hey"})
		Eventually(func(g Gomega) {
			g.Expect(settings(g).Data).To(HaveKeyWithValue("greeting", "hey"))
		}).Should(Succeed())
	})

	It("renders its chart with the .Capabilities of the cluster its objects go to, as helm install does, not Helm's defaults", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		chart, err := chartrender.Pack("settings", map[string][]byte{
			"Chart.yaml": []byte("apiVersion: v2\nname: settings\nversion: 0.1.0\nkubeVersion: \">=1.25.0-0\"\n"),
			"templates/capabilities.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-capabilities\ndata:\n" +
				"  minor: {{ .Capabilities.KubeVersion.Minor | quote }}\n" +
				"  instances: {{ .Capabilities.APIVersions.Has \"kudo.dev/v1beta1/Instance\" | quote }}\n" +
				"  budgets: {{ .Capabilities.APIVersions.Has \"policy/v1/PodDisruptionBudget\" | quote }}\n"),
		})
		Expect(err).NotTo(HaveOccurred())
		ov := chartedVersion(ns)
		ov.Spec.Charts["settings"] = chart
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i := newInstance(ns, "app", ov.Name)
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		server, err := discovery.NewDiscoveryClientForConfigOrDie(testEnv.Config).ServerVersion()
		Expect(err).NotTo(HaveOccurred())

		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-capabilities"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(map[string]string{"minor": server.Minor, "instances": "true", "budgets": "true"}))
		}).Should(Succeed())
	})

	It("makes its upgrade hooks anew at each plan run after the first, as each helm upgrade runs them, and keeps its install hooks", func() {
		ctx := context.Background()
		ns, i := installCharted(ctx)
		completed := func(g Gomega) types.UID {
			deploy := getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"]
			g.Expect(deploy.Status).To(Equal(kudov1beta1.ExecutionComplete))
			return deploy.UID
		}
		hook := func(g Gomega, name string) *corev1.ConfigMap {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)).To(Succeed())
			return cm
		}
		var installed types.UID
		Eventually(func(g Gomega) { installed = completed(g) }).Should(Succeed())
		installHook, upgradeHook := hook(Default, "app-before"), hook(Default, "app-migrate")
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-upgraded"}, &corev1.ConfigMap{}))).
			To(BeTrue(), "a hook of upgrades only is left out of the install")

		setParameters(ctx, client.ObjectKeyFromObject(i), map[string]string{"GREETING": "hey"})
		Eventually(func(g Gomega) {
			g.Expect(completed(g)).NotTo(Equal(installed))
			remade := hook(g, "app-migrate")
			g.Expect(remade.UID).NotTo(Equal(upgradeHook.UID), "the upgrade hook is made anew")
			g.Expect(remade.Annotations).To(HaveKeyWithValue(kudov1beta1.PlanUIDAnnotation, string(completed(g))))
			hook(g, "app-upgraded")
		}).Should(Succeed())
		kept := hook(Default, "app-before")
		Expect(kept.UID).To(Equal(installHook.UID), "the install hook is kept")
		Expect(kept.Annotations).To(HaveKeyWithValue(kudov1beta1.PlanUIDAnnotation, string(installed)), "as it is")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), i)).To(Succeed())
		Expect(i.Status.Inventory).To(ContainElement(HaveField("Objects", ContainElement(HaveField("ObjectRef.Name", "app-migrate")))))
	})
})
