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

func TestDryRunWithASelfSignedCA(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	opts := &Options{DryRun: true, Output: "yaml", SelfSignedCA: true, Image: "kudo-ng.local/kudo:test", ImagePullPolicy: "Never"}
	if err := Run(context.Background(), nil, streams, opts); err != nil {
		t.Fatal(err)
	}
	printed := out.String()
	for _, want := range []string{"name: webhook-server-cert", "type: kubernetes.io/tls", "caBundle: ", "image: kudo-ng.local/kudo:test",
		"imagePullPolicy: Never"} {
		if !strings.Contains(printed, want) {
			t.Errorf("init --unsafe-self-signed-webhook-ca --dry-run lacks %q", want)
		}
	}
	for _, unwanted := range []string{"kind: Certificate", "kind: Issuer", "cert-manager.io/inject-ca-from"} {
		if strings.Contains(printed, unwanted) {
			t.Errorf("init --unsafe-self-signed-webhook-ca --dry-run prints %q", unwanted)
		}
	}
}

func TestAnUnknownPullPolicyIsRefused(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	err := Run(context.Background(), nil, streams, &Options{DryRun: true, Output: "yaml", ImagePullPolicy: "Sometimes"})
	if err == nil || !strings.Contains(err.Error(), `--kudo-image-pull-policy "Sometimes"`) {
		t.Errorf("err = %v, want one naming --kudo-image-pull-policy", err)
	}
}
