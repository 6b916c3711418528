package ocipkg

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// withoutCTLogs is a Sigstore whose trusted root lists no CT log: the
// virtual one's certificates carry no SCT.
type withoutCTLogs struct{ *ca.VirtualSigstore }

func (withoutCTLogs) CTLogs() map[string]*root.TransparencyLog { return nil }

// The keyless path, against a Sigstore of its own: a certificate authority
// certifying identities and a transparency log. The registry's part is the
// keys' (sign_test.go).
func TestAKeylessAuthorityAcceptsTheIdentitiesItNamesOnly(t *testing.T) {
	virtual, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	sigstore := withoutCTLogs{virtual}
	sum := sha256.Sum256([]byte("a package's manifest"))
	payload, err := json.Marshal(statement{
		Type:          inTotoStatementType,
		Subject:       []subject{{Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}}},
		PredicateType: cosignSignPredicateType,
		Predicate:     map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	const issuer = "https://token.actions.example.com"
	signed, err := sigstore.Attest("https://git.example.com/team/zk/.ci/release@refs/heads/main", issuer, payload)
	if err != nil {
		t.Fatal(err)
	}
	artifact := verify.WithArtifactDigest("sha256", sum[:])
	for _, tt := range []struct {
		name     string
		identity Identity
		want     string // "" verifies
	}{
		{"exact", Identity{Issuer: issuer, Subject: "https://git.example.com/team/zk/.ci/release@refs/heads/main"}, ""},
		{"by regular expressions", Identity{IssuerRegExp: `https://token\.actions\.example\.com`, SubjectRegExp: `https://git\.example\.com/team/.*`}, ""},
		{"a regular expression matching a part", Identity{Issuer: issuer, SubjectRegExp: `https://git\.example\.com/team/`}, "no matching CertificateIdentity"},
		{"another subject", Identity{Issuer: issuer, Subject: "https://git.example.com/other/zk"}, "no matching CertificateIdentity"},
		{"another issuer", Identity{Issuer: "https://accounts.example.com", SubjectRegExp: ".*"}, "no matching CertificateIdentity"},
	} {
		a, err := keylessAuthority("ci", sigstore, []Identity{tt.identity})
		if err != nil {
			t.Fatal(err)
		}
		err = a.verifies(signed, artifact)
		if tt.want == "" && err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}

	other := sum
	other[0]++
	a, err := keylessAuthority("ci", sigstore, []Identity{{Issuer: issuer, SubjectRegExp: ".*"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.verifies(signed, verify.WithArtifactDigest("sha256", other[:])); err == nil {
		t.Error("a signature of another digest verified")
	}
	withCTLog, err := keylessAuthority("ci", virtual, []Identity{{Issuer: issuer, SubjectRegExp: ".*"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := withCTLog.verifies(signed, artifact); err == nil || !strings.Contains(err.Error(), "signed certificate timestamp") {
		t.Errorf("a certificate without the SCT of the root's CT log: %v", err)
	}
	if _, err := keylessAuthority("ci", sigstore, nil); err == nil {
		t.Error("a keyless authority with no identity was made")
	}
	if _, err := KeylessAuthority("ci", []byte(`{"mediaType": "nonsense"}`), []Identity{{Issuer: issuer, Subject: "s"}}); err == nil ||
		!strings.Contains(err.Error(), "reading the trusted root") {
		t.Errorf("KeylessAuthority of a bad root = %v", err)
	}
}
