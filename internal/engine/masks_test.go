package engine

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// uidMask is the mask kudo-ng recorded before the manager had a key of its
// own: the HMAC of the value keyed with the Instance's uid, uid-1.
func uidMask(value string) string {
	mac := hmac.New(sha256.New, []byte("uid-1"))
	mac.Write([]byte(value))
	return "<sensitive sha256:" + hex.EncodeToString(mac.Sum(nil))[:16] + ">"
}

// Masks recorded before the manager had a key of its own were keyed with the
// Instance's uid. Read as changed values, they would start the plan of every
// sensitive parameter of every Instance the new manager reconciles.
func TestAnInstanceRecordedWithUIDKeyedMasksStartsNoPlanOnceRekeyed(t *testing.T) {
	o := ov()
	o.Spec.Parameters = append(o.Spec.Parameters, kudov1beta1.Parameter{Name: "PASSWORD", Sensitive: ptr.To(true)})
	keys := params.MaskKeys{Current: []byte("the manager's key, 32 bytes long")}.ForInstance("uid-1")
	i := instance("deploy", complete, "u1")
	i.Spec.Parameters["PASSWORD"] = "hunter2-long"
	i.Status.AppliedParameters["PASSWORD"] = uidMask("hunter2-long")
	i.Status.Revisions = []kudov1beta1.Revision{
		{Number: 1, Plan: "deploy", OperatorVersion: o.Name, Parameters: map[string]string{"SIZE": "1", "PASSWORD": uidMask("older")}},
		{Number: 2, Plan: "update", OperatorVersion: o.Name, Parameters: maps.Clone(i.Status.AppliedParameters)},
	}
	values := i.Spec.Parameters
	recorded := params.Masked(values, params.Sensitive(o.Spec.Parameters, nil), keys)
	newUID := func() types.UID { return "fresh" }

	if next, _, _ := NextPlan(i.DeepCopy(), o, recorded, newUID); next != "update" {
		t.Fatalf("NextPlan before the masks are made again = %q: the test shows nothing", next)
	}
	if !RekeyMasks(&i.Status, values, keys) {
		t.Error("RekeyMasks reports no mask made again")
	}
	if next, _, err := NextPlan(i, o, recorded, newUID); next != "" || err != nil {
		t.Errorf("NextPlan = %q, %v; want no plan: nothing changed", next, err)
	}
	if !reflect.DeepEqual(i.Status.AppliedParameters, recorded) || !reflect.DeepEqual(i.Status.Revisions[1].Parameters, recorded) {
		t.Errorf("appliedParameters %v and the last revision's %v, want %v", i.Status.AppliedParameters, i.Status.Revisions[1].Parameters, recorded)
	}
	if got := i.Status.Revisions[0].Parameters["PASSWORD"]; got != uidMask("older") {
		t.Errorf("the mask of a value the Instance no longer has is %q, want it as it was", got)
	}
	if RekeyMasks(&i.Status, values, keys) {
		t.Error("RekeyMasks made masks again a second time")
	}
}

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

func TestRekeyMasksMakesTheMasksOfRevisionsDifferencesAgain(t *testing.T) {
	keys := params.MaskKeys{Current: []byte("the manager's key, 32 bytes long")}.ForInstance("uid-1")
	values := map[string]string{"PASSWORD": "hunter2-long"}
	status := &kudov1beta1.InstanceStatus{
		AppliedParameters: map[string]string{"PASSWORD": uidMask("hunter2-long")},
		Revisions: []kudov1beta1.Revision{
			{Number: 1, ChangedParameters: map[string]string{"PASSWORD": uidMask("older")}},
			{Number: 2, ChangedParameters: map[string]string{"PASSWORD": uidMask("hunter2-long")}},
			{Number: 3},
		},
	}
	if !RekeyMasks(status, values, keys) {
		t.Fatal("RekeyMasks reports no mask made again")
	}
	want := keys.Mask("PASSWORD", "hunter2-long")
	revisions := Revisions(status)
	if status.AppliedParameters["PASSWORD"] != want || revisions[1].Parameters["PASSWORD"] != want || revisions[2].Parameters["PASSWORD"] != want {
		t.Errorf("applied %v, revisions %+v: want every mask of the value the Instance has made with the current key", status.AppliedParameters, revisions)
	}
	if revisions[0].Parameters["PASSWORD"] != uidMask("older") {
		t.Errorf("the mask of a value the Instance no longer has is %q, want it as it was", revisions[0].Parameters["PASSWORD"])
	}
}
