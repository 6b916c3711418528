package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

var _ = Describe("Admission on the local control plane", func() {
	It("refuses a change of an immutable parameter, as kubectl edit makes it", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "admission"), "adm", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		out, err := cluster.Kubectl("-n", ns, "patch", "instance", "adm", "--type", "merge", "-p", `{"spec":{"parameters":{"SIZE":"large"}}}`)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring(`parameter SIZE is immutable: it cannot change from "small" to "large"; to change it, install a new Instance`))
	})

	It("runs one plan and refuses the second of two quick changes that trigger different plans", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		i := install(ctx, ns, filepath.Join("testdata", "admission"), "adm", nil)
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		_, err := cluster.Kubectl("-n", ns, "patch", "instance", "adm", "--type", "merge", "-p", `{"spec":{"parameters":{"BACKUP_NAME":"monday"}}}`)
		Expect(err).NotTo(HaveOccurred())
		out, err := cluster.Kubectl("-n", ns, "patch", "instance", "adm", "--type", "merge", "-p", `{"spec":{"parameters":{"RESTORE_FROM":"sunday"}}}`)
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("plan backup is running, and changing RESTORE_FROM would start plan restore"))
		got := planStatus(ctx, i, "backup", kudov1beta1.ExecutionInProgress)
		Expect(got.Status.PlanStatus["restore"].Status).To(Equal(kudov1beta1.ExecutionNeverRun))
		Expect(got.Spec.Parameters).NotTo(HaveKey("RESTORE_FROM"))

		// Cancelled, the backup plan makes way for the restore.
		_, err = cluster.Kubectl("-n", ns, "patch", "instance", "adm", "--type", "merge", "-p", `{"spec":{"planExecution":{"status":"CANCELLED"}}}`)
		Expect(err).NotTo(HaveOccurred())
		planStatus(ctx, i, "backup", kudov1beta1.ExecutionCancelled)
		_, err = cluster.Kubectl("-n", ns, "patch", "instance", "adm", "--type", "merge", "-p", `{"spec":{"parameters":{"RESTORE_FROM":"sunday"}}}`)
		Expect(err).NotTo(HaveOccurred())
		planStatus(ctx, i, "restore", kudov1beta1.ExecutionComplete)
	})

	It("upgrades to a package whose trigger names no plan with a warning, as KUDO's upgrade-with-dependencies suite", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		dir := filepath.Join("testdata", "upgrade-with-dependencies")
		mustKudo(ns, "install", "--instance", "operator-instance", filepath.Join(dir, "operator-1.0"))
		i := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "operator-instance"}}
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		dependency := client.ObjectKey{Namespace: ns, Name: "dependency-1.0"}
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, dependency, &kudov1beta1.OperatorVersion{}))).To(BeTrue())

		out := mustKudo(ns, "upgrade", "--instance", "operator-instance", filepath.Join(dir, "operator-2.0"))
		Expect(strings.Count(out, `trigger "deploy" names no plan`)).To(Equal(1), out)
		Expect(out).To(ContainSubstring(`Warning: package operator: params.yaml: parameters[0] deploy: trigger "deploy" names no plan of operator.yaml`))
		got := planStatus(ctx, i, "upgrade", kudov1beta1.ExecutionComplete)
		Expect(got.Spec.OperatorVersion.Name).To(Equal("operator-2.0"))
		Expect(k8sClient.Get(ctx, dependency, &kudov1beta1.OperatorVersion{})).To(Succeed())

		// Applied as it is, the OperatorVersion gets the warning from admission.
		ov := &kudov1beta1.OperatorVersion{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "operator-2.0"}, ov)).To(Succeed())
		copied := &kudov1beta1.OperatorVersion{
			TypeMeta:   metav1.TypeMeta{APIVersion: kudov1beta1.GroupVersion.String(), Kind: "OperatorVersion"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "operator-2.0-copy"}, Spec: ov.Spec,
		}
		data, err := yaml.Marshal(copied)
		Expect(err).NotTo(HaveOccurred())
		file := filepath.Join(GinkgoT().TempDir(), "ov.yaml")
		Expect(os.WriteFile(file, data, 0o600)).To(Succeed())
		out, err = cluster.Kubectl("create", "-f", file)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring(`Warning: OperatorVersion: spec.parameters[0] deploy: trigger "deploy" names no plan of operator.yaml`))
	})
})

