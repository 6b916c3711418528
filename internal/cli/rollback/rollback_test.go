package rollback

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// The command prints the revision action.Rollback returned to; what it may
// return to is action's test.
func TestRollbackSaysWhereTo(t *testing.T) {
	complete := kudov1beta1.ExecutionComplete
	ov := func(name string) *kudov1beta1.OperatorVersion {
		return &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	i := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec:       kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: "web-0.2.0"}},
		Status: kudov1beta1.InstanceStatus{Revisions: []kudov1beta1.Revision{
			{Number: 1, Plan: "deploy", Status: complete, OperatorVersion: "web-0.1.0", Parameters: map[string]string{"COLOR": "red"}},
			{Number: 2, Plan: "upgrade", Status: complete, OperatorVersion: "web-0.2.0"},
		}},
	}
	c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(i, ov("web-0.1.0"), ov("web-0.2.0")).Build()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(context.Background(), action.NewConfig(c, "ns", streams), &Options{Rollback: action.Rollback{Instance: "web"}}); err != nil {
		t.Fatal(err)
	}
	if want := "Instance web rolled back to revision 1: OperatorVersion web-0.1.0, parameters COLOR=red\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}
