package controllers_test

import (
	"context"
	"time"

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
	"github.com/kudo-ng/kudo/test/typedtest"
)

// remoteNamespace makes namespace ns in the remote cluster, and in this one
// a Secret secret holding kubeconfig, under the default key.
func remoteNamespace(ctx context.Context, ns, secret string, kubeconfig []byte) {
	GinkgoHelper()
	Expect(remoteClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secret},
		Data: map[string][]byte{kudov1beta1.DefaultKubeConfigKey: kubeconfig}})).To(Succeed())
}

// remoteInstance makes, in namespace ns of both clusters, a kubeconfig
// Secret of kubeconfig and an Instance "demo" of configMapsOperator acting
// on the remote cluster with it, drift correction on.
func remoteInstance(ctx context.Context, ns string, kubeconfig []byte) types.NamespacedName {
	GinkgoHelper()
	remoteNamespace(ctx, ns, "remote-kubeconfig", kubeconfig)
	Expect(k8sClient.Create(ctx, configMapsOperator(ns, "cms"))).To(Succeed())
	i := newInstance(ns, "demo", "cms-0.1.0")
	i.Annotations = map[string]string{kudov1beta1.DriftCorrectionAnnotation: "true"}
	i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "remote-kubeconfig"}}
	Expect(k8sClient.Create(ctx, i)).To(Succeed())
	return client.ObjectKeyFromObject(i)
}

func remoteConfigMap(ctx context.Context, g Gomega, ns, name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	g.Expect(remoteClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)).To(Succeed())
	return cm
}

