package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	kudov1alpha1 "github.com/kudo-ng/kudo/api/v1alpha1"
	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/ocipkg/ocitest"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/corpus"
)

// signedHello pushes examples/hello to ref with c, signs it with key, and
// is the OperatorVersion install makes of it.
func signedHello(t *testing.T, c *ocipkg.Client, ref string, key *ocipkg.Signer) *kudov1beta1.OperatorVersion {
	t.Helper()
	ctx := context.Background()
	p, err := packages.Read(filepath.Join(corpus.Examples(), "hello", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, p, ref); err != nil {
		t.Fatal(err)
	}
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
	ov.Generation = 1
	return ov
}

func TestVerifyChecksTheOriginAndTheAuthoritiesBeforeReachingTheRegistry(t *testing.T) {
	_, publicKey := ocitest.Signer(t)
	byDigest := fromOrigin("oci://registry.example.com/team/hello@sha256:" + strings.Repeat("0", 64))
	for _, tt := range []struct {
		name    string
		ov      *kudov1beta1.OperatorVersion
		key     string
		reaches bool
		want    string
	}{
		{"from no registry", fromOrigin(""), publicKey, false, "it was installed from no OCI registry, so no signature can name it"},
		{"by tag", fromOrigin("oci://registry.example.com/team/hello:0.1.0"), publicKey, false,
			"oci://registry.example.com/team/hello:0.1.0 names no digest"},
		{"a key that does not read", byDigest, "not a key", false, "spec.authorities[release].key.publicKey: "},
		{"by digest", byDigest, publicKey, true, "no client"},
	} {
		p := keyPolicy("registry.example.com", tt.key)
		reached := false
		_, err := VerifyWith(context.Background(), tt.ov, &p, func() (*ocipkg.Client, error) {
			reached = true
			return nil, errors.New("no client")
		})
		if reached != tt.reaches || err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: VerifyWith = %v, reached the registry %t; want %q, reached %t", tt.name, err, reached, tt.want, tt.reaches)
		}
	}
}

// TestARegistrysCertificateIsTrustedByThePolicysCABundle: the manager reaches a
// registry over HTTPS whose certificate the CA bundle, or the system,
// certifies.
func TestARegistrysCertificateIsTrustedByThePolicysCABundle(t *testing.T) {
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake refused
	srv.StartTLS()
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	key, publicKey := ocitest.Signer(t)
	ov := signedHello(t, &ocipkg.Client{HTTPClient: srv.Client(), Credential: ocipkg.Anonymous}, "oci://"+host+"/team/hello:0.1.0", key)
	caBundle := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	for _, tt := range []struct {
		name, caBundle, want string // want "" verifies
	}{
		{"with the registry's CA", caBundle, ""},
		{"with none", "", "certificate signed by unknown authority"},
	} {
		p := keyPolicy(host, publicKey)
		p.Spec.Registry.PlainHTTP, p.Spec.Registry.CABundle = false, tt.caBundle
		v := Verify(context.Background(), ov, []kudov1alpha1.TrustPolicy{p}, nil)[0]
		if tt.want == "" && (v.Err != nil || v.Verified == nil || v.Verified.Authority != "release") {
			t.Errorf("%s: %+v, want signed by release", tt.name, v)
		}
		if tt.want != "" && (v.Err == nil || !strings.Contains(v.Err.Error(), tt.want)) {
			t.Errorf("%s: %+v, want refused: %s", tt.name, v, tt.want)
		}
	}
}

