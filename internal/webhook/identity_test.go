package webhook

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

const sharedNamespace = "shared"

func TestAnInstanceBeingDeletedKeepsItsIdentity(t *testing.T) {
	deleting := func(i *kudov1beta1.Instance) { i.Spec.ServiceAccountName = "deployer" }
	for _, tc := range []struct {
		name   string
		change func(*kudov1beta1.Instance)
		want   string
	}{
		{"its finalizer goes", func(i *kudov1beta1.Instance) { i.Finalizers = nil }, ""},
		{"a parameter changes", func(i *kudov1beta1.Instance) { i.Spec.Parameters = map[string]string{"GREETING": "bye"} }, ""},
		{"its service account is dropped", func(i *kudov1beta1.Instance) { i.Spec.ServiceAccountName = "" },
			`spec.serviceAccountName cannot change while the Instance is being deleted: its cleanup runs as its plans did (serviceAccountName "deployer")`},
		{"its service account changes", func(i *kudov1beta1.Instance) { i.Spec.ServiceAccountName = "admin" },
			"spec.serviceAccountName cannot change while the Instance is being deleted"},
		{"its OperatorVersion changes", func(i *kudov1beta1.Instance) { i.Spec.OperatorVersion.Name = "web-0.2.1" },
			"spec.operatorVersion cannot change while the Instance is being deleted: its cleanup runs ns/web-0.1.0's plans"},
		{"its OperatorVersion moves to another namespace", func(i *kudov1beta1.Instance) { i.Spec.OperatorVersion.Namespace = sharedNamespace },
			"spec.operatorVersion cannot change while the Instance is being deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := instance(deleting)
			err := ValidateDeleting(old, instance(deleting, tc.change))
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// reviews answers SubjectAccessReviews from a list of who may get what.
type reviews struct {
	client.Writer
	allowed map[string]bool // user + " " + namespace/name
	asked   []authorizationv1.SubjectAccessReviewSpec
}

func (r *reviews) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	review := obj.(*authorizationv1.SubjectAccessReview)
	r.asked = append(r.asked, review.Spec)
	attrs := review.Spec.ResourceAttributes
	review.Status.Allowed = attrs.Verb == "get" && attrs.Resource == "operatorversions" &&
		r.allowed[review.Spec.User+" "+attrs.Namespace+"/"+attrs.Name]
	return nil
}

func TestAnOperatorVersionOfAnotherNamespaceNeedsItsUserToReadIt(t *testing.T) {
	access := &reviews{allowed: map[string]bool{"alice shared/web-0.1.0": true}}
	w := &Instances{Access: access}
	request := func(user string) context.Context {
		return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UserInfo: authenticationv1.UserInfo{Username: user, Groups: []string{"tenants"}},
		}})
	}
	for _, tc := range []struct {
		name     string
		user     string
		instance *kudov1beta1.Instance
		want     string
	}{
		{"its own namespace's, unasked", "bob", instance(), ""},
		{"another namespace's, which the user may read", "alice", instance(func(i *kudov1beta1.Instance) { i.Spec.OperatorVersion.Namespace = sharedNamespace }), ""},
		{"another namespace's, which the user may not read", "bob", instance(func(i *kudov1beta1.Instance) { i.Spec.OperatorVersion.Namespace = sharedNamespace }),
			"spec.operatorVersion: bob may not get OperatorVersion shared/web-0.1.0, so no Instance of it may run it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			access.asked = nil
			err := w.checkOperatorVersionAccess(request(tc.user), tc.instance)
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (err == nil || err.Error() != tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if tc.instance.Spec.OperatorVersion.Namespace == "" && len(access.asked) > 0 {
				t.Fatalf("asked the API server for an OperatorVersion of the Instance's own namespace: %+v", access.asked)
			}
			for _, spec := range access.asked {
				if spec.User != tc.user || len(spec.Groups) != 1 || spec.Groups[0] != "tenants" {
					t.Fatalf("asked about %s %v, not the request's user", spec.User, spec.Groups)
				}
			}
		})
	}
}
