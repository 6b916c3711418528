package trust

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"oras.land/oras-go/v2/registry/remote/auth"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/ocipkg/ocitest"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/corpus"
)

func policy(name string, mode kudov1alpha1.TrustMode, prefixes ...string) kudov1alpha1.TrustPolicy {
	p := kudov1alpha1.TrustPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kudov1alpha1.TrustPolicySpec{Mode: mode}}
	for _, prefix := range prefixes {
		p.Spec.Packages = append(p.Spec.Packages, kudov1alpha1.PackageMatch{Prefix: prefix})
	}
	return p
}

func fromOrigin(origin string) *kudov1beta1.OperatorVersion {
	ov := &kudov1beta1.OperatorVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hello-0.1.0", Generation: 2}}
	if origin != "" {
		ov.Annotations = map[string]string{kudov1beta1.PackageDigestAnnotation: origin}
	}
	return ov
}

func names(policies []kudov1alpha1.TrustPolicy) string {
	n := make([]string, len(policies))
	for k, p := range policies {
		n[k] = p.Name
	}
	return strings.Join(n, ",")
}

func TestAPolicyCoversThePackagesUnderItsPrefixesOrAllWithoutAny(t *testing.T) {
	policies := []kudov1alpha1.TrustPolicy{
		policy("team", kudov1alpha1.Enforce, "registry.example.com/team/"),
		policy("all", kudov1alpha1.Audit),
		policy("other", kudov1alpha1.Enforce, "other.example.com/"),
	}
	for _, tt := range []struct{ origin, want string }{
		{"oci://registry.example.com/team/zk@sha256:0123", "all,team"},
		{"oci://registry.example.com/teams/zk@sha256:0123", "all"},
		{"oci://evil.example.com/registry.example.com/team/zk@sha256:0123", "all"},
		{"", "all"},
	} {
		if got := names(Covering(policies, fromOrigin(tt.origin))); got != tt.want {
			t.Errorf("Covering(%q) = %s, want %s", tt.origin, got, tt.want)
		}
	}
}

func TestAnOperatorVersionRunsOnceVerifiedForItsGenerationWhereAPolicyEnforces(t *testing.T) {
	enforce := []kudov1alpha1.TrustPolicy{policy("team", kudov1alpha1.Enforce)}
	audit := []kudov1alpha1.TrustPolicy{policy("team", kudov1alpha1.Audit)}
	verified := func(status metav1.ConditionStatus, generation int64) *kudov1beta1.OperatorVersion {
		ov := fromOrigin("oci://registry.example.com/team/zk@sha256:0123")
		ov.Status.Conditions = []metav1.Condition{{Type: VerifiedCondition, Status: status, ObservedGeneration: generation, Message: "no signature"}}
		return ov
	}
	for _, tt := range []struct {
		name     string
		policies []kudov1alpha1.TrustPolicy
		ov       *kudov1beta1.OperatorVersion
		want     string // "" runs; "pending"; else in the refusal
	}{
		{"no policy", nil, fromOrigin(""), ""},
		{"audit, unverified", audit, verified(metav1.ConditionFalse, 2), ""},
		{"enforce, verified", enforce, verified(metav1.ConditionTrue, 2), ""},
		{"enforce, not judged", enforce, fromOrigin(""), "pending"},
		{"enforce, verified an older generation", enforce, verified(metav1.ConditionTrue, 1), "pending"},
		{"enforce, unverified", enforce, verified(metav1.ConditionFalse, 2), "TrustPolicy team enforces signatures on it: no signature"},
	} {
		refused := Refusal(tt.policies, tt.ov)
		switch {
		case tt.want == "" && refused != nil:
			t.Errorf("%s: refused: %v", tt.name, refused)
		case tt.want == "pending" && (refused == nil || !refused.Pending):
			t.Errorf("%s: %v, want pending", tt.name, refused)
		case tt.want != "" && tt.want != "pending" && (refused == nil || refused.Pending || !strings.Contains(refused.Error(), tt.want)):
			t.Errorf("%s: %v, want refused with %q", tt.name, refused, tt.want)
		}
	}
}

func keyPolicy(host, publicKey string) kudov1alpha1.TrustPolicy {
	p := policy("team", kudov1alpha1.Enforce, host+"/team/")
	p.Spec.Authorities = []kudov1alpha1.Authority{{Name: "release", Key: &kudov1alpha1.KeyAuthority{PublicKey: publicKey}}}
	p.Spec.Registry.PlainHTTP = true
	return p
}

