// Package trust applies the cluster's TrustPolicies to OperatorVersions:
// which policies cover one, whether a registry says it was signed by one
// of a policy's authorities, and whether it may run.
package trust

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/packages"
)

// VerifiedCondition (kudo-ng) on an OperatorVersion says whether the
// TrustPolicies covering it verified its package, and who signed it.
const VerifiedCondition = "Verified"

// Reasons of the Verified condition.
const (
	SignedReason   = "Signed"
	UnsignedReason = "Unverified"
)

// Covering are the policies that cover the package of ov, sorted by name.
func Covering(policies []kudov1alpha1.TrustPolicy, ov *kudov1beta1.OperatorVersion) []kudov1alpha1.TrustPolicy {
	origin := strings.TrimPrefix(ov.Annotations[kudov1beta1.PackageDigestAnnotation], ocipkg.Scheme)
	var covering []kudov1alpha1.TrustPolicy
	for _, p := range policies {
		if covers(&p, origin) {
			covering = append(covering, p)
		}
	}
	sort.Slice(covering, func(a, b int) bool { return covering[a].Name < covering[b].Name })
	return covering
}

func covers(p *kudov1alpha1.TrustPolicy, origin string) bool {
	if len(p.Spec.Packages) == 0 {
		return true
	}
	for _, m := range p.Spec.Packages {
		if origin != "" && strings.HasPrefix(origin, m.Prefix) {
			return true
		}
	}
	return false
}

// Enforces tells whether p refuses what it does not verify.
func Enforces(p *kudov1alpha1.TrustPolicy) bool { return p.Spec.Mode != kudov1alpha1.Audit }

// Refused is why an OperatorVersion may not run.
type Refused struct {
	// Pending: its policies have not judged its current generation yet.
	Pending bool
	message string
}

func (r *Refused) Error() string { return r.message }

// Refusal is why ov may not run under policies, or nil when it may: some
// policy that enforces covers it, and its Verified condition, for its
// current generation, is not True. Templates are rendered and tasks run
// only once it is nil.
func Refusal(policies []kudov1alpha1.TrustPolicy, ov *kudov1beta1.OperatorVersion) *Refused {
	var enforcing []string
	for _, p := range Covering(policies, ov) {
		if Enforces(&p) {
			enforcing = append(enforcing, p.Name)
		}
	}
	if len(enforcing) == 0 {
		return nil
	}
	c := apimeta.FindStatusCondition(ov.Status.Conditions, VerifiedCondition)
	switch {
	case c == nil || c.ObservedGeneration != ov.Generation:
		return &Refused{Pending: true, message: fmt.Sprintf(
			"OperatorVersion %s/%s is not verified yet, and TrustPolicy %s enforces signatures on it",
			ov.Namespace, ov.Name, strings.Join(enforcing, ", "))}
	case c.Status != metav1.ConditionTrue:
		return &Refused{message: fmt.Sprintf("OperatorVersion %s/%s is not verified, and TrustPolicy %s enforces signatures on it: %s",
			ov.Namespace, ov.Name, strings.Join(enforcing, ", "), c.Message)}
	}
	return nil
}

// Authorities are the authorities of a policy, for ocipkg's Verify.
func Authorities(p *kudov1alpha1.TrustPolicy) ([]ocipkg.Authority, error) {
	authorities := make([]ocipkg.Authority, 0, len(p.Spec.Authorities))
	for _, a := range p.Spec.Authorities {
		var authority ocipkg.Authority
		var err error
		switch {
		case a.Key != nil:
			key, keyErr := ocipkg.LoadPublicKey([]byte(a.Key.PublicKey))
			if keyErr != nil {
				return nil, fmt.Errorf("spec.authorities[%s].key.publicKey: %w", a.Name, keyErr)
			}
			authority, err = ocipkg.KeyAuthority(a.Name, key)
		case a.Keyless != nil:
			identities := make([]ocipkg.Identity, len(a.Keyless.Identities))
			for k, id := range a.Keyless.Identities {
				identities[k] = ocipkg.Identity(id)
			}
			authority, err = ocipkg.KeylessAuthority(a.Name, []byte(a.Keyless.TrustedRoot), identities)
		default:
			err = errors.New("neither a key nor keyless")
		}
		if err != nil {
			return nil, fmt.Errorf("spec.authorities[%s]: %w", a.Name, err)
		}
		authorities = append(authorities, authority)
	}
	return authorities, nil
}

