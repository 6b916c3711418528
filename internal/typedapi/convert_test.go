package typedapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/typedapi"
)

// withSpec is typedObject with the spec.
func withSpec(spec map[string]any) *unstructured.Unstructured {
	obj := typedObject(nil)
	obj.Object["spec"] = spec
	return obj
}

func TestTheInstanceOfATypedObject(t *testing.T) {
	zk := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: "1.0.0",
		Parameters: []kudov1beta1.Parameter{{Name: "NODE_COUNT", Type: "integer"}, {Name: "ZONE", Default: ptr.To("a"), Immutable: ptr.To(true)}}}}
	zk.Name, zk.Spec.Operator.Name = "zk-1", "zk"
	kafka := kudov1beta1.OperatorVersion{}
	kafka.Name, kafka.Spec.Operator.Name = "kafka-9", "kafka"
	tests := []struct {
		name     string
		obj      *unstructured.Unstructured
		versions []kudov1beta1.OperatorVersion
		// want is the Instance's spec as JSON, or the error.
		want     string
		wantNone bool
	}{
		{"its fields as parameters, an immutable one's default written", withSpec(map[string]any{"NODE_COUNT": int64(3)}),
			[]kudov1beta1.OperatorVersion{zk},
			`{"operatorVersion":{"name":"zk-1"},"parameters":{"NODE_COUNT":"3","ZONE":"a"},"planExecution":{}}`, false},
		{"no OperatorVersion installed", typedObject(nil), nil,
			"no OperatorVersion of Operator zk in the namespace: install the package first (kubectl kudo install zk --skip-instance)", true},
		{"another Operator's OperatorVersion named", withSpec(map[string]any{"operatorVersion": "kafka-9"}),
			[]kudov1beta1.OperatorVersion{zk, kafka}, "OperatorVersion kafka-9 is of Operator kafka, not zk", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, _, err := typedapi.InstanceOf(context.Background(), tt.obj, "", "zk", tt.versions)
			var none *typedapi.NoOperatorVersionError
			if got := errors.As(err, &none); got != tt.wantNone {
				t.Errorf("InstanceOf = %v: a missing OperatorVersion %v, want %v", err, got, tt.wantNone)
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), tt.want) {
					t.Errorf("InstanceOf = %v, want %s…", err, tt.want)
				}
				return
			}
			if s := asJSON(t, i.Spec); s != tt.want {
				t.Errorf("the Instance's spec is %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestTheInstanceOfATypedObjectIsControlledByItAndNotesItsGeneration(t *testing.T) {
	ov := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: "1.0.0"}}
	ov.Name, ov.Spec.Operator.Name = "zk-1", "zk"
	obj := withSpec(map[string]any{})
	obj.SetLabels(map[string]string{kudov1beta1.ShardLabel: "2", "team": "x"})

	i, _, err := typedapi.InstanceOf(context.Background(), obj, "", "zk", []kudov1beta1.OperatorVersion{ov})
	if err != nil {
		t.Fatal(err)
	}
	if i.Namespace != "ns" || i.Name != "zk" {
		t.Errorf("the Instance is %s/%s, want ns/zk: the object's name", i.Namespace, i.Name)
	}
	if !metav1.IsControlledBy(i, obj) || typedapi.HolderOf(i) == nil {
		t.Errorf("the Instance's owners %v: the object must control it and hold its record", i.OwnerReferences)
	}
	if got := i.Annotations[kudov1beta1.TypedGenerationAnnotation]; got != "3" {
		t.Errorf("the Instance notes generation %q, want 3", got)
	}
	if want := map[string]string{kudov1beta1.ShardLabel: "2"}; len(i.Labels) != 1 || i.Labels[kudov1beta1.ShardLabel] != "2" {
		t.Errorf("the Instance's labels %v, want %v: the shard only", i.Labels, want)
	}
}

// hello is the Operator of the upgrade tests' OperatorVersions.
const hello = "hello"