func TestVerifyChecksTheSignatureAndThatTheOperatorVersionIsTheSignedPackage(t *testing.T) {
	host, c := ocitest.Registry(t, true, nil)
	ctx := context.Background()
	signed, unsigned := "oci://"+host+"/team/hello:0.1.0", "oci://"+host+"/team/hello:unsigned"
	key, publicKey := ocitest.Signer(t)
	_, otherKey := ocitest.Signer(t)
	ov := signedHello(t, c, signed, key)
	p, err := packages.Read(filepath.Join(corpus.Examples(), "hello", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	changed := ov.DeepCopy()
	changed.Spec.Templates["deployment.yaml"] = "kind: Pod"
	unsignedOV := ov.DeepCopy()
	p.Params.Parameters[0].Description = "unsigned"
	if pushed, err := c.Push(ctx, p, unsigned); err != nil {
		t.Fatal(err)
	} else {
		unsignedOV.Annotations[kudov1beta1.PackageDigestAnnotation] = "oci://" + host + "/team/hello@" + pushed.Digest
	}

	for _, tt := range []struct {
		name   string
		ov     *kudov1beta1.OperatorVersion
		policy kudov1alpha1.TrustPolicy
		want   string // "" verifies
	}{
		{"signed", ov, keyPolicy(host, publicKey), ""},
		{"signed by another key", ov, keyPolicy(host, otherKey), "verifies as made by release"},
		{"unsigned", unsignedOV, keyPolicy(host, publicKey), "is not signed"},
		{"its spec changed", changed, keyPolicy(host, publicKey), "its spec is not the package"},
		{"from no registry", fromOrigin(""), keyPolicy(host, publicKey), "installed from no OCI registry"},
		{"by tag", fromOrigin(signed), keyPolicy(host, publicKey), "names no digest"},
		// Issue 62: a policy that names no packages trusts signatures, not
		// locations; the registry the package names is on loopback.
		{"from an internal address, by a policy naming no packages", ov, anywhere(keyPolicy(host, publicKey), false),
			"is an internal address, and TrustPolicy team names no packages"},
		{"from an internal address, by a policy allowing them", ov, anywhere(keyPolicy(host, publicKey), true), ""},
	} {
		c := Condition(Verify(ctx, tt.ov, []kudov1alpha1.TrustPolicy{tt.policy}, nil), tt.ov.Generation)
		if tt.want == "" {
			if c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "signed by release of TrustPolicy team") {
				t.Errorf("%s: %+v, want verified", tt.name, c)
			}
			continue
		}
		if c.Status != metav1.ConditionFalse || c.Reason != UnsignedReason || !strings.Contains(c.Message, "TrustPolicy team: ") ||
			!strings.Contains(c.Message, tt.want) {
			t.Errorf("%s: %+v, want unverified: %s", tt.name, c, tt.want)
		}
	}
}

func TestTheManagerPullsWithTheCredentialsItIsGiven(t *testing.T) {
	login := auth.Credential{Username: "kudo", Password: "secret"}
	host, c := ocitest.Registry(t, true, func(registry http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if user, password, ok := r.BasicAuth(); !ok || user != login.Username || password != login.Password {
				w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			registry.ServeHTTP(w, r)
		})
	})
	c.Credential = auth.StaticCredential(host, login)
	ctx := context.Background()
	p, err := packages.Read(filepath.Join(corpus.Examples(), "hello", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	ref := "oci://" + host + "/team/hello:0.1.0"
	if _, err := c.Push(ctx, p, ref); err != nil {
		t.Fatal(err)
	}
	key, publicKey := ocitest.Signer(t)
	if _, err := c.Sign(ctx, ref, key); err != nil {
		t.Fatal(err)
	}
	pulled, err := c.Pull(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	_, ov, err := pulled.Package.Convert("ns")
	if err != nil {
		t.Fatal(err)
	}
	policies := []kudov1alpha1.TrustPolicy{keyPolicy(host, publicKey)}
	if v := Verify(ctx, ov, policies, nil); v[0].Err == nil || !strings.Contains(v[0].Err.Error(), "credential not found") {
		t.Errorf("anonymously: %v, want refused by the registry", v[0].Err)
	}
	given := func(login auth.CredentialFunc, err error) Credentials {
		return func(context.Context, *kudov1alpha1.TrustPolicy) (auth.CredentialFunc, error) { return login, err }
	}
	if v := Verify(ctx, ov, policies, given(auth.StaticCredential(host, login), nil)); v[0].Err != nil {
		t.Errorf("with the credentials: %v", v[0].Err)
	}
	if v := Verify(ctx, ov, policies, given(nil, errors.New("no Secret"))); v[0].Err == nil || v[0].Err.Error() != "no Secret" {
		t.Errorf("without its credentials: %v, want why", v[0].Err)
	}

	pullSecret := func(password string) *corev1.Secret {
		config := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, "https://"+host+"/v2/",
			base64.StdEncoding.EncodeToString([]byte(login.Username+":"+password)))
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kudo-system", Name: "registry"},
			Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(config)}}
	}
	for password, refused := range map[string]string{login.Password: "", "wrong": "401"} {
		secretLogin, err := PullSecretCredentials(pullSecret(password))
		if err != nil {
			t.Fatal(err)
		}
		v := Verify(ctx, ov, policies, given(secretLogin, nil))
		if (refused == "" && v[0].Err != nil) || (refused != "" && (v[0].Err == nil || !strings.Contains(v[0].Err.Error(), refused))) {
			t.Errorf("with a pull Secret's password %q: %v, want refused %q", password, v[0].Err, refused)
		}
	}
}

