package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestWhomAnInstanceActsAs(t *testing.T) {
	named := &kudov1beta1.Instance{Spec: kudov1beta1.InstanceSpec{ServiceAccountName: "deployer"}}
	unnamed := &kudov1beta1.Instance{}
	for _, tc := range []struct {
		name        string
		multiTenant bool
		instance    *kudov1beta1.Instance
		want        string
	}{
		{"single tenant, no account: the manager", false, unnamed, ""},
		{"single tenant, an account: that account", false, named, "deployer"},
		{"multi-tenant, no account: the namespace's default one, never the manager", true, unnamed, "default"},
		{"multi-tenant, an account: that account", true, named, "deployer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &InstanceReconciler{MultiTenant: tc.multiTenant}
			if got := r.serviceAccountOf(tc.instance); got != tc.want {
				t.Errorf("acts as %q, want %q", got, tc.want)
			}
		})
	}
}

func TestADeletedInstancesCleanupIsBounded(t *testing.T) {
	deleted := &kudov1beta1.Instance{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: ptr.To(metav1.Now())}}
	live := &kudov1beta1.Instance{}
	for _, tc := range []struct {
		name          string
		plan, cleanup time.Duration
		instance      *kudov1beta1.Instance
		want          time.Duration
	}{
		{"a live Instance's plan: --plan-timeout", time.Hour, 15 * time.Minute, live, time.Hour},
		{"a deleted Instance's cleanup: --cleanup-timeout", time.Hour, 15 * time.Minute, deleted, 15 * time.Minute},
		{"no --cleanup-timeout: --plan-timeout's", time.Hour, 0, deleted, time.Hour},
		{"neither: unbounded", 0, 0, deleted, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &InstanceReconciler{PlanTimeout: tc.plan, CleanupTimeout: tc.cleanup}
			got := r.defaultTimeout(tc.instance)
			if (got == nil) != (tc.want == 0) || (got != nil && got.Duration != tc.want) {
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
}
