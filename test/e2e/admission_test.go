package e2e

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

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
})