func TestAPullSecretIsADockerConfiguration(t *testing.T) {
	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kudo-system", Name: "registry"}, Type: corev1.SecretTypeOpaque}
	if _, err := PullSecretCredentials(opaque); err == nil || err.Error() !=
		`spec.registry.authentication.pullSecretRef: Secret kudo-system/registry is of type "Opaque", not kubernetes.io/dockerconfigjson` {
		t.Errorf("an Opaque Secret: %v", err)
	}
	broken := opaque.DeepCopy()
	broken.Type, broken.Data = corev1.SecretTypeDockerConfigJson, map[string][]byte{corev1.DockerConfigJsonKey: []byte("{")}
	if _, err := PullSecretCredentials(broken); err == nil ||
		!strings.HasPrefix(err.Error(), "spec.registry.authentication.pullSecretRef: Secret kudo-system/registry: .dockerconfigjson: ") {
		t.Errorf("a Secret that is no Docker configuration: %v", err)
	}
}

func TestAPolicyWhoseKeyDoesNotReadVerifiesNothing(t *testing.T) {
	p := keyPolicy("registry.example.com", "not a key")
	if _, err := Authorities(&p); err == nil || !strings.Contains(err.Error(), "spec.authorities[release].key.publicKey") {
		t.Errorf("Authorities = %v, want the key refused", err)
	}
	p.Spec.Registry.CABundle = "not a certificate"
	if _, err := Client(&p, nil); err == nil || !strings.Contains(err.Error(), "spec.registry.caBundle") {
		t.Errorf("Client = %v, want the CA bundle refused", err)
	}
}

// anywhere is p covering every package, allowing internal addresses or not.
func anywhere(p kudov1alpha1.TrustPolicy, internal bool) kudov1alpha1.TrustPolicy {
	p.Spec.Packages = nil
	p.Spec.Registry.AllowInternalAddresses = internal
	return p
}

func TestInternalAddressesAreThoseOfAClustersOwn(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		internal bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"10.96.0.1", true}, {"172.16.0.5", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"fe80::1", true}, {"fd00::1", true}, {"100.64.0.1", true}, {"0.0.0.0", true},
		{"::ffff:10.0.0.1", true}, {"224.0.0.1", true},
		{"8.8.8.8", false}, {"2001:4860:4860::8888", false}, {"100.128.0.1", false},
	} {
		if got := Internal(netip.MustParseAddr(tc.addr)); got != tc.internal {
			t.Errorf("Internal(%s) = %t, want %t", tc.addr, got, tc.internal)
		}
	}
}

