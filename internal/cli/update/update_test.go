package update

import (
	"context"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// TestUpdateChangesOnlyTheParametersItIsGiven: the values given are checked
// against the OperatorVersion before anything is written, and only they
// change; the plan they trigger is the manager's to run.
func TestUpdateChangesOnlyTheParametersItIsGiven(t *testing.T) {
	ov := &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0.1.0"},
		Spec: kudov1beta1.OperatorVersionSpec{Parameters: []kudov1beta1.Parameter{
			{Name: "COLOR", Default: ptr.To("red")}, {Name: "REPLICAS", Type: kudov1beta1.IntegerValueType, Default: ptr.To("1")},
			{Name: "PASSWORD", Default: ptr.To("changeme")},
		}},
	}
	web := &kudov1beta1.Instance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: kudov1beta1.InstanceSpec{OperatorVersion: corev1.ObjectReference{Name: ov.Name},
			Parameters: map[string]string{"COLOR": "green", "PASSWORD": "s3cret"}},
	}
	tests := []struct {
		name       string
		parameters []string
		want       map[string]string
		// wantErr is the error's text, "" for none; on an error nothing
		// changes.
		wantErr string
		wantOut string
	}{
		{"one value", []string{"COLOR=blue"}, map[string]string{"COLOR": "blue", "PASSWORD": "s3cret"}, "",
			"instance.kudo.dev/web updated\n"},
		{"two values", []string{"COLOR=blue", "REPLICAS=3"}, map[string]string{"COLOR": "blue", "REPLICAS": "3", "PASSWORD": "s3cret"}, "",
			"instance.kudo.dev/web updated\n"},
		{"no values", nil, nil, "nothing to update: give parameters with -p NAME=VALUE or -P FILE", ""},
		{"a parameter the OperatorVersion lacks", []string{"COLOUR=blue"}, nil, "COLOUR", ""},
		{"a value of the wrong type", []string{"REPLICAS=three"}, nil, "REPLICAS", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(clientutil.Scheme).WithObjects(ov.DeepCopy(), web.DeepCopy()).Build()
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			err := Run(context.Background(), action.NewConfig(c, "ns", streams), &Options{Update: action.Update{Instance: "web", ParameterOptions: action.ParameterOptions{Parameters: tt.parameters}}})
			got := &kudov1beta1.Instance{}
			if getErr := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, got); getErr != nil {
				t.Fatal(getErr)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Run = %v, want an error naming %q", err, tt.wantErr)
				}
				if !maps.Equal(got.Spec.Parameters, web.Spec.Parameters) {
					t.Errorf("parameters after a refused update = %v, want them unchanged", got.Spec.Parameters)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got.Spec.Parameters, tt.want) {
				t.Errorf("parameters = %v, want %v", got.Spec.Parameters, tt.want)
			}
			if out.String() != tt.wantOut {
				t.Errorf("printed %q, want %q", out.String(), tt.wantOut)
			}
		})
	}
}
