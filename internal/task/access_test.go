package task

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// TestEveryKindSaysWhatItNeeds: each registered kind says what it needs of
// the API server for a task as rendered, and whether drift correction
// renders it again; kubectl kudo rbac and the controller ask nothing else.
func TestEveryKindSaysWhatItNeeds(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetName("web")
	pod := &unstructured.Unstructured{}
	pod.SetAPIVersion("v1")
	pod.SetKind("Pod")
	pod.SetName("web-deploy-main-gen")
	want := map[kudov1beta1.TaskKind]struct {
		rendered  Rendered
		access    []string
		rerenders bool
	}{
		kudov1beta1.ApplyTaskKind:  {Rendered{Objects: objs(obj)}, []string{"apps/Deployment web: get,create,update,patch,delete (writes)"}, true},
		kudov1beta1.ToggleTaskKind: {Rendered{Objects: objs(obj)}, []string{"apps/Deployment web: get,create,update,patch,delete (writes)"}, true},
		kudov1beta1.DeleteTaskKind: {Rendered{Objects: objs(obj)}, []string{"apps/Deployment web: get,delete"}, false},
		kudov1beta1.PipeTaskKind: {Rendered{Objects: objs(pod), Pipes: []PipeFile{{Kind: "Secret", Name: "web.key"}}}, []string{
			"/Pod web-deploy-main-gen: get,create,patch,delete", "/Pod/exec web-deploy-main-gen: create,get",
			"/Secret web.key: get,create,update,patch,delete"}, false},
		kudov1beta1.KudoOperatorTaskKind: {Rendered{Child: "web-db", ChildSecret: true}, []string{
			"kudo.dev/Instance web-db: get,create,update,patch,delete",
			"/Secret *: get,create,update,patch,delete (the Secret of the child's sensitive values is named after the plan run)"}, false},
		kudov1beta1.DummyTaskKind: {Rendered{}, nil, false},
		kudov1beta1.HelmTaskKind:  {Rendered{Objects: objs(obj)}, []string{"apps/Deployment web: get,create,update,patch,delete (writes)"}, true},
	}
	for _, k := range kudov1beta1.TaskKinds {
		kind, err := For(k)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[k]
		if !ok {
			t.Errorf("kind %s: no case", k)
			continue
		}
		var got []string
		for _, a := range kind.Access(&w.rendered) {
			got = append(got, describe(a))
		}
		if diff := cmp.Diff(w.access, got); diff != "" {
			t.Errorf("%s needs (-want +got):\n%s", k, diff)
		}
		if got := Rerenders(&kudov1beta1.Task{Kind: k}); got != w.rerenders {
			t.Errorf("%s rerenders %t, want %t", k, got, w.rerenders)
		}
	}
}

func objs(o ...*unstructured.Unstructured) []*unstructured.Unstructured { return o }

func describe(a Access) string {
	s := a.Kind.Group + "/" + a.Kind.Kind
	if a.Subresource != "" {
		s += "/" + a.Subresource
	}
	name := a.Name
	if name == "" {
		name = "*"
	}
	s += " " + name + ": "
	for k, v := range a.Verbs {
		if k > 0 {
			s += ","
		}
		s += v
	}
	switch {
	case a.Object != nil:
		s += " (writes)"
	case a.Why != "":
		s += " (" + a.Why + ")"
	}
	return s
}