// Timeout bounds each request the manager makes to a registry, and
// MaxPackageTime a whole verification of one policy.
const (
	Timeout        = 30 * time.Second
	MaxPackageTime = 2 * time.Minute
)

// Client is how the manager reaches the registries of p's packages, with
// login (nil: anonymously).
func Client(p *kudov1alpha1.TrustPolicy, login auth.CredentialFunc) (*ocipkg.Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.ResponseHeaderTimeout = Timeout
	if p.Spec.Registry.CABundle != "" {
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM([]byte(p.Spec.Registry.CABundle)) {
			return nil, errors.New("spec.registry.caBundle: no PEM certificate in it")
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	if len(p.Spec.Packages) == 0 && !p.Spec.Registry.AllowInternalAddresses {
		// The registry is the one a package names: the address each
		// connection reaches is checked, after DNS, and no proxy hides it.
		transport.Proxy = nil
		dialer := &net.Dialer{Timeout: Timeout, KeepAlive: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
			return externalOnly(p.Name, address)
		}}
		transport.DialContext = dialer.DialContext
	}
	if login == nil {
		login = ocipkg.Anonymous
	}
	return &ocipkg.Client{
		PlainHTTP:  p.Spec.Registry.PlainHTTP,
		HTTPClient: &http.Client{Transport: transport, Timeout: Timeout},
		Credential: login,
	}, nil
}

// sharedAddresses are the carrier-grade NAT range, which clusters use for
// pods and services too.
var sharedAddresses = netip.MustParsePrefix("100.64.0.0/10")

// Internal says whether an address is where a cluster's own pods, services
// or nodes may be: loopback, private, link-local, shared, unspecified or
// multicast.
func Internal(addr netip.Addr) bool {
	addr = addr.Unmap()
	return !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() || sharedAddresses.Contains(addr)
}

// externalOnly refuses a connection of the policy's to an internal address.
func externalOnly(policy, address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	if Internal(addr) {
		return fmt.Errorf("%s is an internal address, and TrustPolicy %s names no packages: the manager reaches a registry a package "+
			"names only at an external address (spec.packages names registries, or spec.registry.allowInternalAddresses allows them)",
			host, policy)
	}
	return nil
}

// Verdict is what a policy says of an OperatorVersion.
type Verdict struct {
	Policy string
	// Verified is the signature that verified, nil when none did.
	Verified *ocipkg.Verified
	// Err says why none did.
	Err error
}

// Credentials are those the manager logs in to a policy's registries
// with; nil: anonymously.
type Credentials func(ctx context.Context, p *kudov1alpha1.TrustPolicy) (auth.CredentialFunc, error)

// Verify asks the registry, logged in as logins says for each policy, whether
// the package of ov was signed by one of the authorities of each policy,
// and whether ov is that package: its spec is the one the signed package
// converts to, so that no one can name a signed digest on an
// OperatorVersion of other code.
func Verify(ctx context.Context, ov *kudov1beta1.OperatorVersion, policies []kudov1alpha1.TrustPolicy,
	logins Credentials) []Verdict {
	verdicts := make([]Verdict, len(policies))
	for k := range policies {
		verdicts[k] = verifyOne(ctx, ov, &policies[k], logins)
	}
	return verdicts
}

func verifyOne(ctx context.Context, ov *kudov1beta1.OperatorVersion, p *kudov1alpha1.TrustPolicy, logins Credentials) Verdict {
	ctx, cancel := context.WithTimeout(ctx, MaxPackageTime)
	defer cancel()
	verified, err := VerifyWith(ctx, ov, p, func() (*ocipkg.Client, error) {
		var login auth.CredentialFunc
		if logins != nil {
			var err error
			if login, err = logins(ctx, p); err != nil {
				return nil, err
			}
		}
		return Client(p, login)
	})
	return Verdict{Policy: p.Name, Verified: verified, Err: err}
}

// VerifyWith is what a policy says of ov, with the registry client that
// client makes, once ov names a package in a registry: the manager's
// (Client, under the policy's rules) or kubectl kudo's (--verify, with the
// user's access). Both decide here, so they cannot disagree.
func VerifyWith(ctx context.Context, ov *kudov1beta1.OperatorVersion, p *kudov1alpha1.TrustPolicy,
	client func() (*ocipkg.Client, error)) (*ocipkg.Verified, error) {
	origin := ov.Annotations[kudov1beta1.PackageDigestAnnotation]
	if origin == "" {
		return nil, errors.New("it was installed from no OCI registry, so no signature can name it")
	}
	if !strings.Contains(origin, "@") {
		return nil, fmt.Errorf("%s names no digest", origin)
	}
	authorities, err := Authorities(p)
	if err != nil {
		return nil, err
	}
	c, err := client()
	if err != nil {
		return nil, err
	}
	return verifyContent(ctx, c, p, ov, origin, authorities)
}

// PullSecretCredentials are the credentials of a Secret of type
// kubernetes.io/dockerconfigjson, as a pod's image pull secret holds them.
func PullSecretCredentials(secret *corev1.Secret) (auth.CredentialFunc, error) {
	name := "Secret " + secret.Namespace + "/" + secret.Name
	if secret.Type != corev1.SecretTypeDockerConfigJson {
		return nil, fmt.Errorf("spec.registry.authentication.pullSecretRef: %s is of type %q, not %s", name, secret.Type,
			corev1.SecretTypeDockerConfigJson)
	}
	store, err := credentials.NewMemoryStoreFromDockerConfig(secret.Data[corev1.DockerConfigJsonKey])
	if err != nil {
		return nil, fmt.Errorf("spec.registry.authentication.pullSecretRef: %s: %s: %w", name, corev1.DockerConfigJsonKey, err)
	}
	return credentials.Credential(store), nil
}

// verifyContent verifies the signature of origin and pulls the package it
// signed, which must be ov's.
func verifyContent(ctx context.Context, c *ocipkg.Client, p *kudov1alpha1.TrustPolicy, ov *kudov1beta1.OperatorVersion, origin string,
	authorities []ocipkg.Authority) (*ocipkg.Verified, error) {
	covered := func(ref string) error {
		if !covers(p, strings.TrimPrefix(ref, ocipkg.Scheme)) {
			return fmt.Errorf("dependency %s is not among the packages TrustPolicy %s covers", ref, p.Name)
		}
		return nil
	}
	signed, err := VerifySigned(ctx, c, origin, authorities, covered)
	if err != nil {
		return nil, err
	}
	_, installed, err := signed.Package.Convert(ov.Namespace)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", signed.Verified.Ref, err)
	}
	installedDependencies(&installed.Spec, signed.Dependencies)
	same, err := sameSpec(&installed.Spec, &ov.Spec)
	if err != nil {
		return nil, err
	}
	if !same {
		return nil, fmt.Errorf("its spec is not the package %s, which %s signed", signed.Verified.Ref, signed.Verified.Authority)
	}
	return signed.Verified, nil
}

