package ocipkg

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
)

// TestEachKindOfPrivateKeySignsWhatItsPublicKeyVerifies: cosign's
// encrypted keys, and unencrypted PKCS #8, EC and RSA ones, of each
// algorithm Sigstore knows.
func TestEachKindOfPrivateKeySignsWhatItsPublicKeyVerifies(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPKCS8, err := x509.MarshalPKCS8PrivateKey(edKey)
	if err != nil {
		t.Fatal(err)
	}
	_, p256 := newKey(t)
	sealed, err := encrypted.Encrypt(p256, []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	c, host := newRegistry(t, true, nil)
	ctx := context.Background()
	ref := Scheme + host + "/packages/hello:0.1.0"
	pushed, err := c.Push(ctx, readPackage(t, helloDir), ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		block     pem.Block
		algorithm string
		signing   protocommon.PublicKeyDetails
	}{
		{"cosign's", pem.Block{Type: cosignPrivateKeyType, Bytes: sealed}, "ECDSA", protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256},
		{"EC P-384", pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}, "ECDSA", protocommon.PublicKeyDetails_PKIX_ECDSA_P384_SHA_384},
		{"RSA", pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}, "RSA",
			protocommon.PublicKeyDetails_PKIX_RSA_PKCS1V15_2048_SHA256},
		{"Ed25519", pem.Block{Type: "PRIVATE KEY", Bytes: edPKCS8}, "ED25519", protocommon.PublicKeyDetails_PKIX_ED25519},
	} {
		s, err := LoadSigner(pem.EncodeToMemory(&tt.block), []byte("secret"))
		if err != nil {
			t.Errorf("%s: LoadSigner: %v", tt.name, err)
			continue
		}
		if s.GetKeyAlgorithm() != tt.algorithm || s.GetSigningAlgorithm() != tt.signing {
			t.Errorf("%s: a %s key signing with %s, want %s with %s", tt.name, s.GetKeyAlgorithm(), s.GetSigningAlgorithm(), tt.algorithm, tt.signing)
		}
		signed, err := c.Sign(ctx, ref, s)
		if err != nil {
			t.Errorf("%s: Sign: %v", tt.name, err)
			continue
		}
		// The authority of the key as a policy holds it: its PEM.
		public, err := s.GetPublicKeyPem()
		if err != nil {
			t.Fatal(err)
		}
		key, err := LoadPublicKey([]byte(public))
		if err != nil {
			t.Fatal(err)
		}
		authority, err := KeyAuthority(tt.name, key)
		if err != nil {
			t.Errorf("%s: KeyAuthority: %v", tt.name, err)
			continue
		}
		verified, err := c.Verify(ctx, ref, []Authority{authority})
		if err != nil || verified.Authority != tt.name || verified.Digest != pushed.Digest || verified.Signature != signed.Signature {
			t.Errorf("%s: Verify = %+v, %v; want %s signed by %s in %s", tt.name, verified, err, pushed.Digest, tt.name, signed.Signature)
		}
	}
}

func TestLoadSignerSaysWhyAKeyCannotSign(t *testing.T) {
	_, x25519, err := func() (*ecdh.PrivateKey, []byte, error) {
		k, err := ecdh.X25519().GenerateKey(rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		return k, der, err
	}()
	if err != nil {
		t.Fatal(err)
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	encode := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	for _, tt := range []struct {
		name string
		data []byte
		want string // the error's start
	}{
		{"no PEM", []byte("-----BEGIN nothing"), "not a PEM private key"},
		{"a certificate", encode("CERTIFICATE", []byte{1}),
			`a PEM "CERTIFICATE", where a private key is one of "ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY", ` +
				"PRIVATE KEY, EC PRIVATE KEY, RSA PRIVATE KEY"},
		{"a PKCS #8 key that does not parse", encode("PRIVATE KEY", []byte{1}), "reading the PRIVATE KEY: "},
		{"an EC key that does not parse", encode("EC PRIVATE KEY", []byte{1}), "reading the EC PRIVATE KEY: "},
		{"an RSA key that does not parse", encode("RSA PRIVATE KEY", []byte{1}), "reading the RSA PRIVATE KEY: "},
		{"a cosign key that is not encrypted", encode(cosignPrivateKeyType, []byte("{}")),
			"decrypting the ENCRYPTED COSIGN PRIVATE KEY: wrong password? ("},
		{"an X25519 key, which only agrees keys", encode("PRIVATE KEY", x25519), "a *ecdh.PrivateKey cannot sign"},
		{"an RSA key of 1024 bits", encode("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(small)), "unsupported public key type"},
	} {
		if _, err := LoadSigner(tt.data, []byte("secret")); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: LoadSigner = %v, want an error starting %q", tt.name, err, tt.want)
		}
	}
}

func TestAnAuthorityIsAPublicKeySigstoreKnows(t *testing.T) {
	if _, err := LoadPublicKey([]byte("not a key")); err == nil {
		t.Error("LoadPublicKey of no PEM: no error")
	}
	x25519, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := KeyAuthority("release", x25519.PublicKey()); err == nil || !strings.HasPrefix(err.Error(), "authority release: ") {
		t.Errorf("KeyAuthority of an X25519 key = %v, want it refused, naming the authority", err)
	}
}
