package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// olmV1Kinds are the kinds, besides the CSV and CRDs, that OLM v1 installs
// from a registry+v1 bundle's manifests/: operator-registry's supported
// resources (pkg/lib/bundle, v1.57 in operator-controller 1.5.1, v1.73 in
// 1.11.0; the same list), which operator-controller's renderer checks each
// object against.
var olmV1Kinds = []string{
	"Secret", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "ServiceAccount", "Service", "Role",
	"RoleBinding", "PrometheusRule", "ServiceMonitor", "PodDisruptionBudget", "PriorityClass",
	"VerticalPodAutoscaler", "ConsoleYAMLSample", "ConsoleQuickStart", "ConsoleCLIDownload",
	"ConsoleLink", "ConsolePlugin", "NetworkPolicy", "PodMonitor",
}

// olmV1DependencyProperties are the properties by which a bundle depends on
// another: OLM v1 resolves no dependencies and refuses a bundle that declares one.
var olmV1DependencyProperties = []string{"olm.package.required", "olm.gvk.required", "olm.constraint"}

// olmV1Bundle is what operator-controller reads of a registry+v1 bundle.
type olmV1Bundle struct {
	pkg          string
	csv          *operatorsv1alpha1.ClusterServiceVersion
	crds         []*apiextensionsv1.CustomResourceDefinition
	others       []*unstructured.Unstructured
	properties   []string // the types of metadata/properties.yaml's and the CSV's olm.properties
	dependencies bool     // metadata/dependencies.yaml exists
}

