package action

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/engine"
	"github.com/kudo-ng/kudo/internal/params"
)

func operatorVersion(name string) *kudov1beta1.OperatorVersion {
	return &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: kudov1beta1.OperatorVersionSpec{Parameters: []kudov1beta1.Parameter{
			{Name: "COLOR"}, {Name: "ZONE", Immutable: ptr.To(true)},
		}},
	}
}

// web runs web-0.2.0 with COLOR=green; it ran web-0.1.0 with COLOR=red
// before, and web-0.0.9 in another zone before that.
func web() *kudov1beta1.Instance {
	complete := kudov1beta1.ExecutionComplete
	return &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: kudov1beta1.InstanceSpec{
			OperatorVersion: corev1.ObjectReference{Name: "web-0.2.0"},
			Parameters:      map[string]string{"COLOR": "green", "ZONE": "a"},
		},
		Status: kudov1beta1.InstanceStatus{Revisions: []kudov1beta1.Revision{
			{Number: 4, Plan: "deploy", Status: complete, OperatorVersion: "web-0.0.9", Parameters: map[string]string{"COLOR": "red", "ZONE": "b"}},
			{Number: 5, Plan: "deploy", Status: complete, OperatorVersion: "web-0.1.0", Parameters: map[string]string{"COLOR": "red", "ZONE": "a"}},
			{Number: 6, Plan: "deploy", Status: kudov1beta1.ExecutionFatalError, OperatorVersion: "web-0.1.5",
				Parameters: map[string]string{"COLOR": "blue", "ZONE": "a"}},
			{Number: 7, Plan: "upgrade", Status: complete, OperatorVersion: "web-0.2.0", Parameters: map[string]string{"COLOR": "green", "ZONE": "a"}},
		}},
	}
}

// rollback rolls the Instance back in a cluster of objs, and returns it as
// the cluster then has it, with the revision returned to (its number,
// OperatorVersion and parameters) and the error.
func rollback(t *testing.T, instance string, revision int64, objs ...client.Object) (*kudov1beta1.Instance, string, error) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(objs...).Build()
	cfg := Config{Client: c, Namespace: "ns", Out: io.Discard, ErrOut: io.Discard}
	_, target, err := (&Rollback{Instance: instance, Revision: revision}).Run(context.Background(), cfg)
	got := &kudov1beta1.Instance{}
	if getErr := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: instance}, got); getErr != nil {
		t.Fatal(getErr)
	}
	if target == nil {
		return got, "", err
	}
	return got, fmt.Sprintf("revision %d: OperatorVersion %s, parameters %s", target.Number, target.OperatorVersion,
		DescribeParameters(target)), err
}

