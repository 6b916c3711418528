// Package ocitest makes what tests of packages in registries need, as
// net/http/httptest does for HTTP: a registry in the test's process, and
// keys to sign with.
package ocitest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/google/go-containerregistry/pkg/registry"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/kudo-ng/kudo/internal/ocipkg"
)

// T is what the helpers need of a test: *testing.T's, or Ginkgo's GinkgoT().
type T interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// Registry serves a registry over HTTP until the test ends, with or
// without the referrers API, each request through wrap if not nil; it
// returns the registry's host and a client of it.
func Registry(t T, referrers bool, wrap func(http.Handler) http.Handler) (string, *ocipkg.Client) {
	t.Helper()
	handler := registry.New(registry.WithReferrersSupport(referrers), registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		handler = wrap(handler)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), &ocipkg.Client{PlainHTTP: true, Credential: ocipkg.Anonymous}
}

// Key is a new P-256 key in PKCS #8 PEM.
func Key(t T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// Signer is the signer of a new key, and its public key in PEM.
func Signer(t T) (*ocipkg.Signer, string) {
	t.Helper()
	s, err := ocipkg.LoadSigner(Key(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	public, err := s.GetPublicKeyPem()
	if err != nil {
		t.Fatal(err)
	}
	return s, public
}

// PushChart pushes a Helm chart's tarball as `helm push` does to ref
// (oci://HOST/REPOSITORY:TAG) of a registry of Registry's, its layer's
// descriptor changed by edit if given, and returns the manifest's digest.
func PushChart(t T, ref string, tarball []byte, edit func(layer *ocispec.Descriptor)) string {
	t.Helper()
	ctx := context.Background()
	repo, err := remote.NewRepository(strings.TrimPrefix(ref, ocipkg.Scheme))
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	config, err := oras.PushBytes(ctx, repo, ocipkg.ChartConfigMediaType, []byte(`{"apiVersion":"v2","name":"chart","version":"0.1.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := oras.PushBytes(ctx, repo, ocipkg.ChartContentMediaType, tarball)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&layer)
	}
	manifest, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "",
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}, ConfigDescriptor: &config})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, manifest, repo.Reference.Reference); err != nil {
		t.Fatal(err)
	}
	return manifest.Digest.String()
}
