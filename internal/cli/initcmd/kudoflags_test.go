package initcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// initCmd runs init with the flags, offline, and returns what it printed.
func initCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cmd := NewCmd(streams, genericclioptions.NewConfigFlags(false))
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// TestKUDOsInitFlags: --version, --service-account, -i and -w do what they
// did in KUDO's init, and what KUDO refused together is refused.
func TestKUDOsInitFlags(t *testing.T) {
	out, err := initCmd(t, "--dry-run", "-o", "yaml", "--version", "v9.9.9", "--service-account", "deployer")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decode([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		switch obj.GetKind() {
		case deploymentKind:
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, d); err != nil {
				t.Fatal(err)
			}
			if image := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(image, ":9.9.9") {
				t.Errorf("--version v9.9.9: image %s", image)
			}
			if d.Spec.Template.Spec.ServiceAccountName != "deployer" {
				t.Errorf("--service-account deployer: the pods run as %q", d.Spec.Template.Spec.ServiceAccountName)
			}
		case "ServiceAccount":
			if obj.GetName() == defaultServiceAccount {
				t.Errorf("ServiceAccount %s is still made", defaultServiceAccount)
			}
		case "RoleBinding", "ClusterRoleBinding":
			subjects, _, _ := unstructured.NestedSlice(obj.Object, "subjects")
			for _, s := range subjects {
				if name := s.(map[string]any)["name"]; name == defaultServiceAccount {
					t.Errorf("%s %s still binds %s", obj.GetKind(), obj.GetName(), name)
				}
			}
		}
	}

	for args, want := range map[string]string{
		"-i img:1 --version 2":            "specify either 'kudo-image' or 'version', not both",
		"-c -w":                           "you cannot use image, version, output, crd-only and wait flags with client-only option",
		"--upgrade --verify":              "'--upgrade' and '--verify' can not be used at the same time",
		"--verify --dry-run -o yaml":      "'--dry-run' and '--verify' can not be used at the same time",
		"--client-only --crd-only":        "you cannot use image, version, output, crd-only and wait flags with client-only option",
		"--kudo-image img:1 --version v1": "specify either 'kudo-image' or 'version', not both",
	} {
		if _, err := initCmd(t, strings.Fields(args)...); err == nil || err.Error() != want {
			t.Errorf("init %s: %v, want %q", args, err, want)
		}
	}
}

// TestClientOnlyConfiguresKUDOHome: as KUDO's, init -c writes
// $KUDO_HOME's repository configuration and touches no cluster.
func TestClientOnlyConfiguresKUDOHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("KUDO_HOME", home)
	out, err := initCmd(t, "--client-only")
	if err != nil {
		t.Fatal(err)
	}
	if want := "$KUDO_HOME has been configured at " + home + "\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	if _, err := os.Stat(filepath.Join(home, "repository", "repositories.yaml")); err != nil {
		t.Error(err)
	}
}

// TestVerifyNamesWhatIsMissing: init --verify checks the CRDs, the webhooks
// and the manager, and names what is wrong.
func TestVerifyNamesWhatIsMissing(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	var out strings.Builder
	empty := fake.NewClientBuilder().WithScheme(scheme).Build()
	err := verifyInstallation(context.Background(), empty, &out)
	if err == nil || err.Error() != "KUDO installation is not valid" || !strings.HasPrefix(out.String(), "Errors\nCRD operators.kudo.dev: ") {
		t.Errorf("nothing installed: %v\n%s", err, out.String())
	}

	var objs []client.Object
	for _, name := range []string{"operators.kudo.dev", "operatorversions.kudo.dev", "instances.kudo.dev"} {
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
		crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
			{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
		objs = append(objs, crd)
	}
	objs = append(objs, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "kudo-validating-webhook-configuration"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "v", ClientConfig: admissionregistrationv1.WebhookClientConfig{
			Service: &admissionregistrationv1.ServiceReference{Namespace: namespace, Name: webhookService}}}},
	})
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: deploymentName}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}}
	d.Status.AvailableReplicas = 1
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, d)...).WithStatusSubresource(d).Build()
	out.Reset()
	err = verifyInstallation(context.Background(), c, &out)
	if err == nil || out.String() != "Errors\ndeployment kudo-system/kudo-controller-manager: 1 of 2 replicas available\n" {
		t.Errorf("one replica down: %v\n%s", err, out.String())
	}

	d.Status.AvailableReplicas = 2
	if err := c.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := verifyInstallation(context.Background(), c, &out); err != nil {
		t.Errorf("installed: %v\n%s", err, out.String())
	}
}
