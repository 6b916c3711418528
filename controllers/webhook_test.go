package controllers_test

import (
	"context"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// webOperator has parameters of every kind the rules look at; its plans
// apply ConfigMaps, which finish at once in envtest. With slow, deploy
// waits for ever on a Dummy task, so that a plan stays running.
func webOperator(ns, name string, slow bool) *kudov1beta1.OperatorVersion {
	ov := configMapsOperator(ns, name)
	ov.Spec.Parameters = append(ov.Spec.Parameters,
		kudov1beta1.Parameter{Name: "SIZE", Default: ptr.To("small"), Immutable: ptr.To(true)},
		kudov1beta1.Parameter{Name: "COUNT", Default: ptr.To("1"), Type: kudov1beta1.IntegerValueType},
		kudov1beta1.Parameter{Name: "LEVEL", Default: ptr.To("low"), Enum: &[]string{"low", "high"}},
		kudov1beta1.Parameter{Name: "TOKEN", Required: ptr.To(true)},
	)
	if slow {
		ov.Spec.Tasks = append(ov.Spec.Tasks, kudov1beta1.Task{Name: "wait", Kind: kudov1beta1.DummyTaskKind})
		ov.Spec.Plans["deploy"] = plan("", phase("main", "", step("wait", "wait")))
	}
	return ov
}

func createInstance(ctx context.Context, ns, ov string, params map[string]string) (*kudov1beta1.Instance, error) {
	i := newInstance(ns, "web", ov)
	i.Spec.Parameters = params
	return i, k8sClient.Create(ctx, i)
}

// update patches the Instance's spec with f and returns the API's answer.
func update(ctx context.Context, i *kudov1beta1.Instance, f func(*kudov1beta1.Instance)) error {
	current := &kudov1beta1.Instance{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(i), current); err != nil {
		return err
	}
	patch := client.MergeFrom(current.DeepCopy())
	f(current)
	return k8sClient.Patch(ctx, current, patch)
}

func deployed(ctx context.Context, i *kudov1beta1.Instance) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		g.Expect(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Spec.PlanExecution.PlanName).To(BeEmpty())
	}).Should(Succeed())
}

