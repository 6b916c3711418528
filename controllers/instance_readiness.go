package controllers

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/health"
	"github.com/kudo-ng/kudo/internal/render"
)

// readinessKinds are the workloads by which KUDO judged an Instance ready
// once its plan had completed.
var readinessKinds = []schema.GroupVersionKind{
	appsv1.SchemeGroupVersion.WithKind("Deployment"), appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
	appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), appsv1.SchemeGroupVersion.WithKind("DaemonSet"),
	corev1.SchemeGroupVersion.WithKind("Pod"),
}

// unreadyWorkloads says, from the cache, which workloads labelled with the
// Instance are not ready, when its last plan completed: an edit that breaks
// a Deployment makes the Instance not Ready, as in KUDO. Only kinds the
// manager watches are read: a kind no plan applied (nor the pods of the
// workloads it did) has no object of the Instance, and reading it would
// start an informer for every object of that kind in the cluster.
func (r *InstanceReconciler) unreadyWorkloads(ctx context.Context, i *kudov1beta1.Instance) ([]string, error) {
	if a := i.Status.ActivePlan; a == nil || a.Status != kudov1beta1.ExecutionComplete {
		return nil, nil
	}
	var unready []string
	for _, gvk := range readinessKinds {
		if !r.isWatched(gvk) {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.List(ctx, list, client.InNamespace(i.Namespace),
			client.MatchingLabels{render.InstanceLabel: i.Name, render.HeritageLabel: "kudo"}); err != nil {
			return nil, err
		}
		for j := range list.Items {
			if verdict := health.Check(&list.Items[j]); !verdict.Healthy {
				unready = append(unready, verdict.Message)
			}
		}
	}
	return unready, nil
}

func (r *InstanceReconciler) isWatched(gvk schema.GroupVersionKind) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watched[gvk]
}
