package initcmd

import (
	"context"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestDryRun(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := Run(context.Background(), nil, streams, &Options{DryRun: true, Output: "yaml", CRDOnly: true}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "kind: CustomResourceDefinition"); n != 3 {
		t.Errorf("--crd-only printed %d CRDs, want 3", n)
	}
	out.Reset()
	if err := Run(context.Background(), nil, streams, &Options{DryRun: true, Output: "yaml"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Deployment", "name: kudo-controller-manager", "kind: ValidatingWebhookConfiguration",
		"kind: Certificate", "kind: ClusterRole", "name: instances.kudo.dev"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("init --dry-run -o yaml lacks %q", want)
		}
	}
	if err := Run(context.Background(), nil, streams, &Options{DryRun: true}); err == nil {
		t.Error("--dry-run without -o yaml must be refused")
	}
}
