package controllers_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/engine"
)

const configMapTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Name }}-%s
data:
  greeting: {{ .Params.GREETING | quote }}
  plan: {{ .PlanName }}
`

func applyTask(name string, resources ...string) kudov1beta1.Task {
	return kudov1beta1.Task{Name: name, Kind: kudov1beta1.ApplyTaskKind,
		Spec: kudov1beta1.TaskSpec{ResourceTaskSpec: kudov1beta1.ResourceTaskSpec{Resources: resources}}}
}

func plan(strategy kudov1beta1.Ordering, phases ...kudov1beta1.Phase) kudov1beta1.Plan {
	return kudov1beta1.Plan{Strategy: strategy, Phases: phases}
}

func phase(name string, strategy kudov1beta1.Ordering, steps ...kudov1beta1.Step) kudov1beta1.Phase {
	return kudov1beta1.Phase{Name: name, Strategy: strategy, Steps: steps}
}

func step(name string, tasks ...string) kudov1beta1.Step {
	return kudov1beta1.Step{Name: name, Tasks: tasks}
}

// configMapsOperator is a package of ConfigMaps only, which envtest (no
// kube-controller-manager, no nodes) can run to the end.
func configMapsOperator(ns, name string) *kudov1beta1.OperatorVersion {
	return &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-0.1.0"},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator: corev1.ObjectReference{Name: name, Kind: "Operator"},
			Version:  "0.1.0",
			Templates: map[string]string{
				"a.yaml": fmt.Sprintf(configMapTemplate, "a"), "b.yaml": fmt.Sprintf(configMapTemplate, "b"),
				"farewell.yaml": fmt.Sprintf(configMapTemplate, "farewell"),
			},
			Parameters: []kudov1beta1.Parameter{
				{Name: "GREETING", Default: ptr.To("hello")},
				{Name: "MOOD", Default: ptr.To("calm"), Trigger: "mood"},
			},
			Tasks: []kudov1beta1.Task{
				applyTask("a", "a.yaml"), applyTask("b", "b.yaml"), applyTask("farewell", "farewell.yaml"),
			},
			Plans: map[string]kudov1beta1.Plan{
				"deploy": plan(kudov1beta1.Serial, phase("main", kudov1beta1.Parallel, step("a", "a"), step("b", "b"))),
				"update": plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("b", "b"))),
				"mood":   plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("a", "a"))),
				// envtest runs no garbage collector, so a Delete task's foreground
				// deletion would never end here; the e2e suite runs Delete tasks.
				"cleanup": plan(kudov1beta1.Serial, phase("goodbye", kudov1beta1.Serial, step("farewell", "farewell"))),
			},
		},
	}
}

func newInstance(ns, name, ov string) *kudov1beta1.Instance {
	return &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov}},
	}
}

func getInstance(ctx context.Context, g Gomega, key types.NamespacedName) *kudov1beta1.Instance {
	i := &kudov1beta1.Instance{}
	g.Expect(k8sClient.Get(ctx, key, i)).To(Succeed())
	return i
}

var _ = Describe("InstanceReconciler", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("runs deploy on create and writes KUDO's status tree", func() {
		Expect(k8sClient.Create(ctx, configMapsOperator(ns, "cms"))).To(Succeed())
		i := newInstance(ns, "demo", "cms-0.1.0")
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key := client.ObjectKeyFromObject(i)

		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			deploy := got.Status.PlanStatus["deploy"]
			g.Expect(deploy.Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(deploy.UID).NotTo(BeEmpty())
			g.Expect(deploy.Phases).To(HaveLen(1))
			g.Expect(deploy.Phases[0].Steps).To(HaveLen(2))
			for _, s := range deploy.Phases[0].Steps {
				g.Expect(s.Status).To(Equal(kudov1beta1.ExecutionComplete))
			}
			g.Expect(got.Status.PlanStatus["update"].Status).To(Equal(kudov1beta1.ExecutionNeverRun))
			g.Expect(got.Status.PlanStatus["cleanup"].Phases[0].Steps[0].Status).To(Equal(kudov1beta1.ExecutionNeverRun))
			g.Expect(got.Status.ActivePlan).To(Equal(&kudov1beta1.ActivePlanStatus{Name: "deploy", Status: kudov1beta1.ExecutionComplete}))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.ReadyCondition)).To(BeTrue())
			g.Expect(got.Finalizers).To(ContainElement(kudov1beta1.InstanceCleanupFinalizer))
		}).Should(Succeed())

		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-a"}, cm)).To(Succeed())
		Expect(cm.Data).To(Equal(map[string]string{"greeting": "hello", "plan": "deploy"}))
		Expect(cm.Labels).To(HaveKeyWithValue("kudo.dev/instance", "demo"))
		Expect(cm.Labels).To(HaveKeyWithValue("heritage", "kudo"))
		Expect(cm.Annotations).To(HaveKeyWithValue("kudo.dev/plan", "deploy"))
		Expect(metav1.GetControllerOf(cm)).NotTo(BeNil())
		Expect(metav1.GetControllerOf(cm).Name).To(Equal("demo"))
	})

	It("runs the plan a parameter triggers, update when it names none", func() {
		_, key := deployDemo(ctx, ns)

		setParameters(ctx, key, map[string]string{"GREETING": "hi"})
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["update"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(got.Status.PlanStatus["mood"].Status).To(Equal(kudov1beta1.ExecutionNeverRun))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-b"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(map[string]string{"greeting": "hi", "plan": "update"}))
		}).Should(Succeed())

		setParameters(ctx, key, map[string]string{"GREETING": "hi", "MOOD": "bright"})
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["mood"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(got.Status.ActivePlan.Name).To(Equal("mood"))
		}).Should(Succeed())
	})

	It("refuses parameters that trigger different plans together, naming them", func() {
		_, key := deployDemo(ctx, ns)
		current := getInstance(ctx, Default, key)
		patch := client.MergeFrom(current.DeepCopy())
		current.Spec.Parameters = map[string]string{"GREETING": "hi", "MOOD": "dark"}
		err := k8sClient.Patch(ctx, current, patch)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("parameters that trigger different plans cannot change together " +
			"(GREETING triggers update; MOOD triggers mood): change them one plan at a time"))
	})

	It("runs the plan spec.planExecution asks for, then clears it", func() {
		_, key := deployDemo(ctx, ns)

		current := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, key, current)).To(Succeed())
		patch := client.MergeFrom(current.DeepCopy())
		current.Spec.PlanExecution = kudov1beta1.PlanExecution{PlanName: "mood", UID: "0b4e2a6c-1111-4c1d-9b2a-000000000001"}
		Expect(k8sClient.Patch(ctx, current, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, key)
			g.Expect(got.Status.PlanStatus["mood"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(got.Status.PlanStatus["mood"].UID).To(BeEquivalentTo("0b4e2a6c-1111-4c1d-9b2a-000000000001"))
			g.Expect(got.Spec.PlanExecution).To(Equal(kudov1beta1.PlanExecution{}))
		}).Should(Succeed())
	})

	It("never serves a version that settles a requested plan before the status records its end, as kubectl kudo's --wait reads it", func() {
		_, key := deployDemo(ctx, ns)
		watcher, err := client.NewWithWatch(testEnv.Config, client.Options{Scheme: scheme.Scheme})
		Expect(err).NotTo(HaveOccurred())
		from := getInstance(ctx, Default, key).ResourceVersion
		w, err := watcher.Watch(ctx, &kudov1beta1.InstanceList{}, client.InNamespace(ns),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: from}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Stop)

		setParameters(ctx, key, map[string]string{"GREETING": "hi"})
		var asked types.UID
		for {
			var e watch.Event
			Eventually(w.ResultChan()).Should(Receive(&e))
			i, ok := e.Object.(*kudov1beta1.Instance)
			Expect(ok).To(BeTrue(), "watch event %s: %v", e.Type, e.Object)
			if asked == "" {
				if pe := i.Spec.PlanExecution; pe.PlanName == "update" {
					asked = pe.UID
				}
				continue
			}
			if engine.Settled(i) {
				update := i.Status.PlanStatus["update"]
				Expect(update.UID).To(Equal(asked), "resourceVersion %s settles before the run asked for ends", i.ResourceVersion)
				Expect(update.Status).To(Equal(kudov1beta1.ExecutionComplete))
				return
			}
		}
	})

	It("runs the cleanup plan on delete, then deletes what the plans applied and removes its finalizer", func() {
		i, key := deployDemo(ctx, ns)

		Expect(k8sClient.Delete(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &kudov1beta1.Instance{}))).To(BeTrue())
			g.Expect(instanceEvents(ctx, g, key)).To(HaveKey("PlanFinished: Execution of plan cleanup finished with status COMPLETE"))
			// envtest runs no garbage collector: the manager deleted them.
			for _, name := range []string{"demo-a", "demo-b", "demo-farewell"} {
				g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{}))).To(BeTrue(), name)
			}
		}).Should(Succeed())
	})

	It("tries a cleanup step in ERROR again after its backoff while the Instance is being deleted, and lets it go once it is cancelled", func() {
		ov := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "failing-cleanup-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator: corev1.ObjectReference{Name: "failing-cleanup"},
				Tasks: []kudov1beta1.Task{
					{Name: "done", Kind: kudov1beta1.DummyTaskKind, Spec: kudov1beta1.TaskSpec{DummyTaskSpec: kudov1beta1.DummyTaskSpec{Done: true}}},
					{Name: "fail", Kind: kudov1beta1.DummyTaskKind, Spec: kudov1beta1.TaskSpec{DummyTaskSpec: kudov1beta1.DummyTaskSpec{WantErr: true}}},
				},
				Plans: map[string]kudov1beta1.Plan{
					"deploy":  plan("", phase("main", "", step("done", "done"))),
					"cleanup": plan("", phase("main", "", step("fail", "fail"))),
				},
			},
		}
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i := newInstance(ns, "demo", ov.Name)
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key := client.ObjectKeyFromObject(i)
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())

		Expect(k8sClient.Delete(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			cleanup := getInstance(ctx, g, key).Status.PlanStatus["cleanup"]
			g.Expect(cleanup.Phases).To(HaveLen(1))
			g.Expect(cleanup.Phases[0].Steps[0].Message).To(MatchRegexp(`\(attempt [2-9]; next try in [0-9]+s\)$`))
		}).Should(Succeed())

		got := getInstance(ctx, Default, key)
		patch := client.MergeFrom(got.DeepCopy())
		pe, err := engine.RequestCancel(got)
		Expect(err).NotTo(HaveOccurred())
		got.Spec.PlanExecution = pe
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &kudov1beta1.Instance{}))).To(BeTrue())
			g.Expect(instanceEvents(ctx, g, key)).To(HaveKey("PlanCancelled: Plan cleanup cancelled"))
		}).Should(Succeed())
	})

	DescribeTable("runs Dummy tasks as their spec says",
		func(spec kudov1beta1.DummyTaskSpec, want kudov1beta1.ExecutionStatus, message string, stalled bool) {
			// A step in ERROR counts its tries: the message's end changes.
			ov := &kudov1beta1.OperatorVersion{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dummy-0.1.0"},
				Spec: kudov1beta1.OperatorVersionSpec{
					Operator: corev1.ObjectReference{Name: "dummy"},
					Tasks:    []kudov1beta1.Task{{Name: "wait", Kind: kudov1beta1.DummyTaskKind, Spec: kudov1beta1.TaskSpec{DummyTaskSpec: spec}}},
					Plans:    map[string]kudov1beta1.Plan{"deploy": plan("", phase("main", "", step("wait", "wait")))},
				},
			}
			Expect(k8sClient.Create(ctx, ov)).To(Succeed())
			i := newInstance(ns, "demo", ov.Name)
			Expect(k8sClient.Create(ctx, i)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getInstance(ctx, g, client.ObjectKeyFromObject(i))
				g.Expect(got.Status.PlanStatus["deploy"].Phases).To(HaveLen(1))
				s := got.Status.PlanStatus["deploy"].Phases[0].Steps[0]
				g.Expect(s.Status).To(Equal(want))
				g.Expect(s.Message).To(MatchRegexp("^" + message + "$"))
				g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, kudov1beta1.StalledCondition)).To(Equal(stalled))
			}).Should(Succeed())
		},
		Entry("done: the step completes", kudov1beta1.DummyTaskSpec{Done: true}, kudov1beta1.ExecutionComplete, "", false),
		Entry("not done: the plan pauses", kudov1beta1.DummyTaskSpec{}, kudov1beta1.ExecutionInProgress,
			"dummy task waits: its spec has done: false", false),
		Entry("wantErr: a transient error, tried again with a growing backoff", kudov1beta1.DummyTaskSpec{WantErr: true},
			kudov1beta1.ExecutionError, `task wait: dummy task failed, as its spec asks \(wantErr\) \(attempt [2-9]; next try in [0-9]+s\)`, false),
		Entry("wantErr and fatal: the plan fails", kudov1beta1.DummyTaskSpec{WantErr: true, Fatal: true}, kudov1beta1.ExecutionFatalError,
			`task wait: dummy task failed fatally, as its spec asks \(wantErr, fatal\)`, true),
	)

	It("runs a child Instance through a KudoOperator task, which inherits its service account", func() {
		Expect(k8sClient.Create(ctx, configMapsOperator(ns, "child"))).To(Succeed())
		// The parent's writes, the child's included, are the service account's.
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "deployer"}},
		})).To(Succeed())
		parent := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parent-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator:   corev1.ObjectReference{Name: "parent"},
				Parameters: []kudov1beta1.Parameter{{Name: "CHILD_GREETING", Default: ptr.To("from parent")}},
				Templates:  map[string]string{"child-params.yaml": "GREETING: {{ .Params.CHILD_GREETING | quote }}\n"},
				Tasks: []kudov1beta1.Task{{Name: "child", Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{
					KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "child", OperatorVersion: "0.1.0", ParameterFile: "child-params.yaml"}}}},
				Plans: map[string]kudov1beta1.Plan{"deploy": plan("", phase("deps", "", step("child", "child")))},
			},
		}
		Expect(k8sClient.Create(ctx, parent)).To(Succeed())
		i := newInstance(ns, "app", parent.Name)
		i.Spec.ServiceAccountName = "deployer"
		Expect(k8sClient.Create(ctx, i)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			child := getInstance(ctx, g, client.ObjectKey{Namespace: ns, Name: "app-child"})
			g.Expect(child.Spec.ServiceAccountName).To(Equal("deployer"))
			g.Expect(child.Spec.OperatorVersion.Name).To(Equal("child-0.1.0"))
			g.Expect(child.Spec.Parameters).To(Equal(map[string]string{"GREETING": "from parent"}))
			g.Expect(metav1.GetControllerOf(child).Name).To(Equal("app"))
			g.Expect(child.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-child-a"}, cm)).To(Succeed())
			g.Expect(cm.Data["greeting"]).To(Equal("from parent"))
		}).Should(Succeed())
	})
})

var _ = Describe("KudoOperator dependencies", func() {
	It("fails a plan whose package depends on itself", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		loop := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "loop-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator: corev1.ObjectReference{Name: "loop"},
				Tasks: []kudov1beta1.Task{{Name: "self", Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{
					KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "loop"}}}},
				Plans: map[string]kudov1beta1.Plan{"deploy": plan("", phase("deps", "", step("self", "self")))},
			},
		}
		Expect(k8sClient.Create(ctx, loop)).To(Succeed())
		i := newInstance(ns, "loop", loop.Name)
		i.Labels = map[string]string{"kudo.dev/operator": "loop"}
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getInstance(ctx, g, client.ObjectKeyFromObject(i))
			g.Expect(got.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionFatalError))
			g.Expect(got.Status.PlanStatus["deploy"].Phases[0].Steps[0].Message).To(Equal("task self: circular dependency: loop → loop"))
		}).Should(Succeed())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "loop-loop"}, &kudov1beta1.Instance{}))).To(BeTrue())
	})
})

// deployDemo installs configMapsOperator as "cms" and an Instance "demo" of
// it, and waits for its deploy plan to complete.
func deployDemo(ctx context.Context, ns string) (*kudov1beta1.Instance, types.NamespacedName) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, configMapsOperator(ns, "cms"))).To(Succeed())
	i := newInstance(ns, "demo", "cms-0.1.0")
	Expect(k8sClient.Create(ctx, i)).To(Succeed())
	key := client.ObjectKeyFromObject(i)
	Eventually(func(g Gomega) {
		g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
	}).Should(Succeed())
	return i, key
}

func setParameters(ctx context.Context, key types.NamespacedName, values map[string]string) {
	GinkgoHelper()
	current := &kudov1beta1.Instance{}
	Expect(k8sClient.Get(ctx, key, current)).To(Succeed())
	patch := client.MergeFrom(current.DeepCopy())
	current.Spec.Parameters = values
	Expect(k8sClient.Patch(ctx, current, patch)).To(Succeed())
}

var _ = Describe("An Instance whose OperatorVersion is in another namespace", func() {
	var (
		ctx          context.Context
		apps, shared string
	)
	BeforeEach(func() {
		ctx = context.Background()
		apps, shared = newNamespace(ctx), newNamespace(ctx)
	})

	// gated is configMapsOperator whose deploy ends with a Dummy task that
	// waits until the OperatorVersion says it is done.
	gated := func(ns string) *kudov1beta1.OperatorVersion {
		ov := configMapsOperator(ns, "cms")
		ov.Spec.Tasks = append(ov.Spec.Tasks, kudov1beta1.Task{Name: "gate", Kind: kudov1beta1.DummyTaskKind})
		deploy := ov.Spec.Plans["deploy"]
		deploy.Phases = append(deploy.Phases, phase("gate", "", step("gate", "gate")))
		ov.Spec.Plans["deploy"] = deploy
		return ov
	}

	It("is admitted, deploys in its own namespace, and is woken by a change of its OperatorVersion", func() {
		Expect(k8sClient.Create(ctx, &kudov1beta1.Operator{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "cms"}})).To(Succeed())
		ov := gated(shared)
		Expect(k8sClient.Create(ctx, ov)).To(Succeed())
		i := newInstance(apps, "web", ov.Name)
		i.Spec.OperatorVersion.Namespace = shared
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		Expect(i.Spec.PlanExecution.PlanName).To(Equal("deploy"), "admission schedules deploy from the OperatorVersion it found")
		key := client.ObjectKeyFromObject(i)

		Eventually(func(g Gomega) {
			deploy := getInstance(ctx, g, key).Status.PlanStatus["deploy"]
			g.Expect(deploy.Status).To(Equal(kudov1beta1.ExecutionInProgress))
			g.Expect(deploy.Phases).To(HaveLen(2))
			g.Expect(deploy.Phases[1].Steps[0].Message).To(Equal("dummy task waits: its spec has done: false"))
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: apps, Name: "web-a"}, &corev1.ConfigMap{})).To(Succeed())
			op := &kudov1beta1.Operator{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: shared, Name: "cms"}, op)).To(Succeed())
			g.Expect(op.Status.Versions).To(Equal([]kudov1beta1.OperatorVersionSummary{{
				Name: "cms-0.1.0", Version: "0.1.0", InstancesElsewhere: 1,
			}}))
		}).Should(Succeed())

		// The code an Instance runs cannot change under it (issue 45)...
		patch := client.MergeFrom(ov.DeepCopy())
		ov.Spec.Tasks[len(ov.Spec.Tasks)-1].Spec.Done = true
		err := k8sClient.Patch(ctx, ov, patch)
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("spec: OperatorVersion %s/cms-0.1.0 is used by an Instance of another namespace, "+
			"and the code Instances run cannot change under them", shared))))
		// ...nor go, to come again with other code (issue 62), which would
		// run in apps at its next update.
		err = k8sClient.Delete(ctx, ov)
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("OperatorVersion %s/cms-0.1.0 is used by an Instance of another namespace, "+
			"and the code Instances run cannot be taken from under them: uninstall them, or upgrade them to another version, first", shared))))
	})

	It("runs its KudoOperator children with OperatorVersions from that namespace", func() {
		Expect(k8sClient.Create(ctx, configMapsOperator(shared, "child"))).To(Succeed())
		parent := &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: "parent-0.1.0"},
			Spec: kudov1beta1.OperatorVersionSpec{
				Operator: corev1.ObjectReference{Name: "parent"},
				Tasks: []kudov1beta1.Task{{Name: "child", Kind: kudov1beta1.KudoOperatorTaskKind, Spec: kudov1beta1.TaskSpec{
					KudoOperatorTaskSpec: kudov1beta1.KudoOperatorTaskSpec{Package: "child"}}}},
				Plans: map[string]kudov1beta1.Plan{"deploy": plan("", phase("deps", "", step("child", "child")))},
			},
		}
		Expect(k8sClient.Create(ctx, parent)).To(Succeed())
		i := newInstance(apps, "app", parent.Name)
		i.Spec.OperatorVersion.Namespace = shared
		Expect(k8sClient.Create(ctx, i)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, client.ObjectKeyFromObject(i)).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			child := getInstance(ctx, g, client.ObjectKey{Namespace: apps, Name: "app-child"})
			g.Expect(child.Spec.OperatorVersion).To(Equal(corev1.ObjectReference{Kind: "OperatorVersion", Name: "child-0.1.0", Namespace: shared}))
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: apps, Name: "app-child-a"}, &corev1.ConfigMap{})).To(Succeed())
		}).Should(Succeed())
	})
})
