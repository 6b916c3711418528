package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations/property"
	"sigs.k8s.io/yaml"
)

// released holds the kudo.dev CRDs of the last released bundle, which every
// later bundle must upgrade from. Copy the bundle's CRDs here on each release.
var released = filepath.Join("testdata", "released", "kudo-ng.v0.1.0")

// upgradeSafety is OLM v1's CRD upgrade-safety preflight, with
// operator-controller's configuration (1.5.1 and 1.11.0 alike,
// rukpak/preflights/crdupgradesafety): every crdify check fails the upgrade
// but for descriptions, and enums may only grow.
func upgradeSafety(t *testing.T, old, new *apiextensionsv1.CustomResourceDefinition) *runner.Results {
	t.Helper()
	r, err := runner.New(&config.Config{
		Conversion:           config.ConversionPolicyIgnore,
		UnhandledEnforcement: config.EnforcementPolicyError,
		Validations: []config.ValidationConfig{
			{Name: "description", Enforcement: config.EnforcementPolicyNone},
			{Name: "enum", Enforcement: config.EnforcementPolicyError, Configuration: map[string]any{
				"additionPolicy": property.AdditionPolicyAllow,
			}},
		},
	}, runner.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(old, new)
}

func readCRD(t *testing.T, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return crd
}

func releasedCRDs(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(released, "kudo.dev_*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no released CRDs in %s: %v", released, err)
	}
	return paths
}

// An upgrade from the released bundle passes OLM v1's preflight, and keeps
// every CRD: OLM v1 deletes a CRD the new bundle leaves out, and every
// custom resource of it.
func TestCRDsUpgradeSafelyFromTheReleasedBundle(t *testing.T) {
	for _, path := range releasedCRDs(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			current := filepath.Join("..", "..", "bundle", "manifests", filepath.Base(path))
			if _, err := os.Stat(current); err != nil {
				t.Fatalf("the bundle leaves out a released CRD: %v", err)
			}
			if results := upgradeSafety(t, readCRD(t, path), readCRD(t, current)); results.HasFailures() {
				t.Errorf("OLM v1 refuses the upgrade:\n%s", results.RenderPlainText())
			}
		})
	}
}

// The preflight refuses what would break stored objects or their clients.
func TestUpgradeSafetyRefusesBreakingChanges(t *testing.T) {
	path := filepath.Join(released, "kudo.dev_instances.yaml")
	for _, tc := range []struct {
		name   string
		mutate func(*apiextensionsv1.CustomResourceDefinition)
		want   string
	}{{
		name: "a field removed",
		mutate: func(crd *apiextensionsv1.CustomResourceDefinition) {
			delete(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties, "planExecution")
		},
		want: "removal",
	}, {
		name: "a field made required",
		mutate: func(crd *apiextensionsv1.CustomResourceDefinition) {
			spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			spec.Required = append(spec.Required, "parameters")
			crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		},
		want: "required",
	}, {
		name:   "the scope changed",
		mutate: func(crd *apiextensionsv1.CustomResourceDefinition) { crd.Spec.Scope = apiextensionsv1.ClusterScoped },
		want:   "scope",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			broken := readCRD(t, path)
			tc.mutate(broken)
			results := upgradeSafety(t, readCRD(t, path), broken)
			if !results.HasFailures() {
				t.Fatal("the preflight lets it through")
			}
			if text := results.RenderPlainText(); !strings.Contains(strings.ToLower(text), tc.want) {
				t.Errorf("the preflight says\n%s\nwant it to name %q", text, tc.want)
			}
		})
	}
}