func TestRollback(t *testing.T) {
	tests := []struct {
		name       string
		revision   int64
		wantErr    string
		wantOV     string
		wantTarget string
	}{
		{name: "to the newest completed revision with another spec", wantOV: "web-0.1.0",
			wantTarget: "revision 5: OperatorVersion web-0.1.0, parameters COLOR=red,ZONE=a"},
		{name: "to a revision whose OperatorVersion was removed", revision: 6,
			wantErr: "revision 6 ran OperatorVersion web-0.1.5, which cannot be read"},
		{name: "to a revision with another value of an immutable parameter", revision: 4,
			wantErr: `parameter ZONE is immutable: revision 4 ran with "b", the Instance has "a", and rollback cannot change it`},
		{name: "to a revision no longer kept", revision: 2, wantErr: "no revision 2 of Instance web: it keeps revisions 4 to 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, target, err := rollback(t, "web", tt.revision,
				web(), operatorVersion("web-0.0.9"), operatorVersion("web-0.1.0"), operatorVersion("web-0.2.0"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got.Spec.OperatorVersion.Name != "web-0.2.0" || got.Spec.Parameters["COLOR"] != "green" {
					t.Errorf("a refused rollback changed the spec: %+v", got.Spec)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Spec.OperatorVersion.Name != tt.wantOV || got.Spec.Parameters["COLOR"] != "red" {
				t.Errorf("spec = %+v, want %s with COLOR=red", got.Spec, tt.wantOV)
			}
			if target != tt.wantTarget {
				t.Errorf("rolled back to %q, want %q", target, tt.wantTarget)
			}
		})
	}
}

// keys are the manager's, which the CLI does not have: the tests make with
// them what the status records.
var keys = params.MaskKeys{Current: []byte("the manager's key, 32 bytes long")}

// db ran db-0.1.0 with its password from Secret old-password, then db-0.2.0
// with the one from Secret new-password and a new PIN; its status records
// its spec (appliedGeneration).
func db() (*kudov1beta1.Instance, []client.Object) {
	complete := kudov1beta1.ExecutionComplete
	versions := []client.Object{}
	for _, name := range []string{"db-0.1.0", "db-0.2.0"} {
		versions = append(versions, &kudov1beta1.OperatorVersion{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: kudov1beta1.OperatorVersionSpec{Parameters: []kudov1beta1.Parameter{
				{Name: "PASSWORD"}, {Name: "PIN", Sensitive: ptr.To(true)},
			}},
		})
	}
	applied := map[string]string{"PIN": keys.Mask("PIN", "4711-new"), "PASSWORD": keys.Mask("PASSWORD", "new")}
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "uid-db", Generation: 5},
		Spec: kudov1beta1.InstanceSpec{
			OperatorVersion:  corev1.ObjectReference{Name: "db-0.2.0"},
			Parameters:       map[string]string{"PIN": "4711-new"},
			SecretParameters: map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "new-password", Key: "password"}},
		},
		Status: kudov1beta1.InstanceStatus{
			AppliedOperatorVersion: "db-0.2.0", AppliedParameters: applied, AppliedGeneration: 5,
			Revisions: []kudov1beta1.Revision{
				{Number: 1, Plan: "deploy", Status: complete, OperatorVersion: "db-0.1.0",
					Parameters:       map[string]string{"PIN": keys.Mask("PIN", "4711-new"), "PASSWORD": keys.Mask("PASSWORD", "old")},
					SecretParameters: map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "old-password", Key: "password"}}},
				{Number: 2, Plan: "deploy", Status: complete, OperatorVersion: "db-0.1.0",
					Parameters:       map[string]string{"PIN": keys.Mask("PIN", "1234-old"), "PASSWORD": keys.Mask("PASSWORD", "old")},
					SecretParameters: map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "old-password", Key: "password"}}},
				{Number: 3, Plan: "upgrade", Status: complete, OperatorVersion: "db-0.2.0", Parameters: applied,
					SecretParameters: map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "new-password", Key: "password"}}},
			},
		},
	}
	return i, append(versions, i)
}

