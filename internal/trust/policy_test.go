package trust

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"oras.land/oras-go/v2/registry/remote/auth"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/ocipkg/ocitest"
)

func TestCoveringPoliciesAreSortedByNameAndOneMatchingPrefixIsEnough(t *testing.T) {
	policies := []kudov1alpha1.TrustPolicy{
		policy("zeta", kudov1alpha1.Audit),
		policy("mid", kudov1alpha1.Enforce, "other.example.com/", "registry.example.com/team/"),
		policy("alpha", kudov1alpha1.Enforce, "registry.example.com/"),
		policy("beta", kudov1alpha1.Enforce, "registry.example.com/other/"),
	}
	if got := names(Covering(policies, fromOrigin("oci://registry.example.com/team/zk@sha256:0123"))); got != "alpha,mid,zeta" {
		t.Errorf("Covering = %s, want alpha,mid,zeta", got)
	}
	if got := names(Covering(policies, fromOrigin(""))); got != "zeta" {
		t.Errorf("Covering of an OperatorVersion from no registry = %s, want only the policy naming no packages", got)
	}
}

func TestAPolicyEnforcesUnlessItAudits(t *testing.T) {
	for mode, want := range map[kudov1alpha1.TrustMode]bool{kudov1alpha1.Enforce: true, "": true, kudov1alpha1.Audit: false} {
		p := policy("team", mode)
		if got := Enforces(&p); got != want {
			t.Errorf("Enforces(mode %q) = %t, want %t", mode, got, want)
		}
	}
}

func TestARefusalNamesEveryEnforcingPolicyAndWhyTheVerificationFailed(t *testing.T) {
	policies := []kudov1alpha1.TrustPolicy{
		policy("b-audit", kudov1alpha1.Audit), policy("c-team", kudov1alpha1.Enforce), policy("a-all", kudov1alpha1.Enforce),
		policy("elsewhere", kudov1alpha1.Enforce, "other.example.com/"),
	}
	judged := func(conditions ...metav1.Condition) *kudov1beta1.OperatorVersion {
		ov := fromOrigin("oci://registry.example.com/team/zk@sha256:0123")
		ov.Status.Conditions = conditions
		return ov
	}
	verified := func(status metav1.ConditionStatus, generation int64) metav1.Condition {
		return metav1.Condition{Type: VerifiedCondition, Status: status, ObservedGeneration: generation, Message: "TrustPolicy a-all: no signature"}
	}
	for _, tt := range []struct {
		name    string
		ov      *kudov1beta1.OperatorVersion
		pending bool
		want    string // "" runs
	}{
		{"never judged", judged(), true,
			"OperatorVersion ns/hello-0.1.0 is not verified yet, and TrustPolicy a-all, c-team enforces signatures on it"},
		{"another condition only", judged(metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 2}), true,
			"OperatorVersion ns/hello-0.1.0 is not verified yet, and TrustPolicy a-all, c-team enforces signatures on it"},
		{"verified a newer generation", judged(verified(metav1.ConditionTrue, 3)), true,
			"OperatorVersion ns/hello-0.1.0 is not verified yet, and TrustPolicy a-all, c-team enforces signatures on it"},
		{"unverified", judged(verified(metav1.ConditionFalse, 2)), false,
			"OperatorVersion ns/hello-0.1.0 is not verified, and TrustPolicy a-all, c-team enforces signatures on it: TrustPolicy a-all: no signature"},
		{"unknown", judged(verified(metav1.ConditionUnknown, 2)), false,
			"OperatorVersion ns/hello-0.1.0 is not verified, and TrustPolicy a-all, c-team enforces signatures on it: TrustPolicy a-all: no signature"},
		{"verified", judged(verified(metav1.ConditionTrue, 2)), false, ""},
	} {
		refused := Refusal(policies, tt.ov)
		switch {
		case tt.want == "" && refused != nil:
			t.Errorf("%s: refused: %v", tt.name, refused)
		case tt.want != "" && refused == nil:
			t.Errorf("%s: runs, want refused: %s", tt.name, tt.want)
		case tt.want != "" && (refused.Pending != tt.pending || refused.Error() != tt.want):
			t.Errorf("%s: refused (pending %t): %s\nwant (pending %t): %s", tt.name, refused.Pending, refused, tt.pending, tt.want)
		}
	}
}