// maxDependencies is how many packages in registries one package's
// KudoOperator tasks may name, each pulled to verify it.
const maxDependencies = 16

// Signed is a package whose signature verified, as its signature names
// it, and the packages in registries its KudoOperator tasks name, by
// reference, each verified alike.
type Signed struct {
	Verified     *ocipkg.Verified
	Package      *packages.Package
	Dependencies map[string]*packages.Package
}

// VerifySigned verifies that one of authorities signed the package ref
// names, and each package in a registry its KudoOperator tasks name, and
// pulls each by the digest signed: the one verification of a signed package,
// for the manager (under a TrustPolicy, which covered says a dependency is
// among the packages of) and for kubectl kudo package verify --key (covered
// nil: any).
func VerifySigned(ctx context.Context, c *ocipkg.Client, ref string, authorities []ocipkg.Authority,
	covered func(ref string) error) (*Signed, error) {
	verified, err := c.Verify(ctx, ref, authorities)
	if err != nil {
		return nil, err
	}
	pulled, err := c.Pull(ctx, verified.Ref)
	if err != nil {
		return nil, err
	}
	signed := &Signed{Verified: verified, Package: pulled.Package, Dependencies: map[string]*packages.Package{}}
	for _, t := range pulled.Package.Operator.Tasks {
		dep := t.Spec.Package
		if t.Kind != kudov1beta1.KudoOperatorTaskKind || !strings.HasPrefix(dep, ocipkg.Scheme) || signed.Dependencies[dep] != nil {
			continue
		}
		if len(signed.Dependencies) == maxDependencies {
			return nil, fmt.Errorf("%s: its KudoOperator tasks name more than %d packages in registries", verified.Ref, maxDependencies)
		}
		if covered != nil {
			if err := covered(dep); err != nil {
				return nil, fmt.Errorf("%s: %w", verified.Ref, err)
			}
		}
		depVerified, err := c.Verify(ctx, dep, authorities)
		if err != nil {
			return nil, fmt.Errorf("%s: dependency %s: %w", verified.Ref, dep, err)
		}
		depPulled, err := c.Pull(ctx, depVerified.Ref)
		if err != nil {
			return nil, fmt.Errorf("%s: dependency %s: %w", verified.Ref, dep, err)
		}
		signed.Dependencies[dep] = depPulled.Package
	}
	return signed, nil
}