var _ = Describe("Instance admission", func() {
	var (
		ctx context.Context
		ns  string
	)
	token := map[string]string{"TOKEN": "t"}
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, webOperator(ns, "web", false))).To(Succeed())
		Expect(k8sClient.Create(ctx, webOperator(ns, "slow", true))).To(Succeed())
	})

	Describe("on create", func() {
		DescribeTable("refuses",
			func(ov string, params map[string]string, message string) {
				_, err := createInstance(ctx, ns, ov, params)
				Expect(err).To(MatchError(ContainSubstring(message)))
			},
			Entry("an OperatorVersion that does not exist", "ghost-0.1.0", token,
				`OperatorVersion "ghost-0.1.0" not found in namespace `),
			Entry("a missing required parameter", "web-0.1.0", nil,
				"parameter TOKEN is required and has no default: set spec.parameters.TOKEN"),
			Entry("an undefined parameter", "web-0.1.0", map[string]string{"TOKEN": "t", "COLOUR": "red"},
				"parameter COLOUR is not defined by OperatorVersion web-0.1.0"),
			Entry("a value of the wrong type", "web-0.1.0", map[string]string{"TOKEN": "t", "COUNT": "many"},
				`parameter COUNT: "many" is not an integer`),
			Entry("a value outside the enum", "web-0.1.0", map[string]string{"TOKEN": "t", "LEVEL": "max"},
				`parameter LEVEL: "max" is not one of low, high`),
		)

		It("refuses an OperatorVersion without a deploy plan", func() {
			ov := webOperator(ns, "nodeploy", false)
			delete(ov.Spec.Plans, "deploy")
			Expect(k8sClient.Create(ctx, ov)).To(Succeed())
			_, err := createInstance(ctx, ns, ov.Name, token)
			Expect(err).To(MatchError(ContainSubstring("OperatorVersion nodeploy-0.1.0 has no deploy plan")))
		})

		It("schedules deploy with a fresh uid and fills immutable defaults", func() {
			i, err := createInstance(ctx, ns, "web-0.1.0", token)
			Expect(err).NotTo(HaveOccurred())
			Expect(i.Spec.PlanExecution.PlanName).To(Equal("deploy"))
			Expect(i.Spec.PlanExecution.UID).NotTo(BeEmpty())
			Expect(i.Spec.Parameters).To(Equal(map[string]string{"TOKEN": "t", "SIZE": "small"}))
			deployed(ctx, i)
		})
	})

	Describe("on update", func() {
		It("schedules the plan a parameter triggers", func() {
			i, err := createInstance(ctx, ns, "web-0.1.0", token)
			Expect(err).NotTo(HaveOccurred())
			deployed(ctx, i)
			Expect(update(ctx, i, func(i *kudov1beta1.Instance) { i.Spec.Parameters["MOOD"] = "bright" })).To(Succeed())
			got := getInstance(ctx, Default, client.ObjectKeyFromObject(i))
			Expect(got.Spec.PlanExecution.PlanName).To(Equal("mood"))
			Eventually(func(g Gomega) {
				g.Expect(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["mood"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			}).Should(Succeed())
		})

		DescribeTable("refuses",
			func(slow bool, change func(*kudov1beta1.Instance), message string) {
				ov := "web-0.1.0"
				if slow {
					ov = "slow-0.1.0"
				}
				i, err := createInstance(ctx, ns, ov, token)
				Expect(err).NotTo(HaveOccurred())
				if !slow {
					deployed(ctx, i)
				}
				Expect(update(ctx, i, change)).To(MatchError(ContainSubstring(message)))
			},
			Entry("an unknown plan", false, func(i *kudov1beta1.Instance) {
				i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "backup", UID: "u-1"}
			}, `plan "backup" is not defined by OperatorVersion web-0.1.0; the plans are cleanup, deploy, mood, update`),
			Entry("an undefined parameter", false, func(i *kudov1beta1.Instance) { i.Spec.Parameters["COLOUR"] = "red" },
				"parameter COLOUR is not defined by OperatorVersion web-0.1.0"),
			Entry("a change of an immutable parameter", false, func(i *kudov1beta1.Instance) { i.Spec.Parameters["SIZE"] = "large" },
				`parameter SIZE is immutable: it cannot change from "small" to "large"; to change it, install a new Instance`),
			Entry("parameters that trigger different plans", false, func(i *kudov1beta1.Instance) {
				i.Spec.Parameters["GREETING"], i.Spec.Parameters["MOOD"] = "hi", "dark"
			}, "parameters that trigger different plans cannot change together (GREETING triggers update; MOOD triggers mood)"),
			Entry("a plan while another runs", true, func(i *kudov1beta1.Instance) {
				i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "mood", UID: "u-2"}
			}, "plan deploy is running: start mood when it has finished, or cancel it first"),
			Entry("a parameter that triggers another plan while one runs", true, func(i *kudov1beta1.Instance) {
				i.Spec.Parameters["MOOD"] = "dark"
			}, "plan deploy is running, and changing MOOD would start plan mood: change them when deploy has finished, or cancel it first"),
			Entry("cleanup by hand", false, func(i *kudov1beta1.Instance) {
				i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "cleanup", UID: "u-3"}
			}, "the cleanup plan runs when the Instance is deleted and cannot be started by hand"),
			Entry("an upgrade while a plan runs", true, func(i *kudov1beta1.Instance) {
				i.Spec.OperatorVersion.Name = "web-0.1.0"
			}, "plan deploy is running: upgrade to web-0.1.0 when it has finished, or cancel it first"),
			Entry("cancelling when nothing runs", false, func(i *kudov1beta1.Instance) {
				i.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "deploy", UID: "u-4", Status: kudov1beta1.ExecutionCancelled}
			}, "only the running plan can be cancelled"),
		)

		It("lets a metadata-only update through untouched while a plan runs", func() {
			i, err := createInstance(ctx, ns, "slow-0.1.0", token)
			Expect(err).NotTo(HaveOccurred())
			before := getInstance(ctx, Default, client.ObjectKeyFromObject(i)).Spec
			Expect(update(ctx, i, func(i *kudov1beta1.Instance) { i.Labels = map[string]string{"team": "web"} })).To(Succeed())
			Expect(getInstance(ctx, Default, client.ObjectKeyFromObject(i)).Spec).To(Equal(before))
		})
	})

	It("cancels a plan that never finishes, and lets the next one run", func() {
		i, err := createInstance(ctx, ns, "slow-0.1.0", token)
		Expect(err).NotTo(HaveOccurred())
		key := client.ObjectKeyFromObject(i)
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionInProgress))
		}).Should(Succeed())

		Expect(update(ctx, i, func(i *kudov1beta1.Instance) { i.Spec.PlanExecution.Status = kudov1beta1.ExecutionCancelled })).To(Succeed())
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			deploy := got.Status.PlanStatus["deploy"]
			g.Expect(deploy.Status).To(Equal(kudov1beta1.ExecutionCancelled))
			g.Expect(deploy.Phases[0].Steps[0].Status).To(Equal(kudov1beta1.ExecutionCancelled))
			g.Expect(got.Spec.PlanExecution).To(Equal(kudov1beta1.PlanExecution{}))
		}).Should(Succeed())

		Expect(update(ctx, i, func(i *kudov1beta1.Instance) { i.Spec.Parameters["MOOD"] = "better" })).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["mood"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())
	})

	It("lets exactly one of 20 concurrent updates that trigger different plans win", func() {
		// Each parameter triggers a plan of its own, which waits for ever: the
		// first update to win keeps its plan running, so every other must be refused.
		ov := webOperator(ns, "many", false)
		ov.Spec.Tasks = append(ov.Spec.Tasks, kudov1beta1.Task{Name: "wait", Kind: kudov1beta1.DummyTaskKind})
		for k := range 20 {
			plan := fmt.Sprintf("plan-%d", k)
			ov.Spec.Parameters = append(ov.Spec.Parameters, kudov1beta1.Parameter{Name: fmt.Sprintf("P%d", k), Default: ptr.To("0"), Trigger: plan})
			ov.Spec.Plans[plan] = kudov1beta1.Plan{Phases: []kudov1beta1.Phase{phase("main", "", step("wait", "wait"))}}
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i, err := createInstance(ctx, ns, ov.Name, token)
		Expect(err).NotTo(HaveOccurred())
		deployed(ctx, i)

		var wg sync.WaitGroup
		errs := make([]error, 20)
		for k := range 20 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				errs[k] = update(ctx, i, func(i *kudov1beta1.Instance) { i.Spec.Parameters[fmt.Sprintf("P%d", k)] = "1" })
			}()
		}
		wg.Wait()
		winners := []int{}
		for k, err := range errs {
			if err == nil {
				winners = append(winners, k)
				continue
			}
			Expect(err).To(MatchError(MatchRegexp(`plan plan-\d+ is running, and changing P%d would start plan plan-%d`, k, k)))
		}
		Expect(winners).To(HaveLen(1))
		won := winners[0]
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, client.ObjectKeyFromObject(i))
			for k := range 20 {
				want := kudov1beta1.ExecutionNeverRun
				if k == won {
					want = kudov1beta1.ExecutionInProgress
					g.Expect(got.Spec.Parameters[fmt.Sprintf("P%d", k)]).To(Equal("1"))
				} else {
					g.Expect(got.Spec.Parameters).NotTo(HaveKey(fmt.Sprintf("P%d", k)))
				}
				g.Expect(got.Status.PlanStatus[fmt.Sprintf("plan-%d", k)].Status).To(Equal(want), "plan-%d", k)
			}
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())
	})
})

