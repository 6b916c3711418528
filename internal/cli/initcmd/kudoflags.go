package initcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kudo-ng/kudo/internal/cli/repoconfig"
)

// The manager's service account in config/default, and the kind of it.
const (
	defaultServiceAccount = "kudo-controller-manager"
	serviceAccountKind    = "ServiceAccount"
)

// checkKUDOFlags refuses what KUDO's init refused together.
func checkKUDOFlags(opts *Options) error {
	switch {
	case opts.Image != "" && opts.Version != "":
		return errors.New("specify either 'kudo-image' or 'version', not both")
	case opts.ClientOnly && (opts.Image != "" || opts.Version != "" || opts.Output != "" || opts.CRDOnly || opts.Wait):
		return errors.New("you cannot use image, version, output, crd-only and wait flags with client-only option")
	case opts.Upgrade && opts.Verify:
		return errors.New("'--upgrade' and '--verify' can not be used at the same time")
	case opts.Verify && opts.DryRun:
		return errors.New("'--dry-run' and '--verify' can not be used at the same time")
	}
	return nil
}

// configureHome makes $KUDO_HOME's repository configuration if it is
// missing, as KUDO's init did before anything else, and says where.
func configureHome(out io.Writer) error {
	path, err := repoconfig.Path()
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := repoconfig.Default().Save(); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(out, "$KUDO_HOME has been configured at %s\n", filepath.Dir(filepath.Dir(path)))
	return err
}

// imageOfVersion is the manager's image with its tag replaced, as KUDO's
// --version did.
func imageOfVersion(image, version string) string {
	repository := image
	if at := strings.LastIndex(image, ":"); at > strings.LastIndex(image, "/") {
		repository = image[:at]
	}
	return repository + ":" + strings.TrimPrefix(version, "v")
}

// renameServiceAccount gives the manager the service account name: its
// ServiceAccount, the bindings of its roles and its pods.
func renameServiceAccount(objs []*unstructured.Unstructured, name string) error {
	for _, obj := range objs {
		switch obj.GetKind() {
		case serviceAccountKind:
			if obj.GetName() == defaultServiceAccount {
				obj.SetName(name)
			}
		case "RoleBinding", "ClusterRoleBinding":
			subjects, _, _ := unstructured.NestedSlice(obj.Object, "subjects")
			for _, s := range subjects {
				if subject, ok := s.(map[string]any); ok && subject["kind"] == serviceAccountKind && subject["name"] == defaultServiceAccount {
					subject["name"] = name
				}
			}
			if err := unstructured.SetNestedSlice(obj.Object, subjects, "subjects"); err != nil {
				return err
			}
		case deploymentKind:
			if err := unstructured.SetNestedField(obj.Object, name, "spec", "template", "spec", "serviceAccountName"); err != nil {
				return err
			}
		}
	}
	return nil
}

// verifyInstallation checks an installed kudo-ng as KUDO's --verify did:
// its CRDs established, its webhooks configured, its manager available;
// it prints what is wrong under Errors.
func verifyInstallation(ctx context.Context, c client.Client, out io.Writer) error {
	var problems []string
	for _, name := range []string{"operators.kudo.dev", "operatorversions.kudo.dev", "instances.kudo.dev"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			problems = append(problems, fmt.Sprintf("CRD %s: %v", name, err))
			continue
		}
		if !established(crd) {
			problems = append(problems, fmt.Sprintf("CRD %s is not established", name))
		}
	}
	webhooks := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := c.List(ctx, webhooks); err != nil {
		problems = append(problems, fmt.Sprintf("webhook configurations: %v", err))
	} else if !servedBy(webhooks.Items, webhookService) {
		problems = append(problems, "no validating webhook configuration calls service "+namespace+"/"+webhookService)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: deploymentName}, d); err != nil {
		problems = append(problems, fmt.Sprintf("deployment %s/%s: %v", namespace, deploymentName, err))
	} else if want := ptr.Deref(d.Spec.Replicas, 1); d.Status.AvailableReplicas < want {
		problems = append(problems, fmt.Sprintf("deployment %s/%s: %d of %d replicas available", namespace, deploymentName,
			d.Status.AvailableReplicas, want))
	}
	if len(problems) > 0 {
		_, _ = fmt.Fprintln(out, "Errors")
		for _, p := range problems {
			_, _ = fmt.Fprintln(out, p)
		}
		return errors.New("KUDO installation is not valid")
	}
	_, err := fmt.Fprintf(out, "kudo-ng is installed: its CRDs established, its webhooks configured, deployment %s/%s available\n",
		namespace, deploymentName)
	return err
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func servedBy(configs []admissionregistrationv1.ValidatingWebhookConfiguration, service string) bool {
	for _, config := range configs {
		for _, w := range config.Webhooks {
			if s := w.ClientConfig.Service; s != nil && s.Namespace == namespace && s.Name == service {
				return true
			}
		}
	}
	return false
}
