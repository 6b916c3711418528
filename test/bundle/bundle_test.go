// Package bundle checks the committed OLM bundle with operator-framework/api's
// validators — the rules OperatorHub and `operator-sdk bundle validate` apply
// — so they run without the CLI.
package bundle

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

// knownWarnings are the validators' warnings the bundle keeps, each for a
// reason; any other warning fails the test.
var knownWarnings = map[string]string{
	// RBAC rules have no API version: the check flags any rule naming a
	// resource that once had a removed version (policy/v1beta1 PDBs, ...).
	"this bundle is using APIs which were deprecated and removed in v1.25": "false positive on version-less RBAC rules",
	// kudo-ng is an operator for operators: packages install CRDs.
	"CSV contains permissions to create CRD": "packages may ship CRDs, as in KUDO",
}

// kubernetesVersion is the newest release the bundle is checked against for
// removed APIs.
const kubernetesVersion = "1.34"

func TestBundleValidates(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(filepath.Join("..", "..", "bundle", "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	if bundle.CSV == nil || len(bundle.V1CRDs) != 5 {
		t.Fatalf("bundle: want a CSV and the 5 kudo.dev CRDs, got CSV %v and %d CRDs", bundle.CSV != nil, len(bundle.V1CRDs))
	}
	crds := make([]any, 0, len(bundle.V1CRDs))
	for _, crd := range bundle.V1CRDs {
		crds = append(crds, crd)
	}
	objects := make([]any, 0, len(bundle.Objects))
	for _, obj := range bundle.Objects {
		objects = append(objects, obj)
	}
	optional := map[string]string{"k8s-version": kubernetesVersion}

	for _, tc := range []struct {
		name      string
		validator interfaces.Validator
		objects   []any
	}{
		{"bundle", validation.BundleValidator, []any{bundle}},
		{"ClusterServiceVersion", validation.ClusterServiceVersionValidator, []any{bundle.CSV}},
		{"CustomResourceDefinition", validation.CustomResourceDefinitionValidator, crds},
		// OLM's limits on the objects it creates: a PodDisruptionBudget
		// that allows evictions, roles without escalation.
		{"objects", validation.ObjectValidator, objects},
		{"OperatorHub", validation.OperatorHubV2Validator, []any{bundle, optional}},
		{"standard capabilities", validation.StandardCapabilitiesValidator, []any{bundle}},
		{"standard categories", validation.StandardCategoriesValidator, []any{bundle}},
		{"good practices", validation.GoodPracticesValidator, []any{bundle}},
		{"deprecated APIs", validation.AlphaDeprecatedAPIsValidator, []any{bundle, optional}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := tc.validator.Validate(tc.objects...)
			if len(results) == 0 {
				t.Fatal("the validator checked nothing")
			}
			for _, result := range results {
				for _, e := range result.Errors {
					t.Errorf("%s: %s", result.Name, e)
				}
				for _, w := range result.Warnings {
					if !known(w) {
						t.Errorf("%s: %s", result.Name, w)
					}
				}
			}
		})
	}
}

func known(warning errors.Error) bool {
	for text := range knownWarnings {
		if strings.Contains(warning.Error(), text) {
			return true
		}
	}
	return false
}

// OLM runs the manager as config/default does: two replicas, and a
// PodDisruptionBudget that OLM creates from the bundle beside the CSV.
func TestBundleRunsTwoManagerReplicasWithTheirDisruptionBudget(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(filepath.Join("..", "..", "bundle", "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	deployments := bundle.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(deployments) != 1 {
		t.Fatalf("the CSV deploys %d Deployments, want kudo-controller-manager only", len(deployments))
	}
	if replicas := ptr.Deref(deployments[0].Spec.Replicas, 1); replicas != 2 {
		t.Errorf("the CSV's Deployment %s has %d replicas, want 2", deployments[0].Name, replicas)
	}
	podLabels := labels.Set(deployments[0].Spec.Template.Labels)
	for _, obj := range bundle.Objects {
		if obj.GetKind() != "PodDisruptionBudget" {
			continue
		}
		matchLabels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
		if len(matchLabels) > 0 && labels.SelectorFromSet(matchLabels).Matches(podLabels) {
			return
		}
		t.Errorf("PodDisruptionBudget %s selects %v, not the manager's pods %v", obj.GetName(), matchLabels, podLabels)
	}
	t.Error("the bundle has no PodDisruptionBudget for the manager's pods")
}