// TestASignedPackageWithDependenciesInARegistryVerifies: install names a
// KudoOperator task's oci:// package by the name and versions of what it
// pulled, so the OperatorVersion differs from the signed package there;
// each dependency is verified by the same policy, then named as install
// names it (issue 62).
func TestASignedPackageWithDependenciesInARegistryVerifies(t *testing.T) {
	host, c := ocitest.Registry(t, true, nil)
	ctx := context.Background()
	key, publicKey := ocitest.Signer(t)
	child, err := packages.Read(filepath.Join(corpus.Examples(), "hello", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	childRef, unsignedChildRef := "oci://"+host+"/team/hello:0.1.0", "oci://"+host+"/team/hello:unsigned"
	if _, err := c.Push(ctx, child, childRef); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sign(ctx, childRef, key); err != nil {
		t.Fatal(err)
	}
	other, err := packages.Read(filepath.Join(corpus.Examples(), "hello", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	other.Files[packages.ParamsFileName] = append(other.Files[packages.ParamsFileName], "# another package\n"...)
	if _, err := c.Push(ctx, other, unsignedChildRef); err != nil {
		t.Fatal(err)
	}
	// parent is all-tasks naming dep as its KudoOperator task's package,
	// pushed, signed, and installed as install writes it.
	parent := func(dep, tag string) (*kudov1beta1.OperatorVersion, string) {
		t.Helper()
		p, err := packages.Read(filepath.Join(corpus.Examples(), "all-tasks", "operator"))
		if err != nil {
			t.Fatal(err)
		}
		operatorFile := strings.Replace(string(p.Files[packages.OperatorFileName]), "package: ../../hello/operator", "package: "+dep, 1)
		p.Files[packages.OperatorFileName] = []byte(operatorFile)
		ref := "oci://" + host + "/team/all-tasks:" + tag
		if _, err := c.Push(ctx, p, ref); err != nil {
			t.Fatal(err)
		}
		verified, err := c.Sign(ctx, ref, key)
		if err != nil {
			t.Fatal(err)
		}
		for k := range p.Operator.Tasks {
			if task := &p.Operator.Tasks[k]; task.Kind == kudov1beta1.KudoOperatorTaskKind {
				task.Spec.Package, task.Spec.OperatorVersion, task.Spec.AppVersion =
					child.Operator.Name, child.Operator.OperatorVersion, child.Operator.AppVersion
			}
		}
		_, ov, err := p.Convert("ns")
		if err != nil {
			t.Fatal(err)
		}
		ov.Annotations = map[string]string{kudov1beta1.PackageDigestAnnotation: "oci://" + host + "/team/all-tasks@" + verified.Digest}
		ov.Generation = 1
		return ov, ref
	}
	outside := keyPolicy(host, publicKey)
	outside.Spec.Packages = []kudov1alpha1.PackageMatch{{Prefix: host + "/team/all-tasks"}}
	signedChild, signedChildRef := parent(childRef, "signed-child")
	unsignedChild, unsignedChildParentRef := parent(unsignedChildRef, "unsigned-child")
	outsideChild, outsideRef := parent(childRef, "outside")
	for _, tt := range []struct {
		name   string
		ov     *kudov1beta1.OperatorVersion
		ref    string
		policy kudov1alpha1.TrustPolicy
		want   string // "" verifies
		// wantKeys is what package verify --key says, with no policy.
		wantKeys string
	}{
		{"a signed dependency", signedChild, signedChildRef, keyPolicy(host, publicKey), "", ""},
		{"an unsigned dependency", unsignedChild, unsignedChildParentRef, keyPolicy(host, publicKey),
			"dependency " + unsignedChildRef + ": " + unsignedChildRef, "dependency " + unsignedChildRef + ": " + unsignedChildRef},
		{"a dependency outside the policy's packages", outsideChild, outsideRef, outside,
			"dependency " + childRef + " is not among the packages TrustPolicy team covers", ""},
	} {
		cond := Condition(Verify(ctx, tt.ov, []kudov1alpha1.TrustPolicy{tt.policy}, nil), tt.ov.Generation)
		if tt.want == "" && cond.Status != metav1.ConditionTrue {
			t.Errorf("%s: %+v, want verified", tt.name, cond)
		}
		if tt.want != "" && (cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, tt.want)) {
			t.Errorf("%s: %+v, want unverified: %s", tt.name, cond, tt.want)
		}
		// package verify --key verifies with the manager's function.
		authorities, err := Authorities(&tt.policy)
		if err != nil {
			t.Fatal(err)
		}
		_, err = VerifySigned(ctx, c, tt.ref, authorities, nil)
		if err != nil {
			if tt.wantKeys == "" || !strings.Contains(err.Error(), tt.wantKeys) {
				t.Errorf("%s: VerifySigned = %v, want %q", tt.name, err, tt.wantKeys)
			}
		} else if tt.wantKeys != "" {
			t.Errorf("%s: VerifySigned verified, want %q", tt.name, tt.wantKeys)
		}
	}
}
