// Package bundle checks the committed OLM bundle with operator-framework/api's
// validators — the rules OperatorHub and `operator-sdk bundle validate` apply
// — so they run without the CLI.
package bundle

import (
	"path/filepath"
	"strings"
	"testing"

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
	if bundle.CSV == nil || len(bundle.V1CRDs) != 3 {
		t.Fatalf("bundle: want a CSV and the 3 kudo.dev CRDs, got CSV %v and %d CRDs", bundle.CSV != nil, len(bundle.V1CRDs))
	}
	crds := make([]any, 0, len(bundle.V1CRDs))
	for _, crd := range bundle.V1CRDs {
		crds = append(crds, crd)
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
