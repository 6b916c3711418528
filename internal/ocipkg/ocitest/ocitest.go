// Package ocitest makes what tests of packages in registries need, as
// net/http/httptest does for HTTP: a registry in the test's process, and
// keys to sign with.
package ocitest

import (
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
