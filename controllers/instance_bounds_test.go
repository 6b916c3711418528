package controllers_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// manyConfigMaps renders 10,000 ConfigMaps from one template: more than an
// Instance's inventory holds.
const manyConfigMaps = `{{ range $k := until 10000 }}---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Name }}-part-{{ $k }}
{{ end }}`

var _ = Describe("An Instance kept storable", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("fails a plan whose objects the inventory cannot hold before it applies any, while other Instances deploy", func() {
		big := configMapsOperator(ns, "big")
		big.Spec.Templates["a.yaml"] = manyConfigMaps
		Expect(k8sClient.Create(ctx, big)).To(Succeed())
		Expect(k8sClient.Create(ctx, configMapsOperator(ns, "cms"))).To(Succeed())
		tooMany := newInstance(ns, "too-many", "big-0.1.0")
		Expect(k8sClient.Create(ctx, tooMany)).To(Succeed())
		fine := newInstance(ns, "fine", "cms-0.1.0")
		Expect(k8sClient.Create(ctx, fine)).To(Succeed())

		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, client.ObjectKeyFromObject(tooMany))
			deploy := got.Status.PlanStatus["deploy"]
			g.Expect(deploy.Status).To(Equal(kudov1beta1.ExecutionFatalError))
			g.Expect(deploy.Message).To(ContainSubstring(
				"task a: the Instance's inventory would hold 10000 objects in"))
			g.Expect(deploy.Message).To(ContainSubstring("more than the 640 KiB it may"))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.StalledCondition)).To(BeTrue())
		}).Should(Succeed())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "too-many-part-0"}, &corev1.ConfigMap{}))).
			To(BeTrue(), "a ConfigMap was applied past the inventory's bound")
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, client.ObjectKeyFromObject(fine))
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())
	})

	It("renders within the controller's render limits, not the defaults", func() {
		large := configMapsOperator(ns, "large")
		// 3.5 MiB: within render.DefaultLimits, past the suite's 3 MiB.
		large.Spec.Templates["a.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: large}\n" +
			"data: {a: {{ repeat 3670016 \"x\" | quote }}}\n"
		Expect(k8sClient.Create(ctx, large)).To(Succeed())
		i := newInstance(ns, "large", "large-0.1.0")
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			deploy := getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"]
			g.Expect(deploy.Status).To(Equal(kudov1beta1.ExecutionFatalError))
			g.Expect(deploy.Message).To(ContainSubstring("(--render-max-bytes)"))
		}).Should(Succeed())
	})

	It("refuses spec.parameters past 128 KiB at admission, naming the largest", func() {
		Expect(k8sClient.Create(ctx, configMapsOperator(ns, "cms"))).To(Succeed())
		i := newInstance(ns, "large", "cms-0.1.0")
		i.Spec.Parameters = map[string]string{"GREETING": strings.Repeat("h", 200<<10)}
		err := k8sClient.Create(ctx, i)
		Expect(err).To(MatchError(ContainSubstring(
			"spec.parameters take 200 KiB (the largest, GREETING, 200 KiB), more than the 128 KiB an Instance holds")))
	})
})