// VerifyChart verifies that one of authorities signed the Helm chart ref
// names, and names it by the digest signed: a chart is verified as a
// package is, before kubectl kudo package import copies it into one.
func VerifyChart(ctx context.Context, c *ocipkg.Client, ref string, authorities []ocipkg.Authority) (*ocipkg.Verified, error) {
	return c.Verify(ctx, ref, authorities)
}

// installedDependencies names the dependencies of spec, a signed package's,
// as install writes them into its OperatorVersion (resolve.Dependencies):
// a KudoOperator task's oci:// reference becomes the name and versions of
// the package it holds. Its own OperatorVersion is verified for itself.
func installedDependencies(spec *kudov1beta1.OperatorVersionSpec, deps map[string]*packages.Package) {
	for k := range spec.Tasks {
		t := &spec.Tasks[k]
		if dep, ok := deps[t.Spec.Package]; ok && t.Kind == kudov1beta1.KudoOperatorTaskKind {
			operator := dep.Operator
			t.Spec.Package, t.Spec.OperatorVersion, t.Spec.AppVersion = operator.Name, operator.OperatorVersion, operator.AppVersion
		}
	}
}

// sameSpec compares specs as the API server stores them, where an empty
// list and none are the same.
func sameSpec(a, b *kudov1beta1.OperatorVersionSpec) (bool, error) {
	ja, err := json.Marshal(a)
	if err != nil {
		return false, err
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return false, err
	}
	return string(ja) == string(jb), nil
}

// Condition is the Verified condition the verdicts make: True when every
// policy verified, naming the signers; False naming each policy that did
// not, and why.
func Condition(verdicts []Verdict, generation int64) metav1.Condition {
	c := metav1.Condition{Type: VerifiedCondition, ObservedGeneration: generation}
	var signed, refused []string
	for _, v := range verdicts {
		if v.Err != nil {
			refused = append(refused, fmt.Sprintf("TrustPolicy %s: %v", v.Policy, v.Err))
			continue
		}
		signed = append(signed, fmt.Sprintf("signed by %s of TrustPolicy %s (%s, signature %s)",
			v.Verified.Authority, v.Policy, v.Verified.Ref, v.Verified.Signature))
	}
	if len(refused) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, UnsignedReason, strings.Join(refused, "; ")
	} else {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, SignedReason, strings.Join(signed, "; ")
	}
	return c
}