var _ = Describe("An Instance with spec.kubeConfig", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("applies its plans to the other cluster, corrects drift there, and cleans it up when uninstalled", func() {
		key := remoteInstance(ctx, ns, remoteKubeConfig)
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
			g.Expect(got.Finalizers).To(ContainElement(kudov1beta1.InstanceCleanupFinalizer))
		}).Should(Succeed())

		cm := remoteConfigMap(ctx, Default, ns, "demo-a")
		Expect(cm.Data).To(HaveKeyWithValue("greeting", "hello"))
		Expect(cm.Annotations).To(HaveKeyWithValue(kudov1beta1.OwnerAnnotation, ns+"/demo"))
		Expect(cm.OwnerReferences).To(BeEmpty(), "an owner reference to an Instance of another cluster")
		local := &corev1.ConfigMap{}
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-a"}, local))).To(BeTrue(),
			"the Instance's objects are in the other cluster only")

		By("correcting drift there")
		Expect(remoteClient.Delete(ctx, cm)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(remoteConfigMap(ctx, g, ns, "demo-a").UID).NotTo(Equal(cm.UID))
		}).Should(Succeed())

		By("running the plan a parameter triggers there")
		setParameters(ctx, key, map[string]string{"GREETING": "hi"})
		Eventually(func(g Gomega) {
			g.Expect(remoteConfigMap(ctx, g, ns, "demo-b").Data).To(HaveKeyWithValue("greeting", "hi"))
		}).Should(Succeed())

		By("running the cleanup plan there, then deleting what it applied")
		Expect(k8sClient.Delete(ctx, &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &kudov1beta1.Instance{}))).To(BeTrue())
		}).Should(Succeed())
		list := &corev1.ConfigMapList{}
		Expect(remoteClient.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{kudov1beta1.InstanceLabel: "demo"})).To(Succeed())
		Expect(list.Items).To(BeEmpty())
	})

	It("waits while its cluster does not answer, and resumes its plan when it does", Serial, func() {
		key := remoteInstance(ctx, ns, proxiedKubeConfig)
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())

		remoteProxy.Down()
		DeferCleanup(func() { Expect(remoteProxy.Up()).To(Succeed()) })
		setParameters(ctx, key, map[string]string{"GREETING": "hi"})
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["update"].Status).To(Equal(kudov1beta1.ExecutionInProgress))
			ready := meta.FindStatusCondition(got.Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal(kudov1beta1.ClusterUnreachableReason))
			g.Expect(ready.Message).To(ContainSubstring("Secret " + ns + "/remote-kubeconfig key value"))
		}).WithTimeout(time.Minute).Should(Succeed())

		Expect(remoteProxy.Up()).To(Succeed())
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["update"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
			g.Expect(remoteConfigMap(ctx, g, ns, "demo-b").Data).To(HaveKeyWithValue("greeting", "hi"))
		}).WithTimeout(time.Minute).Should(Succeed())
	})

	It("runs a typed object's plans on the cluster its spec.kubeConfig names, and refuses a change of it", func() {
		remoteNamespace(ctx, ns, "remote-kubeconfig", remoteKubeConfig)
		_, names := typedOperator(ctx, ns)
		key := types.NamespacedName{Namespace: ns, Name: "t"}
		createDeployedWith(ctx, names, key, map[string]any{
			"GREETING": "hi", "kubeConfig": map[string]any{"secretRef": map[string]any{"name": "remote-kubeconfig"}},
		})
		Expect(getInstance(ctx, Default, key).Spec.KubeConfig).To(Equal(
			&kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "remote-kubeconfig"}}))
		Expect(remoteConfigMap(ctx, Default, ns, "t-a").Data).To(HaveKeyWithValue("greeting", "hi"))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "t-a"}, &corev1.ConfigMap{}))).To(BeTrue())

		err := k8sClient.Patch(ctx, typedtest.Object(names, ns, "t", map[string]any{
			"kubeConfig": map[string]any{"secretRef": map[string]any{"name": "other-kubeconfig"}},
		}), client.Merge)
		Expect(err).To(MatchError(ContainSubstring("spec.kubeConfig")))
	})

	It("runs a KudoOperator task's child beside it, acting on its cluster, and removes both when uninstalled", func() {
		remoteNamespace(ctx, ns, "remote-kubeconfig", remoteKubeConfig)
		child := configMapsOperator(ns, "child")
		child.Spec.Parameters[0].Sensitive = ptr.To(true)
		Expect(k8sClient.Create(ctx, child)).To(Succeed())
		parent := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parent-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator:  corev1.ObjectReference{Name: "parent"},
				Templates: map[string]string{"child-params.yaml": "GREETING: from parent\n"},
				Tasks: []kudov1beta1.Task{{Name: "child", Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{
					KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "child", OperatorVersion: "0.1.0", ParameterFile: "child-params.yaml"}}}},
				Plans: map[string]kudov1beta1.Plan{"deploy": plan("", phase("deps", "", step("child", "child")))},
			},
		}
		Expect(k8sClient.Create(ctx, parent)).To(Succeed())
		i := newInstance(ns, "app", parent.Name)
		i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "remote-kubeconfig"}}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		childKey := client.ObjectKey{Namespace: ns, Name: "app-child"}
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, client.ObjectKeyFromObject(i))
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue(), "%v", got.Status.Conditions)
			g.Expect(remoteConfigMap(ctx, g, ns, "app-child-a").Data).To(HaveKeyWithValue("greeting", "from parent"))
		}).Should(Succeed())
		c := getInstance(ctx, Default, childKey)
		Expect(c.Spec.KubeConfig).To(Equal(i.Spec.KubeConfig))
		Expect(metav1.GetControllerOf(c).Name).To(Equal("app"))
		values := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Spec.SecretParameters["GREETING"].Name}, values)).To(Succeed())
		Expect(metav1.GetControllerOf(values).Name).To(Equal("app"), "the child's values are beside it, the parent's")
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-child-a"}, &corev1.ConfigMap{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(remoteClient.Get(ctx, client.ObjectKeyFromObject(values), &corev1.Secret{}))).To(BeTrue())

		By("uninstalling the parent, which removes the child, which cleans its cluster")
		Expect(k8sClient.Delete(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), &kudov1beta1.Instance{}))).To(BeTrue())
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, childKey, &kudov1beta1.Instance{}))).To(BeTrue())
			g.Expect(apierrors.IsNotFound(remoteClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-child-a"}, &corev1.ConfigMap{}))).To(BeTrue())
		}).Should(Succeed())
	})

	It("says which Secret and key hold a kubeconfig it cannot use", func() {
		remoteNamespace(ctx, ns, "remote-kubeconfig", []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "+
			"'https://kubernetes.default.svc'}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: x\n"+
			"  context: {cluster: c, user: u}\ncurrent-context: x\n"))
		Expect(k8sClient.Create(ctx, configMapsOperator(ns, "cms"))).To(Succeed())
		i := newInstance(ns, "demo", "cms-0.1.0")
		i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "remote-kubeconfig"}}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			ready := meta.FindStatusCondition(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.Conditions, kudov1beta1.ReadyCondition)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal(kudov1beta1.InvalidKubeConfigReason))
			g.Expect(ready.Message).To(ContainSubstring("Secret " + ns + "/remote-kubeconfig key value: the manager may not connect to " +
				"https://kubernetes.default.svc"))
		}).Should(Succeed())
	})
})
