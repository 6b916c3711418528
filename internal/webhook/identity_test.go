package webhook

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

const sharedNamespace = "shared"

func deployer(i *kudov1beta1.Instance) { i.Spec.ServiceAccountName = "deployer" }

func TestAnInstanceBeingDeletedKeepsItsIdentity(t *testing.T) {
	deleting := deployer
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

// reviews answers SubjectAccessReviews from a list of who may do what:
// "user verb resource namespace/name".
type reviews struct {
	client.Writer
	allowed map[string]bool
	asked   []authorizationv1.SubjectAccessReviewSpec
}

func (r *reviews) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	review := obj.(*authorizationv1.SubjectAccessReview)
	r.asked = append(r.asked, review.Spec)
	a := review.Spec.ResourceAttributes
	review.Status.Allowed = r.allowed[review.Spec.User+" "+a.Verb+" "+a.Resource+" "+a.Namespace+"/"+a.Name]
	return nil
}

func requestBy(user string) context.Context {
	return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UserInfo: authenticationv1.UserInfo{Username: user, Groups: []string{"tenants"}},
	}})
}

// TestAnInstanceReachesOnlyWhatItsUserMay: the OperatorVersion of another
// namespace, the service account and the Secrets an Instance names are its
// user's choice, each asked of the API server as that user, on create and
// when it changes; an unchanged choice is not asked again.
func TestAnInstanceReachesOnlyWhatItsUserMay(t *testing.T) {
	access := &reviews{allowed: map[string]bool{
		"alice get operatorversions shared/web-0.1.0":   true,
		"alice impersonate serviceaccounts ns/deployer": true,
		"alice get secrets ns/db":                       true,
		"alice get secrets ns/prod-kubeconfig":          true,
	}}
	w := &Instances{Access: access}
	shared := func(i *kudov1beta1.Instance) { i.Spec.OperatorVersion.Namespace = sharedNamespace }
	ci := func(i *kudov1beta1.Instance) { i.Spec.ServiceAccountName = "ci" }
	db := func(i *kudov1beta1.Instance) {
		i.Spec.SecretParameters = map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "db", Key: "password"}}
	}
	tokens := func(i *kudov1beta1.Instance) {
		i.Spec.SecretParameters = map[string]kudov1beta1.SecretKeyReference{"PASSWORD": {Name: "ci-token", Key: "token"}}
	}
	prod := func(i *kudov1beta1.Instance) {
		i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "prod-kubeconfig"}}
	}
	admin := func(i *kudov1beta1.Instance) {
		i.Spec.KubeConfig = &kudov1beta1.KubeConfigReference{SecretRef: kudov1beta1.KubeConfigSecretReference{Name: "admin-kubeconfig"}}
	}
	for _, tc := range []struct {
		name     string
		user     string
		old, new *kudov1beta1.Instance
		want     string
		asks     int
	}{
		{"its own namespace's OperatorVersion, unasked", "bob", nil, instance(), "", 0},
		{"another namespace's, which the user may read", "alice", nil, instance(shared), "", 1},
		{"another namespace's, which the user may not read", "bob", nil, instance(shared),
			"spec.operatorVersion: bob may not get OperatorVersion shared/web-0.1.0, so no Instance of it may run it", 1},
		{"a service account the user may impersonate", "alice", nil, instance(deployer), "", 1},
		{"a service account the user may not impersonate", "alice", nil, instance(ci),
			"spec.serviceAccountName: alice may not impersonate ServiceAccount ns/ci, so no Instance of theirs may act as it", 1},
		{"changed to one the user may not impersonate", "alice", instance(deployer), instance(ci),
			"spec.serviceAccountName: alice may not impersonate ServiceAccount ns/ci", 1},
		{"kept, by a user who may not impersonate it", "bob", instance(ci), instance(ci), "", 0},
		{"the account itself, naming itself", "system:serviceaccount:ns:ci", nil, instance(ci), "", 0},
		{"a Secret the user may get", "alice", nil, instance(db), "", 1},
		{"a Secret the user may not get", "alice", nil, instance(tokens),
			"spec.secretParameters.PASSWORD: alice may not get Secret ns/ci-token, so no Instance of theirs may read it", 1},
		{"changed to a Secret the user may not get", "alice", instance(db), instance(tokens), "may not get Secret ns/ci-token", 1},
		{"kept, by a user who may not get it", "bob", instance(tokens), instance(tokens), "", 0},
		{"a kubeconfig the user may get", "alice", nil, instance(prod), "", 1},
		{"a kubeconfig the user may not get", "alice", nil, instance(admin),
			"spec.kubeConfig.secretRef: alice may not get Secret ns/admin-kubeconfig, so no Instance of theirs may act with its kubeconfig", 1},
		{"a kubeconfig kept, by a user who may not get it", "bob", instance(prod), instance(prod), "", 0},
		{"a service account of the kubeconfig's cluster, asked of there, not here", "alice", nil, instance(prod, ci), "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			access.asked = nil
			err := w.checkReach(requestBy(tc.user), tc.old, tc.new)
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if len(access.asked) != tc.asks {
				t.Fatalf("asked %d reviews, want %d: %+v", len(access.asked), tc.asks, access.asked)
			}
			for _, spec := range access.asked {
				if spec.User != tc.user || len(spec.Groups) != 1 || spec.Groups[0] != "tenants" {
					t.Fatalf("asked about %s %v, not the request's user", spec.User, spec.Groups)
				}
			}
		})
	}
}

// TestAnInstanceWhoseOperatorVersionIsGoneTakesNoNewIdentity: the update
// that finds no OperatorVersion passes the rest of admission, not the
// identity check.
func TestAnInstanceWhoseOperatorVersionIsGoneTakesNoNewIdentity(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = kudov1beta1.AddToScheme(scheme)
	none := fake.NewClientBuilder().WithScheme(scheme).Build()
	w := &Instances{Client: none, Reader: none, Access: &reviews{}}
	_, err := w.ValidateUpdate(requestBy("bob"), instance(deployer), instance(func(i *kudov1beta1.Instance) { i.Spec.ServiceAccountName = "ci" }))
	if want := "spec.serviceAccountName: bob may not impersonate ServiceAccount ns/ci"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ValidateUpdate = %v, want %q", err, want)
	}
}
