package engine

import (
	"reflect"
	"testing"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

func TestRecordedSpec(t *testing.T) {
	sensitive := map[string]bool{"PASSWORD": true}
	tests := []struct {
		name      string
		change    func(i *kudov1beta1.Instance)
		want      map[string]string
		wantKnown bool
	}{
		{"the masks of the spec's values are appliedParameters' while they hold its values",
			func(*kudov1beta1.Instance) {}, map[string]string{"SIZE": "3", "PASSWORD": "<sensitive sha256:0011223344556677>"}, true},
		{"not while the last plan started from an earlier spec",
			func(i *kudov1beta1.Instance) { i.Generation = 8 }, nil, false},
		{"values that are not sensitive need no status",
			func(i *kudov1beta1.Instance) { i.Generation = 8; delete(i.Spec.Parameters, "PASSWORD") }, map[string]string{"SIZE": "3"}, true},
		{"a value a Secret key gives is the Secret's, not the spec's",
			func(i *kudov1beta1.Instance) {
				i.Spec.SecretParameters = map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "db", Key: "password"}}
			}, map[string]string{"SIZE": "3"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := instance("deploy", complete, "u1")
			i.Generation, i.Status.AppliedGeneration = 7, 7
			i.Spec.Parameters = map[string]string{"SIZE": "3", "PASSWORD": "hunter2-long"}
			i.Status.AppliedParameters = map[string]string{"SIZE": "3", "PASSWORD": "<sensitive sha256:0011223344556677>"}
			tt.change(i)
			got, known := RecordedSpec(i, sensitive)
			if known != tt.wantKnown || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("RecordedSpec = %v, %t; want %v, %t", got, known, tt.want, tt.wantKnown)
			}
		})
	}
}