func TestTheVerifiedConditionNamesEachSignerOrEachPolicyThatRefused(t *testing.T) {
	signedBy := func(policy, authority string) Verdict {
		return Verdict{Policy: policy, Verified: &ocipkg.Verified{
			Ref: "oci://registry.example.com/team/zk@sha256:0123", Digest: "sha256:0123", Signature: "sha256:4567", Authority: authority}}
	}
	refused := func(policy, why string) Verdict { return Verdict{Policy: policy, Err: errors.New(why)} }
	for _, tt := range []struct {
		name     string
		verdicts []Verdict
		want     metav1.Condition
	}{
		{"every policy verified", []Verdict{signedBy("team", "release"), signedBy("ci", "github")}, metav1.Condition{
			Type: VerifiedCondition, Status: metav1.ConditionTrue, Reason: SignedReason, ObservedGeneration: 7,
			Message: "signed by release of TrustPolicy team (oci://registry.example.com/team/zk@sha256:0123, signature sha256:4567); " +
				"signed by github of TrustPolicy ci (oci://registry.example.com/team/zk@sha256:0123, signature sha256:4567)"}},
		{"some refused", []Verdict{refused("a", "no signature"), signedBy("team", "release"), refused("b", "not covered")}, metav1.Condition{
			Type: VerifiedCondition, Status: metav1.ConditionFalse, Reason: UnsignedReason, ObservedGeneration: 7,
			Message: "TrustPolicy a: no signature; TrustPolicy b: not covered"}},
	} {
		if got := Condition(tt.verdicts, 7); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func TestEachKindOfAuthorityLoadsAndABrokenOneSaysWhichAndWhy(t *testing.T) {
	trustedRoot, err := os.ReadFile(filepath.Join("testdata", "trusted-root-public-good.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, publicKey := ocitest.Signer(t)
	key := func(name, pem string) kudov1alpha1.Authority {
		return kudov1alpha1.Authority{Name: name, Key: &kudov1alpha1.KeyAuthority{PublicKey: pem}}
	}
	keyless := func(name, root string, identities ...kudov1alpha1.Identity) kudov1alpha1.Authority {
		return kudov1alpha1.Authority{Name: name, Keyless: &kudov1alpha1.KeylessAuthority{TrustedRoot: root, Identities: identities}}
	}
	ci := kudov1alpha1.Identity{Issuer: "https://token.actions.githubusercontent.com", SubjectRegExp: `https://github\.com/team/.*`}
	for _, tt := range []struct {
		name        string
		authorities []kudov1alpha1.Authority
		want        string // the names loaded, or the error's start
	}{
		{"a key and a keyless authority", []kudov1alpha1.Authority{key("release", publicKey), keyless("ci", string(trustedRoot), ci)}, "release,ci"},
		{"neither", []kudov1alpha1.Authority{key("release", publicKey), {Name: "empty"}}, "spec.authorities[empty]: neither a key nor keyless"},
		{"a key that is no PEM", []kudov1alpha1.Authority{key("release", "not a key")}, "spec.authorities[release].key.publicKey: "},
		{"a keyless authority of no identity", []kudov1alpha1.Authority{keyless("ci", string(trustedRoot))},
			"spec.authorities[ci]: authority ci: a keyless authority needs at least one identity"},
		{"an identity that is no regular expression",
			[]kudov1alpha1.Authority{keyless("ci", string(trustedRoot), ci, kudov1alpha1.Identity{Issuer: ci.Issuer, SubjectRegExp: "("})},
			"spec.authorities[ci]: authority ci: identity 2: "},
		{"a trusted root that is no JSON", []kudov1alpha1.Authority{keyless("ci", "{", ci)},
			"spec.authorities[ci]: authority ci: reading the trusted root: "},
	} {
		p := policy("team", kudov1alpha1.Enforce)
		p.Spec.Authorities = tt.authorities
		authorities, err := Authorities(&p)
		if strings.HasPrefix(tt.want, "spec.") {
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("%s: Authorities = %v, want an error starting %q", tt.name, err, tt.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Authorities = %v, want %s", tt.name, err, tt.want)
			continue
		}
		loaded := make([]string, len(authorities))
		for k, a := range authorities {
			loaded[k] = a.Name
		}
		if got := strings.Join(loaded, ","); got != tt.want {
			t.Errorf("%s: Authorities = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestTheManagerRefusesToDialAnInternalAddressForAPolicyNamingNoPackages(t *testing.T) {
	for _, tt := range []struct{ address, want string }{
		{"8.8.8.8:443", ""},
		{"[2001:4860:4860::8888]:443", ""},
		{"10.96.0.1:5000", "10.96.0.1 is an internal address, and TrustPolicy team names no packages: the manager reaches a registry " +
			"a package names only at an external address (spec.packages names registries, or spec.registry.allowInternalAddresses allows them)"},
		{"[fd00::1]:443", "fd00::1 is an internal address, and TrustPolicy team names no packages: "},
		{"169.254.169.254:80", "169.254.169.254 is an internal address, and TrustPolicy team names no packages: "},
		{"10.96.0.1", "address 10.96.0.1: missing port in address"},
	} {
		err := externalOnly("team", tt.address)
		if (tt.want == "" && err != nil) || (tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want))) {
			t.Errorf("externalOnly(%s) = %v, want %q", tt.address, err, tt.want)
		}
	}
}

func TestAPullSecretGivesItsCredentialsToItsRegistryOnly(t *testing.T) {
	config := fmt.Sprintf(`{"auths":{"registry.example.com":{"auth":%q}}}`, base64.StdEncoding.EncodeToString([]byte("kudo:secret")))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kudo-system", Name: "registry"},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(config)}}
	login, err := PullSecretCredentials(secret)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for host, want := range map[string]auth.Credential{
		"registry.example.com": {Username: "kudo", Password: "secret"},
		"other.example.com":    auth.EmptyCredential,
	} {
		if got, err := login(ctx, host); err != nil || got != want {
			t.Errorf("credentials of %s = %+v, %v; want %+v", host, got, err, want)
		}
	}

	secret.Data = nil
	if _, err := PullSecretCredentials(secret); err == nil ||
		!strings.HasPrefix(err.Error(), "spec.registry.authentication.pullSecretRef: Secret kudo-system/registry: .dockerconfigjson: ") {
		t.Errorf("a Secret with no .dockerconfigjson: %v, want it refused", err)
	}
}
