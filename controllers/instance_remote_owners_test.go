package controllers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// An object of a remote cluster wakes only an Instance of the namespace
// whose kubeconfig reaches that cluster: an annotation naming another
// namespace's Instance, which anyone who writes there can set, wakes none.
func TestRemoteOwnersWakeTheKubeconfigsNamespaceOnly(t *testing.T) {
	owners := remoteOwners("team-a")
	for _, tt := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        string
	}{
		{"an object an Instance applied", nil, map[string]string{kudov1beta1.OwnerAnnotation: "team-a/db"}, "team-a/db"},
		{"a workload's pod", map[string]string{kudov1beta1.InstanceLabel: "db"}, nil, "team-a/db"},
		{"an object naming another namespace's Instance", map[string]string{kudov1beta1.InstanceLabel: "db"},
			map[string]string{kudov1beta1.OwnerAnnotation: "team-b/db"}, ""},
		{"an owner annotation without a namespace", nil, map[string]string{kudov1beta1.OwnerAnnotation: "db"}, ""},
		{"nobody's", nil, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "settings", Labels: tt.labels,
				Annotations: tt.annotations}}
			reqs := owners(context.Background(), obj)
			switch {
			case tt.want == "" && len(reqs) != 0:
				t.Errorf("woke %v, want none", reqs)
			case tt.want != "" && (len(reqs) != 1 || reqs[0].String() != tt.want):
				t.Errorf("woke %v, want %s", reqs, tt.want)
			}
		})
	}
}
