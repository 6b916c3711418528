package controllers

import (
	"testing"

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