// TestAnUpgradeThatWouldLoseAValueIsRefused: moving a typed object to an
// OperatorVersion that has no parameter for a field it sets (a parameter
// renamed or removed) is refused, naming the field; setting the new field
// and unsetting the old one in the same change upgrades, and so does a
// field both versions have. An object that stays where it runs is not
// judged by a newer version.
func TestAnUpgradeThatWouldLoseAValueIsRefused(t *testing.T) {
	v1 := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: "0.1.0",
		Parameters: []kudov1beta1.Parameter{{Name: "replicas", Type: "integer"}, {Name: "image"}}}}
	v1.Name, v1.Spec.Operator.Name = "hello-0.1.0", hello
	v2 := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: "0.2.0",
		Parameters: []kudov1beta1.Parameter{{Name: "count", Type: "integer", Default: ptr.To("2")}, {Name: "image"}}}}
	v2.Name, v2.Spec.Operator.Name = "hello-0.2.0", hello
	versions := []kudov1beta1.OperatorVersion{v1, v2}
	tests := []struct {
		name    string
		spec    map[string]any
		current string
		want    string
	}{
		{"a renamed parameter's value", map[string]any{"operatorVersion": "hello-0.2.0", "replicas": int64(4), "image": "a"}, "hello-0.1.0",
			"the upgrade from hello-0.1.0 to hello-0.2.0 would lose the value of spec.replicas (parameter replicas), which hello-0.2.0 " +
				"has no parameter for: unset it, setting what replaces it, in the same change"},
		{"the new field set, the old one unset", map[string]any{"operatorVersion": "hello-0.2.0", "count": int64(4)}, "hello-0.1.0", ""},
		{"a field both versions have", map[string]any{"operatorVersion": "hello-0.2.0", "image": "a"}, "hello-0.1.0", ""},
		{"staying on the version it runs", map[string]any{"replicas": int64(4)}, "hello-0.1.0", ""},
		{"created at the newer version", map[string]any{"operatorVersion": "hello-0.2.0", "count": int64(4)}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := typedapi.InstanceOf(context.Background(), withSpec(tt.spec), tt.current, hello, versions)
			if got := fmt.Sprint(err); (err != nil || tt.want != "") && got != tt.want {
				t.Errorf("InstanceOf = %v\nwant %q", err, tt.want)
			}
		})
	}
}

// FuzzUpgradeNamesOnlyTheValuesItWouldLose: whatever a tenant's object sets
// (any field, any value) and however the two versions name their
// parameters, moving it between them never panics, and a refusal names only
// the field of the version it runs that the object sets.
func FuzzUpgradeNamesOnlyTheValuesItWouldLose(f *testing.F) {
	f.Add("replicas", "count", "replicas", "4")
	f.Add("log.level", "log_level", "log_level", "debug")
	f.Add("", "operatorVersion", "spec", "\x00")
	f.Fuzz(func(t *testing.T, before, after, field, value string) {
		v1 := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: "0.1.0",
			Parameters: []kudov1beta1.Parameter{{Name: before}}}}
		v1.Name, v1.Spec.Operator.Name = "hello-0.1.0", hello
		v2 := kudov1beta1.OperatorVersion{Spec: kudov1beta1.OperatorVersionSpec{Version: "0.2.0",
			Parameters: []kudov1beta1.Parameter{{Name: after}}}}
		v2.Name, v2.Spec.Operator.Name = "hello-0.2.0", hello
		spec := map[string]any{field: value, "operatorVersion": v2.Name}
		_, _, err := typedapi.InstanceOf(context.Background(), withSpec(spec), v1.Name, hello, []kudov1beta1.OperatorVersion{v1, v2})
		// The only field the object sets is field: a refusal to lose a
		// value is of that field, and only when it is before's.
		if err != nil && strings.HasPrefix(err.Error(), "the upgrade from ") && field != typedapi.FieldOf(before) {
			t.Errorf("the refusal names a value spec.%s does not hold for parameter %q: %v", field, before, err)
		}
	})
}