func readOLMv1Bundle(t *testing.T, dir string) olmV1Bundle {
	t.Helper()
	bundle, err := manifests.GetBundleFromDir(filepath.Join(dir, "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	b := olmV1Bundle{csv: bundle.CSV, crds: bundle.V1CRDs}
	for _, obj := range bundle.Objects {
		if kind := obj.GetKind(); kind != "ClusterServiceVersion" && kind != "CustomResourceDefinition" {
			b.others = append(b.others, obj)
		}
	}
	var annotations struct {
		Annotations map[string]string `json:"annotations"`
	}
	readYAML(t, filepath.Join(dir, "metadata", "annotations.yaml"), &annotations)
	b.pkg = annotations.Annotations["operators.operatorframework.io.bundle.package.v1"]

	var properties struct {
		Properties []struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if _, err := os.Stat(filepath.Join(dir, "metadata", "properties.yaml")); err == nil {
		readYAML(t, filepath.Join(dir, "metadata", "properties.yaml"), &properties)
	}
	if raw := b.csv.Annotations["olm.properties"]; raw != "" {
		if err := yaml.Unmarshal([]byte(raw), &properties.Properties); err != nil {
			t.Fatalf("the CSV's olm.properties: %v", err)
		}
	}
	for _, p := range properties.Properties {
		b.properties = append(b.properties, p.Type)
	}
	_, err = os.Stat(filepath.Join(dir, "metadata", "dependencies.yaml"))
	b.dependencies = err == nil
	return b
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// olmV1Problems are the reasons OLM v1 would refuse to install b: the checks
// of operator-controller's registry+v1 renderer (render/registryv1 and its
// validators, convert/helm.go) and resolver (resolve/validation.go), in
// the standard feature set, with the cert-manager webhook provider.
func olmV1Problems(b olmV1Bundle) []string {
	var p problems
	p.checkInstall(b)
	deployments := p.checkDeployments(b.csv)
	owned := p.checkCRDs(b)
	p.checkWebhooks(b.csv, deployments, owned)
	return p
}

type problems []string

func (p *problems) add(format string, a ...any) { *p = append(*p, fmt.Sprintf(format, a...)) }

// checkInstall: what OLM v1 installs at all.
func (p *problems) checkInstall(b olmV1Bundle) {
	if b.pkg == "" {
		p.add("metadata/annotations.yaml names no package")
	}
	if !supports(b.csv, operatorsv1alpha1.InstallModeTypeAllNamespaces) {
		p.add("the CSV does not support install mode AllNamespaces, the only one OLM v1 installs without its alpha SingleOwnNamespaceInstallSupport")
	}
	if len(b.csv.Spec.APIServiceDefinitions.Owned) > 0 {
		p.add("the CSV owns APIServices, which OLM v1 does not install")
	}
	if b.dependencies {
		p.add("metadata/dependencies.yaml: OLM v1 resolves no dependencies")
	}
	for _, property := range b.properties {
		if slices.Contains(olmV1DependencyProperties, property) {
			p.add("property %s: OLM v1 resolves no dependencies", property)
		}
	}
	for _, obj := range b.others {
		if !slices.Contains(olmV1Kinds, obj.GetKind()) {
			p.add("%s %s in manifests/: a kind OLM v1 does not install from a bundle", obj.GetKind(), obj.GetName())
		}
	}
}

func supports(csv *operatorsv1alpha1.ClusterServiceVersion, mode operatorsv1alpha1.InstallModeType) bool {
	return slices.ContainsFunc(csv.Spec.InstallModes, func(m operatorsv1alpha1.InstallMode) bool {
		return m.Type == mode && m.Supported
	})
}

// checkDeployments returns the CSV's Deployments by name.
func (p *problems) checkDeployments(csv *operatorsv1alpha1.ClusterServiceVersion) map[string]bool {
	deployments := map[string]bool{}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if deployments[d.Name] {
			p.add("the CSV has two Deployments %s", d.Name)
		}
		deployments[d.Name] = true
		for _, msg := range validation.IsDNS1123Subdomain(d.Name) {
			p.add("Deployment %s: %s", d.Name, msg)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if slices.ContainsFunc(c.Env, func(env corev1.EnvVar) bool { return env.Name == "OPERATOR_CONDITION_NAME" }) {
				p.add("Deployment %s reads OPERATOR_CONDITION_NAME: OLM v1 makes no OperatorCondition", d.Name)
			}
		}
	}
	return deployments
}

// checkCRDs returns the bundle's CRDs by name.
func (p *problems) checkCRDs(b olmV1Bundle) map[string]bool {
	owned := map[string]bool{}
	for _, crd := range b.crds {
		if owned[crd.Name] {
			p.add("two CRDs %s", crd.Name)
		}
		owned[crd.Name] = true
	}
	for _, crd := range b.csv.Spec.CustomResourceDefinitions.Owned {
		if !owned[crd.Name] {
			p.add("the CSV owns CRD %s, which is not in manifests/", crd.Name)
		}
	}
	return owned
}

func (p *problems) checkWebhooks(csv *operatorsv1alpha1.ClusterServiceVersion, deployments, owned map[string]bool) {
	webhooks := map[string]bool{}
	for _, w := range csv.Spec.WebhookDefinitions {
		key := string(w.Type) + "/" + w.GenerateName
		if webhooks[key] {
			p.add("two %s webhooks %s", w.Type, w.GenerateName)
		}
		webhooks[key] = true
		for _, msg := range validation.IsDNS1123Subdomain(w.GenerateName) {
			p.add("webhook %s: %s", w.GenerateName, msg)
		}
		if !deployments[w.DeploymentName] {
			p.add("webhook %s is served by Deployment %s, which the CSV does not deploy", w.GenerateName, w.DeploymentName)
		}
		if w.Type == operatorsv1alpha1.ConversionWebhook {
			p.checkConversion(csv, w, owned)
			continue
		}
		p.checkRules(w)
	}
}

func (p *problems) checkConversion(csv *operatorsv1alpha1.ClusterServiceVersion, w operatorsv1alpha1.WebhookDescription, owned map[string]bool) {
	for _, mode := range csv.Spec.InstallModes {
		if mode.Supported && mode.Type != operatorsv1alpha1.InstallModeTypeAllNamespaces {
			p.add("conversion webhook %s in a bundle that supports install mode %s", w.GenerateName, mode.Type)
		}
	}
	for _, crd := range w.ConversionCRDs {
		if !owned[crd] {
			p.add("conversion webhook %s converts CRD %s, which the bundle does not own", w.GenerateName, crd)
		}
	}
}

// checkRules refuses webhooks that could lock OLM v1, or admission itself, out.
func (p *problems) checkRules(w operatorsv1alpha1.WebhookDescription) {
	for _, rule := range w.Rules {
		for _, group := range rule.APIGroups {
			if group == "olm.operatorframework.io" || group == "*" {
				p.add("webhook %s intercepts API group %q", w.GenerateName, group)
			}
			if group != "admissionregistration.k8s.io" {
				continue
			}
			for _, resource := range rule.Resources {
				if r := strings.ToLower(resource); r == "*" || strings.HasSuffix(r, "webhookconfigurations") {
					p.add("webhook %s intercepts %s", w.GenerateName, resource)
				}
			}
		}
	}
}

func TestBundleInstallsWithOLMv1(t *testing.T) {
	b := readOLMv1Bundle(t, filepath.Join("..", "..", "bundle"))
	if len(b.csv.Spec.WebhookDefinitions) == 0 || len(b.others) == 0 {
		t.Fatalf("the bundle has %d webhooks and %d other objects: the checks would check nothing", len(b.csv.Spec.WebhookDefinitions), len(b.others))
	}
	for _, problem := range olmV1Problems(b) {
		t.Error(problem)
	}
}

// Each rule refuses what OLM v1 refuses, on a copy of the bundle broken so.
func TestOLMv1ProblemsFindWhatOLMv1Refuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*olmV1Bundle)
		want   string
	}{{
		name: "own namespace only",
		mutate: func(b *olmV1Bundle) {
			for i := range b.csv.Spec.InstallModes {
				b.csv.Spec.InstallModes[i].Supported = b.csv.Spec.InstallModes[i].Type == operatorsv1alpha1.InstallModeTypeOwnNamespace
			}
		},
		want: "does not support install mode AllNamespaces",
	}, {
		name:   "a dependency",
		mutate: func(b *olmV1Bundle) { b.properties = append(b.properties, "olm.package.required") },
		want:   "property olm.package.required",
	}, {
		name: "a webhook configuration in manifests/",
		mutate: func(b *olmV1Bundle) {
			w := &unstructured.Unstructured{}
			w.SetKind("ValidatingWebhookConfiguration")
			w.SetName("extra")
			b.others = append(b.others, w)
		},
		want: "ValidatingWebhookConfiguration extra in manifests/",
	}, {
		name: "a webhook on OLM v1's own kinds",
		mutate: func(b *olmV1Bundle) {
			b.csv.Spec.WebhookDefinitions[0].Rules[0].APIGroups = []string{"olm.operatorframework.io"}
		},
		want: `intercepts API group "olm.operatorframework.io"`,
	}, {
		name:   "a webhook served by no Deployment",
		mutate: func(b *olmV1Bundle) { b.csv.Spec.WebhookDefinitions[0].DeploymentName = "elsewhere" },
		want:   "Deployment elsewhere, which the CSV does not deploy",
	}, {
		name:   "an owned CRD left out",
		mutate: func(b *olmV1Bundle) { b.crds = b.crds[1:] },
		want:   "which is not in manifests/",
	}, {
		name: "an OperatorCondition",
		mutate: func(b *olmV1Bundle) {
			c := &b.csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: "OPERATOR_CONDITION_NAME"})
		},
		want: "OLM v1 makes no OperatorCondition",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := readOLMv1Bundle(t, filepath.Join("..", "..", "bundle"))
			tc.mutate(&b)
			problems := olmV1Problems(b)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %q, want one saying %q", problems, tc.want)
			}
		})
	}
}
