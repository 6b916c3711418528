package ocipkg

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// The PEM types of the private keys cosign generate-key-pair writes,
// encrypted with their password.
const (
	sigstorePrivateKeyType = "ENCRYPTED SIGSTORE PRIVATE KEY"
	cosignPrivateKeyType   = "ENCRYPTED COSIGN PRIVATE KEY"
)

// Signer signs packages with a private key: a sign.Keypair of
// sigstore-go's over a key the signer holds, as cosign sign --key is.
type Signer struct {
	key     crypto.Signer
	details signature.AlgorithmDetails
	hint    []byte
}

// LoadSigner reads a private key in PEM: cosign's, encrypted with
// password, or an unencrypted PKCS #8, EC or RSA (PKCS #1) key.
func LoadSigner(data, password []byte) (*Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("not a PEM private key")
	}
	var parsed any
	var err error
	switch block.Type {
	case sigstorePrivateKeyType, cosignPrivateKeyType:
		der, decryptErr := encrypted.Decrypt(block.Bytes, password)
		if decryptErr != nil {
			return nil, fmt.Errorf("decrypting the %s: wrong password? (%w)", block.Type, decryptErr)
		}
		parsed, err = x509.ParsePKCS8PrivateKey(der)
	case "PRIVATE KEY":
		parsed, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		parsed, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		parsed, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("a PEM %q, where a private key is one of %q, %q, PRIVATE KEY, EC PRIVATE KEY, RSA PRIVATE KEY",
			block.Type, sigstorePrivateKeyType, cosignPrivateKeyType)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the %s: %w", block.Type, err)
	}
	key, ok := parsed.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T cannot sign", parsed)
	}
	details, err := signature.GetDefaultAlgorithmDetails(key.Public())
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	return &Signer{key: key, details: details, hint: []byte(base64.StdEncoding.EncodeToString(sum[:]))}, nil
}

// LoadPublicKey reads a public key in PEM (PKIX), as cosign.pub holds it.
func LoadPublicKey(data []byte) (crypto.PublicKey, error) {
	return cryptoutils.UnmarshalPEMToPublicKey(data)
}

// GetHashAlgorithm is the hash the signature is over.
func (s *Signer) GetHashAlgorithm() protocommon.HashAlgorithm { return s.details.GetProtoHashType() }

// GetSigningAlgorithm is the key's algorithm, with its hash.
func (s *Signer) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return s.details.GetSignatureAlgorithm()
}

// GetHint names the public key: the base64 of the SHA-256 of its PKIX
// encoding, as sigstore-go's and cosign's do.
func (s *Signer) GetHint() []byte { return s.hint }

// GetKeyAlgorithm is the key's type, as Fulcio names it.
func (s *Signer) GetKeyAlgorithm() string {
	switch s.details.GetKeyType() {
	case signature.ECDSA:
		return "ECDSA"
	case signature.RSA:
		return "RSA"
	case signature.ED25519:
		return "ED25519"
	}
	return ""
}

// GetPublicKey is the public half of the key.
func (s *Signer) GetPublicKey() crypto.PublicKey { return s.key.Public() }

// GetPublicKeyPem is the public key in PEM.
func (s *Signer) GetPublicKeyPem() (string, error) {
	pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(s.key.Public())
	return string(pemBytes), err
}

// SignData signs data: its digest, but with Ed25519, which signs the data.
func (s *Signer) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	hash := s.details.GetHashType()
	signed := data
	if hash != crypto.Hash(0) {
		h := hash.New()
		h.Write(data)
		signed = h.Sum(nil)
	}
	sig, err := s.key.Sign(rand.Reader, signed, hash)
	return sig, signed, err
}