var _ = Describe("OperatorVersion admission", func() {
	DescribeTable("refuses what can never run",
		func(change func(*kudov1beta1.OperatorVersion), message string) {
			ctx := context.Background()
			ov := webOperator(newNamespace(ctx), "bad", false)
			change(ov)
			Expect(k8sClient.Create(ctx, ov)).To(MatchError(ContainSubstring(message)))
		},
		Entry("a plan naming an undefined task", func(ov *kudov1beta1.OperatorVersion) {
			ov.Spec.Plans["deploy"].Phases[0].Steps[0].Tasks = []string{"ghost"}
		}, `spec.plans[deploy].phases[0].steps[0].tasks[0]: Not found: "ghost"`),
		Entry("a Toggle without its parameter", func(ov *kudov1beta1.OperatorVersion) {
			ov.Spec.Tasks[0].Kind = kudov1beta1.ToggleTaskKind
		}, "spec.tasks[0].spec.parameter: Required value: a Toggle task needs the boolean parameter that switches it"),
	)

	It("accepts what KUDO accepted: empty plans and no templates", func() {
		ctx := context.Background()
		ov := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: newNamespace(ctx), Name: "empty-0.1.0"},
			Spec:       kudov1beta1.OperatorVersionSpec{Operator: corev1.ObjectReference{Name: "empty"}, Plans: map[string]kudov1beta1.Plan{"deploy": {}}},
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
	})

	It("accepts a trigger naming a missing plan, as KUDO did; a change of its parameter is refused", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		ov := webOperator(ns, "web", false)
		ov.Spec.Parameters = append(ov.Spec.Parameters, kudov1beta1.Parameter{Name: "REPLICAS", Default: ptr.To("1"), Trigger: "scale"})
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i, err := createInstance(ctx, ns, ov.Name, map[string]string{"TOKEN": "t"})
		Expect(err).NotTo(HaveOccurred())
		deployed(ctx, i)
		Expect(update(ctx, i, func(i *kudov1beta1.Instance) { i.Spec.Parameters["REPLICAS"] = "3" })).To(
			MatchError(ContainSubstring(`plan "scale", triggered by REPLICAS, is not defined by the OperatorVersion`)))
	})
})
