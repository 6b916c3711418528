package controllers_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// An object applied before its kind's informer first lists the cluster
// would arrive in that list already healthy, as a create the watch holds
// back, and its step would wait for an event that never comes.
var _ = Describe("Watching the kinds packages apply", func() {
	It("returns once the new kind's informer has listed the cluster, before anything of it is applied", func() {
		ctx := context.Background()
		gvk := networkingv1.SchemeGroupVersion.WithKind("IngressClass")
		Expect(instances.WatchKind(ctx, gvk)).To(Succeed())
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		informer, err := managerCache.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		Expect(err).NotTo(HaveOccurred())
		Expect(informer.HasSynced()).To(BeTrue())
	})

	It("wakes the owners of the objects it lists by the time the watch returns, so that a change right after is not missed", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "deny", Namespace: ns, Labels: map[string]string{kudov1beta1.InstanceLabel: "owner"}},
		})).To(Succeed())
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"))
		queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		DeferCleanup(queue.ShutDown)
		// The create of an object not applied by kudo-ng (no applied hash)
		// wakes its owner, as its replay in the first list shows.
		Expect(instances.OwnerSource(obj).Start(ctx, queue)).To(Succeed())
		Expect(queue.Len()).To(Equal(1), "the handler had not seen the listed objects when the source started")
		req, _ := queue.Get()
		Expect(req.NamespacedName).To(Equal(types.NamespacedName{Namespace: ns, Name: "owner"}))
	})

	It("holds the objects of built-in kinds typed and reads them as unstructured", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns, Labels: map[string]string{"app": "web"}},
			Data:       map[string]string{"mode": "fast"},
		})).To(Succeed())
		gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
		Expect(instances.WatchKind(ctx, gvk)).To(Succeed())

		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gvk)
		Eventually(func() error {
			return managerCache.Get(ctx, client.ObjectKey{Namespace: ns, Name: "settings"}, got)
		}).Should(Succeed())
		Expect(got.GroupVersionKind()).To(Equal(gvk))
		Expect(got.Object).To(HaveKeyWithValue("data", map[string]any{"mode": "fast"}))

		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		Expect(managerCache.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"app": "web"})).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		Expect(list.Items[0].GetKind()).To(Equal("ConfigMap"))
		Expect(list.Items[0].GetName()).To(Equal("settings"))

		informer, err := managerCache.GetInformer(ctx, got)
		Expect(err).NotTo(HaveOccurred())
		held, found, err := informer.(toolscache.SharedIndexInformer).GetStore().GetByKey(ns + "/settings")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())
		Expect(held).To(BeAssignableToTypeOf(&corev1.ConfigMap{}))
	})
})
