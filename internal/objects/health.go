package objects

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
)

// storageClassReadTimeout bounds the first read of a StorageClass, which
// starts the cache's informer of them: a manager whose RBAC lacks them
// must not hang a reconcile.
const storageClassReadTimeout = 10 * time.Second

// Health judges an object that the task named task of the Instance named
// instance applied: with the package's health rules, or health.Check, with
// the verdict that needs another object than the one judged (a Pending
// claim whose StorageClass binds on first consumer is healthy,
// health.AwaitsFirstConsumer), and, for a workload that is not healthy, why
// its pods are not ready.
func (m *Manager) Health(ctx context.Context, instance, task string, obj *unstructured.Unstructured) health.Result {
	if gk := obj.GroupVersionKind().GroupKind(); m.kinds != nil {
		if judge := m.rules.JudgeOf(gk, task); judge != nil {
			m.kinds.JudgedBy(gk, judge)
		}
	}
	verdict := m.check(ctx, task, obj)
	if !verdict.Healthy {
		verdict.Message = m.explain(ctx, instance, obj, verdict.Message)
	}
	return verdict
}

func (m *Manager) check(ctx context.Context, task string, obj *unstructured.Unstructured) health.Result {
	verdict := m.rules.Check(ctx, obj, task)
	class, pending := health.PendingClaimClass(obj)
	if verdict.Healthy || !pending {
		return verdict
	}
	ctx, cancel := context.WithTimeout(ctx, storageClassReadTimeout)
	defer cancel()
	sc := &storagev1.StorageClass{}
	if err := m.client.Get(ctx, client.ObjectKey{Name: class}, sc); err != nil {
		verdict.Message += fmt.Sprintf(" (its StorageClass %s cannot be read: %v)", class, err)
		return verdict
	}
	if ptr.Deref(sc.VolumeBindingMode, storagev1.VolumeBindingImmediate) == storagev1.VolumeBindingWaitForFirstConsumer {
		return health.AwaitsFirstConsumer(obj, class)
	}
	return verdict
}

// explain adds to the message of an unhealthy object why its pods are not
// ready, from the cache. The pods carry the Instance's label: watching them
// wakes the Instance when one of them gets stuck, which its workload's
// status does not show.
func (m *Manager) explain(ctx context.Context, instance string, obj *unstructured.Unstructured, message string) string {
	if !hasPods(obj) {
		return message
	}
	if err := m.watch(ctx, corev1.SchemeGroupVersion.WithKind("Pod")); err != nil {
		return message
	}
	if problem := m.podProblem(ctx, instance, obj); problem != "" {
		return message + " (" + problem + ")"
	}
	return message
}

// hasPods: workloads whose pods can say why they are not ready.
func hasPods(obj *unstructured.Unstructured) bool {
	switch obj.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, schema.GroupKind{Group: "batch", Kind: "Job"}:
		return true
	}
	return false
}

// PodInstanceIndex indexes cached pods by the Instance their label names,
// so that explaining a workload does not scan every pod of its namespace.
const PodInstanceIndex = "podInstance"

// PodInstance is the value of PodInstanceIndex for a pod.
func PodInstance(pod client.Object) []string {
	if name := pod.GetLabels()[kudov1beta1.InstanceLabel]; name != "" {
		return []string{name}
	}
	return nil
}

// podProblem names why a workload's pods are not ready, from the cache.
func (m *Manager) podProblem(ctx context.Context, instance string, obj *unstructured.Unstructured) string {
	matchLabels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
	if len(matchLabels) == 0 {
		return ""
	}
	pods := &unstructured.UnstructuredList{}
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := m.client.List(ctx, pods, client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{PodInstanceIndex: instance}, client.MatchingLabels(matchLabels)); err != nil {
		return ""
	}
	for i := range pods.Items {
		if p := health.PodProblem(&pods.Items[i]); p != "" {
			return p
		}
	}
	return ""
}
