package webhook

import (
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func kubeConfig(name, key string) func(*kudov1beta1.Instance) {
	return func(i *kudov1beta1.Instance) {
		i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: name, Key: key}}
	}
}

func TestKubeConfigOnCreate(t *testing.T) {
	for _, tt := range []struct {
		name    string
		change  func(*kudov1beta1.Instance)
		wantErr string
	}{
		{name: "accepts a Secret, its key left to the default", change: kubeConfig("prod-kubeconfig", "")},
		{name: "accepts a Secret and its key", change: kubeConfig("prod", "kubeconfig.yaml")},
		{name: "refuses a name no Secret can have", change: kubeConfig("Prod_Cluster", ""),
			wantErr: `spec.kubeConfig.secretRef.name: "Prod_Cluster" is not a Secret's name`},
		{name: "refuses a key no Secret can have", change: kubeConfig("prod", "../value"),
			wantErr: `spec.kubeConfig.secretRef.key: "../value" is not a Secret's key`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, ValidateCreate(instance(tt.change), operatorVersion()), tt.wantErr)
		})
	}
}

// The objects of an Instance with a kubeconfig live in its cluster: another
// kubeconfig, or none, would leave them there unmanaged.
func TestKubeConfigCannotChange(t *testing.T) {
	const refusal = "spec.kubeConfig cannot change: the Instance's objects live in its cluster; uninstall it and install it again"
	for _, tt := range []struct {
		name     string
		old, new func(*kudov1beta1.Instance)
		wantErr  string
	}{
		{"kept", kubeConfig("prod", ""), kubeConfig("prod", ""), ""},
		{"added", func(*kudov1beta1.Instance) {}, kubeConfig("prod", ""), refusal},
		{"dropped", kubeConfig("prod", ""), func(*kudov1beta1.Instance) {}, refusal},
		{"another Secret", kubeConfig("prod", ""), kubeConfig("staging", ""), refusal},
		{"another key", kubeConfig("prod", ""), kubeConfig("prod", "value.yaml"), refusal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, ValidateUpdate(instance(tt.old), instance(tt.new), operatorVersion()), tt.wantErr)
		})
	}
}