// TestASignedPackageWhoseTarballTheRegistryChangesIsRefused: a signature
// names the manifest; the tarball is checked against the manifest's digest
// of it when pulled, so a registry cannot serve other code under a good
// signature.
func TestASignedPackageWhoseTarballTheRegistryChangesIsRefused(t *testing.T) {
	var tarball atomic.Value // the path of the tarball's blob, once pushed
	tarball.Store("")
	host, c := ocitest.Registry(t, true, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != tarball.Load().(string) {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			body[len(body)/2] ^= 0xff
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
		})
	})
	key, publicKey := ocitest.Signer(t)
	ov := signedHello(t, c, "oci://"+host+"/team/hello:0.1.0", key)
	pulled, err := c.Pull(context.Background(), ov.Annotations[kudov1beta1.PackageDigestAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pulled.Tarball)
	tarball.Store("/v2/team/hello/blobs/sha256:" + hex.EncodeToString(sum[:]))

	v := Verify(context.Background(), ov, []kudov1alpha1.TrustPolicy{keyPolicy(host, publicKey)}, nil)[0]
	if v.Err == nil || v.Err.Error() != ov.Annotations[kudov1beta1.PackageDigestAnnotation]+": mismatched digest" {
		t.Errorf("Verify of a changed tarball = %+v, want its digest mismatch", v)
	}
}

// TestAPackageMayNameSixteenDependenciesInRegistriesNotMore: each is
// pulled and verified, so their number is bounded; one named twice counts
// once.
func TestAPackageMayNameSixteenDependenciesInRegistriesNotMore(t *testing.T) {
	host, c := ocitest.Registry(t, true, nil)
	ctx := context.Background()
	key, publicKey := ocitest.Signer(t)
	hello, err := packages.Read(filepath.Join(corpus.Examples(), "hello", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	for n := range maxDependencies + 1 {
		if _, err := c.Push(ctx, hello, fmt.Sprintf("oci://%s/team/hello:%d", host, n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Sign(ctx, "oci://"+host+"/team/hello:0", key); err != nil {
		t.Fatal(err)
	}
	// fanOut is hello with KudoOperator tasks naming the tags given,
	// pushed and signed.
	fanOut := func(tag string, tags ...int) string {
		t.Helper()
		p, err := packages.Read(filepath.Join(corpus.Examples(), "hello", "operator"))
		if err != nil {
			t.Fatal(err)
		}
		var tasks, steps strings.Builder
		for k, n := range tags {
			fmt.Fprintf(&tasks, "  - name: dep%d\n    kind: KudoOperator\n    spec:\n      package: oci://%s/team/hello:%d\n", k, host, n)
			fmt.Fprintf(&steps, "              - dep%d\n", k)
		}
		operator := string(p.Files[packages.OperatorFileName])
		operator = strings.Replace(operator, "plans:\n", tasks.String()+"plans:\n", 1)
		operator = strings.Replace(operator, "              - app\n", "              - app\n"+steps.String(), 1)
		p.Files[packages.OperatorFileName] = []byte(operator)
		ref := "oci://" + host + "/team/fan-out:" + tag
		if _, err := c.Push(ctx, p, ref); err != nil {
			t.Fatal(err)
		}
		signed, err := c.Sign(ctx, ref, key)
		if err != nil {
			t.Fatal(err)
		}
		return "oci://" + host + "/team/fan-out@" + signed.Digest
	}
	sixteen := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 15}
	p := keyPolicy(host, publicKey)
	authorities, err := Authorities(&p)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := VerifySigned(ctx, c, fanOut("sixteen", sixteen...), authorities, nil)
	if err != nil || len(signed.Dependencies) != maxDependencies {
		t.Errorf("VerifySigned of sixteen dependencies, one named twice = %v, want %d verified", err, maxDependencies)
	} else if dep := signed.Dependencies[fmt.Sprintf("oci://%s/team/hello:15", host)]; dep == nil || dep.Operator.Name != "hello" {
		t.Errorf("the dependency hello:15 = %+v, want the package hello", dep)
	}
	seventeen := fanOut("seventeen", append(sixteen[:16:16], 16)...)
	if _, err := VerifySigned(ctx, c, seventeen, authorities, nil); err == nil ||
		err.Error() != seventeen+": its KudoOperator tasks name more than 16 packages in registries" {
		t.Errorf("VerifySigned of seventeen dependencies = %v, want refused", err)
	}
}