func TestRollbackOfSensitiveParameters(t *testing.T) {
	tests := []struct {
		name       string
		revision   int64
		wantErr    string
		wantTarget string
	}{
		{name: "names the Secret keys again, and keeps a sensitive value the revision ran with", revision: 1,
			wantTarget: "revision 1: OperatorVersion db-0.1.0, " +
				"parameters PASSWORD=@secret:old-password/password,PIN=" + keys.Mask("PIN", "4711-new")},
		{name: "refuses a sensitive value it does not keep", revision: 2,
			wantErr: "parameter PIN is sensitive: revision 2 ran with another value than the Instance has, which kudo-ng does not keep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, objs := db()
			got, target, err := rollback(t, "db", tt.revision, objs...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got.Spec.OperatorVersion.Name != "db-0.2.0" {
					t.Errorf("a refused rollback changed the spec: %+v", got.Spec)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := kudov1beta1.InstanceSpec{
				OperatorVersion:  corev1.ObjectReference{Name: "db-0.1.0"},
				Parameters:       map[string]string{"PIN": "4711-new"},
				SecretParameters: map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "old-password", Key: "password"}},
			}
			if !reflect.DeepEqual(got.Spec, want) {
				t.Errorf("spec = %+v, want %+v", got.Spec, want)
			}
			if target != tt.wantTarget {
				t.Errorf("rolled back to %q, want %q", target, tt.wantTarget)
			}
		})
	}

	t.Run("refuses, without a revision number, what the status does not tell yet", func(t *testing.T) {
		i, objs := db()
		// The spec changed since its values were recorded.
		i.Generation++
		if _, _, err := rollback(t, "db", 0, objs...); err == nil ||
			!strings.Contains(err.Error(), "parameter PIN is sensitive, and the Instance's status does not tell yet") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("takes a revision whose values equal the Instance's, masked, for the same spec", func(t *testing.T) {
		i, _ := db()
		sensitive := params.Sensitive([]kudov1beta1.Parameter{{Name: "PIN", Sensitive: ptr.To(true)}}, i.Spec.SecretParameters)
		r, err := engine.RollbackTarget(i, 0, sensitive)
		if err != nil || r.Number != 2 {
			t.Errorf("RollbackTarget = %+v, %v; want revision 2, the newest with another spec than revision 3's", r, err)
		}
	})
}

// The CLI cannot make a mask: a masked value is the Instance's own when the
// status recorded the Instance's spec and the same mask for it.
func TestRestoredValues(t *testing.T) {
	sensitive := map[string]bool{"PIN": true}
	byUID := params.MaskKeys{Current: []byte("uid-db")}
	tests := []struct {
		name string
		// change makes the Instance and the target revision of the case
		// from db() and its revision 1.
		change  func(i *kudov1beta1.Instance, target *kudov1beta1.Revision)
		want    map[string]string
		wantErr string
	}{
		{name: "the value the revision ran with, which the status recorded for the spec as it is, comes from the spec",
			change: func(*kudov1beta1.Instance, *kudov1beta1.Revision) {},
			want:   map[string]string{"PIN": "4711-new"}},
		{name: "masks the uid keyed, recorded before the manager had a key, compare as well",
			change: func(i *kudov1beta1.Instance, target *kudov1beta1.Revision) {
				i.Status.AppliedParameters["PIN"] = byUID.Mask("PIN", "4711-new")
				target.Parameters["PIN"] = byUID.Mask("PIN", "4711-new")
			},
			want: map[string]string{"PIN": "4711-new"}},
		{name: "values that are not sensitive are the revision's, and those of its Secret keys are left out",
			change: func(_ *kudov1beta1.Instance, target *kudov1beta1.Revision) {
				target.Parameters["COLOR"] = "red"
			},
			want: map[string]string{"PIN": "4711-new", "COLOR": "red"}},
		{name: "another value than the Instance's is refused",
			change: func(_ *kudov1beta1.Instance, target *kudov1beta1.Revision) {
				target.Parameters["PIN"] = keys.Mask("PIN", "1234-old")
			},
			wantErr: "parameter PIN is sensitive: revision 1 ran with another value than the Instance has, which kudo-ng does not keep"},
		{name: "a value the spec does not set is refused",
			change: func(i *kudov1beta1.Instance, _ *kudov1beta1.Revision) {
				delete(i.Spec.Parameters, "PIN")
			},
			wantErr: "parameter PIN is sensitive: revision 1 ran with another value"},
		{name: "a value the Instance takes from a Secret now is not the spec's",
			change: func(i *kudov1beta1.Instance, _ *kudov1beta1.Revision) {
				i.Spec.SecretParameters["PIN"] = kudov1beta1.SecretKeyReference{Name: "pin", Key: "pin"}
			},
			wantErr: "parameter PIN is sensitive: revision 1 ran with another value"},
		{name: "while the last plan started from an earlier spec, the status does not tell",
			change: func(i *kudov1beta1.Instance, _ *kudov1beta1.Revision) {
				i.Generation++
			},
			wantErr: "parameter PIN is sensitive, and the Instance's status does not tell yet whether revision 1 ran with the value it has"},
		{name: "nor does the status of an Instance the manager has not recorded a generation of",
			change: func(i *kudov1beta1.Instance, _ *kudov1beta1.Revision) {
				i.Status.AppliedGeneration = 0
			},
			wantErr: "the Instance's status does not tell yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, _ := db()
			target := i.Status.Revisions[0].DeepCopy()
			tt.change(i, target)
			got, err := engine.RestoredValues(i, target, sensitive)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("restoredValues = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
