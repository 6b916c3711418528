package ocipkg

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	"oras.land/oras-go/v2/content"
)

// newKey is a new P-256 key, and its PKCS #8 encoding.
func newKey(t *testing.T) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}

// newSigner is a signer of a new P-256 key, and the authority of its
// public key, named name.
func newSigner(t *testing.T, name string) (*Signer, Authority) {
	t.Helper()
	key, der := newKey(t)
	s, err := LoadSigner(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := KeyAuthority(name, key.Public())
	if err != nil {
		t.Fatal(err)
	}
	return s, a
}

func TestASignedPackageVerifiesWithItsKeyOnly(t *testing.T) {
	for _, referrers := range []bool{true, false} {
		c, host := newRegistry(t, referrers, nil)
		ctx := context.Background()
		ref := Scheme + host + "/packages/hello:0.1.0"
		pushed, err := c.Push(ctx, readPackage(t, helloDir), ref)
		if err != nil {
			t.Fatal(err)
		}
		signer, key := newSigner(t, "key")
		_, other := newSigner(t, "other")

		if _, err := c.Verify(ctx, ref, []Authority{key}); err == nil || !strings.Contains(err.Error(), "is not signed") {
			t.Errorf("referrers API %t: Verify of an unsigned package = %v, want it not signed", referrers, err)
		}
		signed, err := c.Sign(ctx, ref, signer)
		if err != nil {
			t.Fatalf("referrers API %t: Sign: %v", referrers, err)
		}
		if signed.Digest != pushed.Digest {
			t.Errorf("signed %s, pushed %s", signed.Digest, pushed.Digest)
		}
		verified, err := c.Verify(ctx, ref, []Authority{other, key})
		if err != nil {
			t.Fatalf("referrers API %t: Verify: %v", referrers, err)
		}
		if verified.Digest != pushed.Digest || verified.Signature != signed.Signature || verified.Authority != "key" {
			t.Errorf("Verify = %+v, want %s signed by %s by key", verified, pushed.Digest, signed.Signature)
		}
		_, err = c.Verify(ctx, ref, []Authority{other})
		if err == nil || !strings.Contains(err.Error(), "none of its 1 signatures verifies as made by other") {
			t.Errorf("Verify with another key = %v, want refused", err)
		}
	}
}

// signedHello pushes the hello package to a registry with the referrers
// API and signs it: the client, the registry's host, the reference, the
// signature, and the key that verifies it.
func signedHello(t *testing.T) (*Client, string, string, *Signed, Authority) {
	t.Helper()
	c, host := newRegistry(t, true, nil)
	ref := Scheme + host + "/packages/hello:0.1.0"
	if _, err := c.Push(context.Background(), readPackage(t, helloDir), ref); err != nil {
		t.Fatal(err)
	}
	signer, key := newSigner(t, "key")
	signed, err := c.Sign(context.Background(), ref, signer)
	if err != nil {
		t.Fatal(err)
	}
	return c, host, ref, signed, key
}

func TestATagMovedToAnotherPackageIsNotSignedByTheFirstsSignature(t *testing.T) {
	c, _, ref, _, key := signedHello(t)
	ctx := context.Background()
	moved, err := c.Push(ctx, readPackage(t, widgetDir), ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Verify(ctx, ref, []Authority{key}); err == nil || !strings.Contains(err.Error(), moved.Digest) {
		t.Errorf("Verify of the moved tag = %v, want the new package (%s) refused", err, moved.Digest)
	}
}

func TestASignatureOfAnotherPackageOrTamperedWithIsRefused(t *testing.T) {
	c, host, helloRef, signed, key := signedHello(t)
	ctx := context.Background()
	repo, _, err := c.repository(helloRef)
	if err != nil {
		t.Fatal(err)
	}
	_, manifest, err := fetchManifest(ctx, repo, signed.Signature)
	if err != nil {
		t.Fatal(err)
	}
	helloBundle, err := content.FetchAll(ctx, repo, manifest.Layers[0])
	if err != nil {
		t.Fatal(err)
	}
	widgetRef := Scheme + host + "/packages/hello:widget"
	widget, err := c.Push(ctx, readPackage(t, widgetDir), widgetRef)
	if err != nil {
		t.Fatal(err)
	}
	widgetDesc, err := repo.Resolve(ctx, widget.Digest)
	if err != nil {
		t.Fatal(err)
	}

	// hello's signature, copied to widget: it states hello's digest.
	if _, err := pushSignature(ctx, repo, widgetDesc, helloBundle); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Verify(ctx, widgetRef, []Authority{key}); err == nil {
		t.Error("Verify accepted another package's signature")
	}

	// hello's signature, its statement changed to name widget's digest.
	var b map[string]any
	if err := json.Unmarshal(helloBundle, &b); err != nil {
		t.Fatal(err)
	}
	envelope := b["dsseEnvelope"].(map[string]any)
	payload, err := base64.StdEncoding.DecodeString(envelope["payload"].(string))
	if err != nil {
		t.Fatal(err)
	}
	hello := strings.TrimPrefix(signed.Digest, "sha256:")
	payload = bytes.ReplaceAll(payload, []byte(hello), []byte(strings.TrimPrefix(widget.Digest, "sha256:")))
	envelope["payload"] = base64.StdEncoding.EncodeToString(payload)
	tampered, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pushSignature(ctx, repo, widgetDesc, tampered); err != nil {
		t.Fatal(err)
	}
	_, err = c.Verify(ctx, widgetRef, []Authority{key})
	if err == nil || !strings.Contains(err.Error(), "none of its 2 signatures verifies") {
		t.Errorf("Verify = %v, want both signatures refused", err)
	}
}

func TestCosignsEncryptedKeyIsReadWithItsPassword(t *testing.T) {
	key, der := newKey(t)
	sealed, err := encrypted.Encrypt(der, []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: sigstorePrivateKeyType, Bytes: sealed})
	if _, err := LoadSigner(pemBytes, []byte("wrong")); err == nil || !strings.Contains(err.Error(), "wrong password") {
		t.Errorf("LoadSigner with the wrong password = %v", err)
	}
	s, err := LoadSigner(pemBytes, []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	if !key.PublicKey.Equal(s.GetPublicKey()) {
		t.Error("the signer's public key is not the key's")
	}
}