// Serial: it stops the suite's manager, and with it the webhooks.
var _ = Describe("An Instance while the manager is down", Serial, func() {
	It("can still be labelled, have its plan run ended and, deleted, be let go: its finalizer is removed without the webhooks", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		waits := kudov1beta1.Task{Name: "waits", Kind: kudov1beta1.DummyTaskKind}
		done := kudov1beta1.Task{Name: "done", Kind: kudov1beta1.DummyTaskKind, Spec: kudov1beta1.TaskSpec{
			DummyTaskSpec: kudov1beta1.DummyTaskSpec{Done: true}}}
		stepOf := func(task string) kudov1beta1.Plan {
			return kudov1beta1.Plan{Phases: []kudov1beta1.Phase{{Name: "main", Steps: []kudov1beta1.Step{{Name: task, Tasks: []string{task}}}}}}
		}
		// instanceOf makes the Instance name, of an OperatorVersion of its
		// own with these plans.
		instanceOf := func(name string, plans map[string]kudov1beta1.Plan) *kudov1beta1.Instance {
			ov := &kudov1beta1.OperatorVersion{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-0.1.0"},
				Spec: kudov1beta1.OperatorVersionSpec{
					Operator: corev1.ObjectReference{Name: name}, Version: "0.1.0", Tasks: []kudov1beta1.Task{waits, done}, Plans: plans,
				},
			}
			Expect(k8sClient.Create(ctx, ov)).To(Succeed())
			i := &kudov1beta1.Instance{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name}},
			}
			Expect(k8sClient.Create(ctx, i)).To(Succeed())
			return i
		}
		i := instanceOf("stuck", map[string]kudov1beta1.Plan{"deploy": stepOf("done"), "cleanup": stepOf("waits")})
		busy := instanceOf("busy", map[string]kudov1beta1.Plan{"deploy": stepOf("waits"), "other": stepOf("done")})
		planStatus(ctx, i, "deploy", kudov1beta1.ExecutionComplete)
		Expect(k8sClient.Delete(ctx, i)).To(Succeed())
		planStatus(ctx, i, "cleanup", kudov1beta1.ExecutionInProgress)
		planStatus(ctx, busy, "deploy", kudov1beta1.ExecutionInProgress)

		stopManager()
		DeferCleanup(startManager)

		// Nor is a running Instance's update that leaves its spec as it is,
		// or only ends its plan run, as the manager does.
		_, err := cluster.Kubectl("-n", ns, "label", "instance", "busy", "team=a")
		Expect(err).NotTo(HaveOccurred(), "a label is no webhook's to refuse")
		out, err := cluster.Kubectl("-n", ns, "patch", "instance", "busy", "--type", "merge", "-p",
			`{"spec":{"planExecution":{"planName":"other","uid":"by-hand"}}}`)
		Expect(out).To(ContainSubstring("failed calling webhook"), "a plan asked for still goes to the webhooks")
		Expect(err).To(HaveOccurred())
		_, err = cluster.Kubectl("-n", ns, "patch", "instance", "busy", "--type", "merge", "-p", `{"spec":{"planExecution":null}}`)
		Expect(err).NotTo(HaveOccurred(), "the end of a plan run is no webhook's to refuse")

		got := &kudov1beta1.Instance{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got)).To(Succeed())
		patch := client.MergeFrom(got.DeepCopy())
		got.Spec.ServiceAccountName = "someone"
		Expect(k8sClient.Patch(ctx, got, patch)).To(MatchError(ContainSubstring("failed calling webhook")),
			"a change of its spec still goes to the webhooks")
		got.Spec.ServiceAccountName = ""
		got.Finalizers = nil
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(i), got))).To(BeTrue())
	})
})
