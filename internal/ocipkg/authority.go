package ocipkg

import (
	"crypto"
	"fmt"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Authority is one who may sign packages: the holder of a key, or the
// identities a Sigstore trusted root certifies (keyless).
type Authority struct {
	// Name is what Verified says of the authority that signed.
	Name     string
	verifier *verify.Verifier
	// identity is what a signature's signer must be: the key, or one of
	// the certified identities.
	identity []verify.PolicyOption
}

// KeyAuthority is the holder of key, verified with no transparency log nor
// timestamp, as cosign verify --key --insecure-ignore-tlog is: a key does
// not expire as a certificate does.
func KeyAuthority(name string, key crypto.PublicKey) (Authority, error) {
	loaded, err := signature.LoadDefaultVerifier(key)
	if err != nil {
		return Authority{}, fmt.Errorf("authority %s: %w", name, err)
	}
	trusted := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(loaded, time.Time{}, time.Time{}), nil
	})
	v, err := verify.NewVerifier(trusted, verify.WithNoObserverTimestamps())
	if err != nil {
		return Authority{}, fmt.Errorf("authority %s: %w", name, err)
	}
	return Authority{Name: name, verifier: v, identity: []verify.PolicyOption{verify.WithKey()}}, nil
}

// Identity is a certified signer: its OIDC issuer and subject, each exact
// or a regular expression that must match it whole (cosign's match
// anywhere, so that https://github.com/team/ also accepted
// https://evil.example.com/?https://github.com/team/).
type Identity struct {
	Issuer, IssuerRegExp, Subject, SubjectRegExp string
}

// KeylessAuthority is whom trustedRoot (a Sigstore trusted_root.json)
// certifies as one of identities. As cosign verify does by default, a
// signature needs an entry in one of the root's transparency logs, whose
// time the certificate was valid at, and its certificate's SCT when the
// root lists a CT log (a private Sigstore may have none).
func KeylessAuthority(name string, trustedRoot []byte, identities []Identity) (Authority, error) {
	trusted, err := root.NewTrustedRootFromJSON(trustedRoot)
	if err != nil {
		return Authority{}, fmt.Errorf("authority %s: reading the trusted root: %w", name, err)
	}
	return keylessAuthority(name, trusted, identities)
}

func keylessAuthority(name string, trusted root.TrustedMaterial, identities []Identity) (Authority, error) {
	options := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1)}
	if len(trusted.CTLogs()) > 0 {
		options = append(options, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(trusted, options...)
	if err != nil {
		return Authority{}, fmt.Errorf("authority %s: %w", name, err)
	}
	a := Authority{Name: name, verifier: v}
	for k, id := range identities {
		certified, err := verify.NewShortCertificateIdentity(id.Issuer, whole(id.IssuerRegExp), id.Subject, whole(id.SubjectRegExp))
		if err != nil {
			return Authority{}, fmt.Errorf("authority %s: identity %d: %w", name, k+1, err)
		}
		a.identity = append(a.identity, verify.WithCertificateIdentity(certified))
	}
	if len(a.identity) == 0 {
		return Authority{}, fmt.Errorf("authority %s: a keyless authority needs at least one identity", name)
	}
	return a, nil
}

// whole anchors a regular expression at both ends; "" stays "" (none).
func whole(re string) string {
	if re == "" {
		return ""
	}
	return "^(?:" + re + ")$"
}

// verifies checks that the authority made the signature of entity, over
// a statement of the artifact's, as cosign sign states it.
func (a Authority) verifies(entity verify.SignedEntity, artifact verify.ArtifactPolicyOption) error {
	result, err := a.verifier.Verify(entity, verify.NewPolicy(artifact, a.identity...))
	if err == nil && result.Statement != nil && result.Statement.GetPredicateType() != cosignSignPredicateType {
		err = fmt.Errorf("it states %q, not %q", result.Statement.GetPredicateType(), cosignSignPredicateType)
	}
	return err
}
