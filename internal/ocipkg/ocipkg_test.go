package ocipkg

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/corpus"
)

// newRegistry serves an in-process registry, with or without the referrers
// API, and a client of it.
func newRegistry(t *testing.T, referrers bool, wrap func(http.Handler) http.Handler) (*Client, string) {
	t.Helper()
	handler := registry.New(registry.WithReferrersSupport(referrers), registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		handler = wrap(handler)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	return &Client{PlainHTTP: true, Credential: auth.StaticCredential(host, auth.EmptyCredential)}, host
}

var (
	helloDir  = filepath.Join(corpus.Examples(), "hello", "operator")
	widgetDir = filepath.Join(corpus.Examples(), "widget", "operator")
)

func readPackage(t *testing.T, dir string) *packages.Package {
	t.Helper()
	p, err := packages.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPushAndPullARoundTrip(t *testing.T) {
	for _, referrers := range []bool{true, false} {
		c, host := newRegistry(t, referrers, nil)
		ctx := context.Background()
		hello := readPackage(t, helloDir)
		ref := Scheme + host + "/packages/hello:0.1.0"
		pushed, err := c.Push(ctx, hello, ref)
		if err != nil {
			t.Fatalf("referrers API %t: Push: %v", referrers, err)
		}
		for _, pullRef := range []string{ref, Scheme + host + "/packages/hello@" + pushed.Digest} {
			pulled, err := c.Pull(ctx, pullRef)
			if err != nil {
				t.Fatalf("Pull %s: %v", pullRef, err)
			}
			if pulled.Digest != pushed.Digest {
				t.Errorf("Pull %s: digest %s, pushed %s", pullRef, pulled.Digest, pushed.Digest)
			}
			if !maps.EqualFunc(pulled.Package.Files, hello.Files, bytes.Equal) {
				t.Errorf("Pull %s: the files differ from those pushed", pullRef)
			}
		}
		if digest, err := c.Resolve(ctx, ref); err != nil || digest != pushed.Digest {
			t.Errorf("Resolve = %s, %v; want %s", digest, err, pushed.Digest)
		}
	}
}

func TestTheSamePackagePushesToTheSameDigest(t *testing.T) {
	ctx := context.Background()
	c, host := newRegistry(t, true, nil)
	other, otherHost := newRegistry(t, false, nil)
	fromDir := readPackage(t, helloDir)
	var tarball bytes.Buffer
	if err := fromDir.WriteTarball(&tarball); err != nil {
		t.Fatal(err)
	}
	fromTarball, err := packages.ReadTarball(&tarball)
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Push(ctx, fromDir, Scheme+host+"/a/hello:1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := other.Push(ctx, fromTarball, Scheme+otherHost+"/b/hello:latest")
	if err != nil {
		t.Fatal(err)
	}
	if first.Digest != second.Digest {
		t.Errorf("one package pushed to two digests: %s and %s", first.Digest, second.Digest)
	}
	widget, err := c.Push(ctx, readPackage(t, widgetDir), Scheme+host+"/a/widget:1")
	if err != nil {
		t.Fatal(err)
	}
	if widget.Digest == first.Digest {
		t.Error("two packages pushed to one digest")
	}
}

func TestAMovedTagPullsTheNewPackageAndTheDigestTheOld(t *testing.T) {
	ctx := context.Background()
	c, host := newRegistry(t, true, nil)
	ref := Scheme + host + "/packages/hello:stable"
	hello := readPackage(t, helloDir)
	before, err := c.Push(ctx, hello, ref)
	if err != nil {
		t.Fatal(err)
	}
	changed := readPackage(t, helloDir)
	changed.Files[packages.ParamsFileName] = append(bytes.Clone(changed.Files[packages.ParamsFileName]), "\n# moved\n"...)
	after, err := c.Push(ctx, changed, ref)
	if err != nil {
		t.Fatal(err)
	}
	if after.Digest == before.Digest {
		t.Fatal("a changed package pushed to the same digest")
	}
	byTag, err := c.Pull(ctx, ref)
	if err != nil || byTag.Digest != after.Digest {
		t.Errorf("Pull by tag = %v, %v; want the package pushed last, %s", byTag, err, after.Digest)
	}
	byDigest, err := c.Pull(ctx, Scheme+host+"/packages/hello@"+before.Digest)
	if err != nil || byDigest.Digest != before.Digest || !bytes.Equal(byDigest.Package.Files[packages.ParamsFileName], hello.Files[packages.ParamsFileName]) {
		t.Errorf("Pull by the first digest = %v, %v; want the package pushed first", byDigest, err)
	}
}

func TestPullRefusesWhatIsNotAnIntactPackage(t *testing.T) {
	ctx := context.Background()
	hello := readPackage(t, helloDir)
	tamper := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/") {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			if len(body) > 0 {
				body[len(body)/2] ^= 0xff
			}
			maps.Copy(w.Header(), rec.Header())
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
		})
	}
	c, host := newRegistry(t, true, tamper)
	if _, err := c.Push(ctx, hello, Scheme+host+"/packages/hello:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pull(ctx, Scheme+host+"/packages/hello:1"); err == nil || !strings.Contains(err.Error(), "mismatch") {
		t.Errorf("Pull of a tampered tarball: %v, want a digest mismatch", err)
	}

	c, host = newRegistry(t, true, nil)
	repo, _, err := c.repository(Scheme + host + "/images/app:1")
	if err != nil {
		t.Fatal(err)
	}
	push := func(artifactType string, layers []ocispec.Descriptor, data ...[]byte) ocispec.Descriptor {
		t.Helper()
		for n, d := range data {
			if err := repo.Push(ctx, layers[n], bytes.NewReader(d)); err != nil {
				t.Fatal(err)
			}
		}
		config := content.NewDescriptorFromBytes(ConfigMediaType, []byte("{}"))
		if err := pushBlob(ctx, repo, config, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, artifactType,
			oras.PackManifestOptions{Layers: layers, ConfigDescriptor: &config})
		if err != nil {
			t.Fatal(err)
		}
		return desc
	}
	huge := content.NewDescriptorFromBytes(ContentMediaType, []byte("x"))
	huge.Size = 1 << 40
	tests := []struct {
		name string
		desc ocispec.Descriptor
		want string
	}{
		{"another artifact", push("application/vnd.example.chart.v1", nil), "not a package: artifact type"},
		{"a tarball larger than a package may be", push(ArtifactType, []ocispec.Descriptor{huge}),
			"the package's tarball is 1099511627776 bytes, more than the limit of 8388608"},
	}
	for _, tt := range tests {
		_, err := c.Pull(ctx, Scheme+host+"/images/app@"+tt.desc.Digest.String())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Pull: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

func TestTheConfigDescribesThePackage(t *testing.T) {
	config := ConfigOf(readPackage(t, widgetDir))
	data, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	if config.Name != "widget" || config.OperatorVersion == "" || len(config.Parameters) == 0 {
		t.Errorf("config %s: want the name, the version and the parameters of examples/widget", data)
	}
}

func TestARefNamesARegistryAndATagOrADigest(t *testing.T) {
	c := &Client{Credential: auth.StaticCredential("r.example", auth.EmptyCredential)}
	for ref, want := range map[string]string{
		"r.example/p/hello:1":       "not a package in a registry",
		"oci://r.example/p/hello":   "name a tag (:TAG) or a digest",
		"oci://r.example/p/HELLO:1": "invalid reference",
	} {
		if _, _, err := c.repository(ref); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", ref, err, want)
		}
	}
	if _, err := c.Push(context.Background(), nil, "oci://r.example/p/hello@sha256:"+strings.Repeat("0", 64)); err == nil ||
		!strings.Contains(err.Error(), "a push needs a tag") {
		t.Errorf("Push by digest: %v, want it refused", err)
	}
}
