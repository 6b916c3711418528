package action

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/ocipkg/ocitest"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/corpus"
)

func TestVerifyRefusesAPackageNoPolicyVerifies(t *testing.T) {
	host, c := ocitest.Registry(t, true, nil)
	ctx := context.Background()
	dir := filepath.Join(corpus.Examples(), "hello", "operator")
	fromDir, err := packages.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, fromDir, "oci://"+host+"/team/signed:0.1.0"); err != nil {
		t.Fatal(err)
	}
	signer, public := ocitest.Signer(t)
	other, err := packages.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	other.Params.Parameters[0].Description = "another package"
	if _, err := c.Push(ctx, other, "oci://"+host+"/team/unsigned:0.1.0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sign(ctx, "oci://"+host+"/team/signed:0.1.0", signer); err != nil {
		t.Fatal(err)
	}
	pull := func(ref string) *packages.Package {
		t.Helper()
		pulled, err := c.Pull(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		return pulled.Package
	}
	policy := &kudov1alpha1.TrustPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "team"},
		Spec: kudov1alpha1.TrustPolicySpec{
			Packages:    []kudov1alpha1.PackageMatch{{Prefix: host + "/team/"}},
			Authorities: []kudov1alpha1.Authority{{Name: "release", Key: &kudov1alpha1.KeyAuthority{PublicKey: public}}},
		},
	}
	catchAll := policy.DeepCopy()
	catchAll.Name, catchAll.Spec.Packages = "all", nil
	for _, tt := range []struct {
		name     string
		policies []*kudov1alpha1.TrustPolicy
		pkg      *packages.Package
		want     string
	}{
		{"signed", []*kudov1alpha1.TrustPolicy{policy}, pull("oci://" + host + "/team/signed:0.1.0"), ""},
		{"unsigned", []*kudov1alpha1.TrustPolicy{policy}, pull("oci://" + host + "/team/unsigned:0.1.0"), "TrustPolicy team: "},
		{"covered by none", nil, pull("oci://" + host + "/team/signed:0.1.0"), "no TrustPolicy covers package hello"},
		{"from a directory", []*kudov1alpha1.TrustPolicy{catchAll}, fromDir,
			"TrustPolicy all: package hello: it was installed from no OCI registry, so no signature can name it"},
	} {
		builder := fake.NewClientBuilder().WithScheme(clientutil.Scheme)
		for _, p := range tt.policies {
			builder = builder.WithObjects(p)
		}
		cluster := builder.Build()
		versions, err := PrepareVersions(ctx, cluster, "team", []*packages.Package{tt.pkg}, packages.VerifyOptions{}, false, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var out bytes.Buffer
		err = VerifySignatures(ctx, cluster, versions, resolve.Registry{PlainHTTP: true}, &out)
		if tt.want == "" {
			if err != nil || !strings.Contains(out.String(), "signed by release of TrustPolicy team") {
				t.Errorf("%s: %v, printed %q", tt.name, err, out.String())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
