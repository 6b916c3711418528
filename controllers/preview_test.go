package controllers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/preview"
)

const previewPassword = "s3cret-value"

// previewOperator renders a ConfigMap of GREETING, a Secret of the
// sensitive PASSWORD, and, while LEGACY is true, a second ConfigMap, all
// from one task: turning LEGACY off makes the plan prune it.
func previewOperator(ns string) *kudov1beta1.OperatorVersion {
	return &kudov1beta1.OperatorVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pv-0.1.0"},
		Spec: kudov1beta1.OperatorVersionSpec{
			Operator: corev1.ObjectReference{Name: "pv", Kind: "Operator"},
			Version:  "0.1.0",
			Templates: map[string]string{
				"settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-settings\ndata:\n  greeting: {{ .Params.GREETING }}\n",
				"creds.yaml":    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Name }}-creds\nstringData:\n  password: {{ .Params.PASSWORD }}\n",
				"legacy.yaml": "{{ if eq .Params.LEGACY \"true\" }}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-legacy\n" +
					"data:\n  old: \"yes\"\n{{ end }}",
			},
			Parameters: []kudov1beta1.Parameter{
				{Name: "GREETING", Default: ptr.To("hello")},
				{Name: "PASSWORD", Default: ptr.To(previewPassword), Sensitive: ptr.To(true)},
				{Name: "LEGACY", Default: ptr.To("true")},
			},
			Tasks: []kudov1beta1.Task{applyTask("app", "settings.yaml", "creds.yaml", "legacy.yaml")},
			Plans: map[string]kudov1beta1.Plan{
				"deploy": plan(kudov1beta1.Serial, phase("main", kudov1beta1.Serial, step("app", "app"))),
			},
		},
	}
}

// userWith is a client of the user, who may do what rules allow in ns,
// and nothing else. It returns once the API server's authorizer, which
// learns of a new Role from its informers, has seen every rule: without
// the wait the user's first request may still be refused.
func userWith(ctx context.Context, ns, user string, rules ...rbacv1.PolicyRule) client.Client {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, Rules: rules})).To(Succeed())
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
	for _, rule := range rules {
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				for _, verb := range rule.Verbs {
					Eventually(func(g Gomega) {
						review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
							User: user,
							ResourceAttributes: &authorizationv1.ResourceAttributes{
								Namespace: ns, Group: group, Resource: resource, Verb: verb,
							},
						}}
						g.Expect(k8sClient.Create(ctx, review)).To(Succeed())
						g.Expect(review.Status.Allowed).To(BeTrue(), "%s may %s %s", user, verb, resource)
					}).Should(Succeed())
				}
			}
		}
	}
	cfg := rest.CopyConfig(testEnv.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// previewed finds the object of the report by kind and name.
func previewed(r *preview.Report, kind, name string) preview.Object {
	GinkgoHelper()
	for _, o := range r.Objects {
		if o.Kind == kind && o.Name == name {
			return o
		}
	}
	Fail("the preview has no " + kind + " " + name)
	return preview.Object{}
}

var _ = Describe("A preview of a change", func() {
	var (
		ctx context.Context
		ns  string
		key client.ObjectKey
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		Expect(k8sClient.Create(ctx, previewOperator(ns))).To(Succeed())
		i := newInstance(ns, "web", "pv-0.1.0")
		Expect(k8sClient.Create(ctx, i)).To(Succeed())
		key = client.ObjectKeyFromObject(i)
		Eventually(func(g Gomega) {
			g.Expect(getInstance(ctx, g, key).Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
		}).Should(Succeed())
	})

	update := func() *action.Update {
		return &action.Update{Instance: "web", ParameterOptions: action.ParameterOptions{Parameters: []string{"GREETING=bye", "LEGACY=false"}}}
	}
	config := func(c client.Client) action.Config {
		return action.Config{Client: c, Namespace: ns, Out: io.Discard, ErrOut: io.Discard}
	}

	It("is made as the user: what they may not read shows as refused, and nothing changes", func() {
		bob := userWith(ctx, ns, "bob",
			rbacv1.PolicyRule{APIGroups: []string{kudov1beta1.GroupVersion.Group}, Resources: []string{"instances", "operatorversions"},
				Verbs: []string{"get", "list", "watch", "patch"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "patch", "delete"}})

		r, err := update().Preview(ctx, config(bob))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Refusal).To(BeEmpty())
		Expect(r.Plan).To(Equal("deploy"))
		Expect(r.Steps).To(Equal([]preview.Step{{Phase: "main", Step: "app", Tasks: []string{"app (Apply)"}}}))
		settings := previewed(r, "ConfigMap", "web-settings")
		Expect(settings.Verb).To(Equal(preview.Configure))
		Expect(settings.Diff).To(ContainSubstring("-  greeting: hello\n+  greeting: bye\n"))
		Expect(settings.Diff).To(HavePrefix("--- live/v1.ConfigMap." + ns + ".web-settings\n+++ would/v1.ConfigMap." + ns + ".web-settings\n"))
		creds := previewed(r, "Secret", "web-creds")
		Expect(creds.Verb).To(Equal(preview.Refuse))
		Expect(creds.Note).To(ContainSubstring(`secrets "web-creds" is forbidden: User "bob" cannot get resource "secrets"`))
		Expect(creds.Live).To(BeNil())
		Expect(previewed(r, "ConfigMap", "web-legacy").Verb).To(Equal(preview.Prune))
		Expect(r.Changes()).To(BeTrue())

		live := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-settings"}, live)).To(Succeed())
		Expect(live.Data).To(HaveKeyWithValue("greeting", "hello"))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-legacy"}, &corev1.ConfigMap{})).To(Succeed())
		Expect(getInstance(ctx, Default, key).Spec.Parameters).To(BeEmpty())
	})

	It("shows what the change then applies, Secrets masked", func() {
		r, err := update().Preview(ctx, config(k8sClient))
		Expect(err).NotTo(HaveOccurred())
		creds := previewed(r, "Secret", "web-creds")
		Expect(creds.Verb).To(Equal(preview.Unchanged))
		Expect(creds.Would["data"]).To(Equal(map[string]any{"password": "***"}))
		shown, err := json.Marshal(r)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(shown)).NotTo(ContainSubstring(previewPassword))
		Expect(string(shown)).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString([]byte(previewPassword))))

		change, err := update().Run(ctx, config(k8sClient))
		Expect(err).NotTo(HaveOccurred())
		Expect(change.Object).To(Equal("instance.kudo.dev/web"))
		Eventually(func(g Gomega) {
			i := getInstance(ctx, g, key)
			g.Expect(i.Status.PlanStatus["deploy"].Status).To(Equal(kudov1beta1.ExecutionComplete))
			g.Expect(i.Status.AppliedParameters).To(HaveKeyWithValue("GREETING", "bye"))
		}).Should(Succeed())
		for _, o := range r.Objects {
			if o.Verb != preview.Configure && o.Verb != preview.Create {
				continue
			}
			live := &unstructured.Unstructured{}
			live.SetAPIVersion(o.APIVersion)
			live.SetKind(o.Kind)
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, live)).To(Succeed())
			Expect(preview.Shown(live).Object).To(Equal(o.Would), "%s as the change applied it", o.Describe())
		}
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-legacy"}, &corev1.ConfigMap{}))
		}).Should(BeTrue())

		again, err := (&action.Update{Instance: "web", ParameterOptions: action.ParameterOptions{Parameters: []string{"GREETING=bye"}}}).
			Preview(ctx, config(k8sClient))
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Plan).To(BeEmpty())
		Expect(again.Changes()).To(BeFalse())
	})
})
