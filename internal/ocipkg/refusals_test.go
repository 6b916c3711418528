package ocipkg

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
)

// artifacts writes what is not quite a package, or not a signature, to a
// repository of an in-process registry.
type artifacts struct {
	t    *testing.T
	repo *remote.Repository
}

func newArtifacts(t *testing.T, c *Client, repository string) artifacts {
	t.Helper()
	repo, _, err := c.repository(repository + ":latest")
	if err != nil {
		t.Fatal(err)
	}
	repo.MaxMetadataBytes = 4 * MaxMetadataBytes // it writes what a client may not read
	return artifacts{t, repo}
}

// pushedHello pushes the hello package to an in-process registry (with the
// referrers API or without) as packages/hello:0.1.0, and returns its
// reference, its repository and its manifest, which signatures refer to.
func pushedHello(t *testing.T, referrers bool) (*Client, string, *remote.Repository, ocispec.Descriptor) {
	t.Helper()
	c, host := newRegistry(t, referrers, nil)
	ctx := context.Background()
	ref := Scheme + host + "/packages/hello:0.1.0"
	if _, err := c.Push(ctx, readPackage(t, helloDir), ref); err != nil {
		t.Fatal(err)
	}
	repo, _, err := c.repository(ref)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := repo.Resolve(ctx, "0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	return c, ref, repo, subject
}

// blob pushes data as a blob of mediaType.
func (a artifacts) blob(mediaType string, data []byte) ocispec.Descriptor {
	a.t.Helper()
	desc := content.NewDescriptorFromBytes(mediaType, data)
	if err := pushBlob(context.Background(), a.repo, desc, data); err != nil {
		a.t.Fatal(err)
	}
	return desc
}

// manifest pushes a manifest of artifactType, with a package's config, the
// layers given, and subject if not nil; tagged tag if not "".
func (a artifacts) manifest(tag, artifactType string, subject *ocispec.Descriptor, annotations map[string]string,
	layers ...ocispec.Descriptor) ocispec.Descriptor {
	a.t.Helper()
	ctx := context.Background()
	config := a.blob(ConfigMediaType, []byte(`{"name":"app","operatorVersion":"1.0.0"}`))
	desc, err := oras.PackManifest(ctx, a.repo, oras.PackManifestVersion1_1, artifactType,
		oras.PackManifestOptions{Layers: layers, ConfigDescriptor: &config, Subject: subject, ManifestAnnotations: annotations})
	if err != nil {
		a.t.Fatal(err)
	}
	if tag != "" {
		if err := a.repo.Tag(ctx, desc, tag); err != nil {
			a.t.Fatal(err)
		}
	}
	return desc
}

func TestPullAndSignSayWhyAnArtifactIsNotAPackage(t *testing.T) {
	c, host := newRegistry(t, true, nil)
	ctx := context.Background()
	ref := Scheme + host + "/images/app"
	a := newArtifacts(t, c, ref)
	tarball := a.blob(ContentMediaType, []byte("not a tarball"))
	index, err := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{a.manifest("", ArtifactType, nil, nil, tarball)}})
	if err != nil {
		t.Fatal(err)
	}
	indexDesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, index)
	if err := a.repo.PushReference(ctx, indexDesc, bytes.NewReader(index), "index"); err != nil {
		t.Fatal(err)
	}
	twoLayers := a.manifest("two-layers", ArtifactType, nil, nil, tarball, tarball)
	otherLayer := a.manifest("other-layer", ArtifactType, nil, nil, a.blob("application/vnd.oci.image.layer.v1.tar+gzip", []byte("layer")))
	junk := a.manifest("junk", ArtifactType, nil, nil, tarball)
	big := a.manifest("big", ArtifactType, nil, map[string]string{"padding": strings.Repeat("x", MaxMetadataBytes)}, tarball)
	signer, _ := newSigner(t, "key")
	for _, tt := range []struct {
		tag, want string
		// signRefuses: Sign refuses it alike, reading the manifest only.
		signRefuses bool
	}{
		{"index", ref + ":index: not a package: a application/vnd.oci.image.index.v1+json, where a package is an OCI image manifest", true},
		{"two-layers", ref + ":two-layers (" + twoLayers.Digest.String() + "): not a package: a package has one layer, its tarball", true},
		{"other-layer", ref + ":other-layer (" + otherLayer.Digest.String() + "): not a package: a package has one layer, its tarball", true},
		{"big", fmt.Sprintf("%s:big: the manifest is %d bytes, more than the 1048576 a package's may be", ref, big.Size), true},
		{"missing", ref + ":missing: ", true},
		{"junk", ref + ":junk (" + junk.Digest.String() + "): not a gzip tarball: ", false},
	} {
		if _, err := c.Pull(ctx, ref+":"+tt.tag); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Pull %s = %v, want an error starting %q", tt.tag, err, tt.want)
		}
		if _, err := c.Sign(ctx, ref+":"+tt.tag, signer); tt.signRefuses && (err == nil || !strings.HasPrefix(err.Error(), tt.want)) {
			t.Errorf("Sign %s = %v, want an error starting %q", tt.tag, err, tt.want)
		}
	}
	if _, err := c.Resolve(ctx, ref+":missing"); err == nil || !strings.HasPrefix(err.Error(), ref+":missing: ") ||
		!strings.Contains(err.Error(), "not found") {
		t.Errorf("Resolve of a missing tag = %v, want it not found", err)
	}
}

// TestJunkReferrersNeitherPassForNorHideAGoodSignature: anyone who may push
// to a repository may make a package refer to what they like.
func TestJunkReferrersNeitherPassForNorHideAGoodSignature(t *testing.T) {
	// Without the referrers API, a referrer's artifact type is its own;
	// go-containerregistry's API gives that of its config.
	c, host := newRegistry(t, false, nil)
	ctx := context.Background()
	ref := Scheme + host + "/packages/hello:0.1.0"
	if _, err := c.Push(ctx, readPackage(t, helloDir), ref); err != nil {
		t.Fatal(err)
	}
	a := newArtifacts(t, c, Scheme+host+"/packages/hello")
	subject, err := a.repo.Resolve(ctx, "0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	notABundle, err := pushSignature(ctx, a.repo, subject, []byte(`{"mediaType": "nonsense"}`))
	if err != nil {
		t.Fatal(err)
	}
	bundle := a.blob(SignatureArtifactType, []byte("{}"))
	twoLayers := a.manifest("", SignatureArtifactType, &subject, nil, bundle, bundle)
	over := bundle
	over.Size = MaxMetadataBytes + 1
	tooBig := a.manifest("", SignatureArtifactType, &subject, nil, over)
	a.manifest("", "application/spdx+json", &subject, nil, a.blob("application/spdx+json", []byte("{}")))

	signer, key := newSigner(t, "key")
	_, err = c.Verify(ctx, ref, []Authority{key})
	for _, want := range []string{
		"none of its 3 signatures verifies as made by key: ",
		notABundle.Digest.String() + ": reading the bundle: ",
		twoLayers.Digest.String() + ": not a signature: a signature has one layer, its Sigstore bundle",
		tooBig.Digest.String() + ": the bundle is 1048577 bytes, more than the 1048576 a signature's may be",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Verify of junk signatures = %v, want %q", err, want)
		}
	}
	signed, err := c.Sign(ctx, ref, signer)
	if err != nil {
		t.Fatal(err)
	}
	if verified, err := c.Verify(ctx, ref, []Authority{key}); err != nil || verified.Signature != signed.Signature {
		t.Errorf("Verify among junk = %+v, %v; want the signature %s", verified, err, signed.Signature)
	}
}

func TestVerifyReadsNoMoreThanMaxSignatures(t *testing.T) {
	c, ref, repo, subject := pushedHello(t, true)
	ctx := context.Background()
	var junk []string
	for n := range MaxSignatures + 1 {
		sig, err := pushSignature(ctx, repo, subject, fmt.Appendf(nil, "junk %d", n))
		if err != nil {
			t.Fatal(err)
		}
		junk = append(junk, sig.Digest.String())
	}
	_, key := newSigner(t, "key")
	_, err := c.Verify(ctx, ref, []Authority{key})
	if err == nil {
		t.Fatal("Verify of junk signatures verified")
	}
	read := 0
	for _, digest := range junk {
		if strings.Contains(err.Error(), digest+": reading the bundle") {
			read++
		}
	}
	if read != MaxSignatures {
		t.Errorf("Verify read %d of %d signatures, want %d: %v", read, len(junk), MaxSignatures, err)
	}
}

// TestAnAttestationByTheKeyIsNotASignature: the key's holder may state
// other things of a package (its provenance, its SBOM) in the same
// envelope; only cosign sign's statement signs it.
func TestAnAttestationByTheKeyIsNotASignature(t *testing.T) {
	c, ref, repo, hello := pushedHello(t, true)
	ctx := context.Background()
	payload, err := json.Marshal(statement{
		Type:          inTotoStatementType,
		Subject:       []subject{{Digest: map[string]string{"sha256": hello.Digest.Encoded()}}},
		PredicateType: "https://slsa.dev/provenance/v1",
		Predicate:     map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	signer, key := newSigner(t, "key")
	attestation, err := sign.Bundle(&sign.DSSEData{Data: payload, PayloadType: inTotoPayloadType}, signer, sign.BundleOptions{Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	data, err := protojson.Marshal(attestation)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := pushSignature(ctx, repo, hello, data)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Verify(ctx, ref, []Authority{key})
	want := sig.Digest.String() + ` by key: it states "https://slsa.dev/provenance/v1", not "https://sigstore.dev/cosign/sign/v1"`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Verify of an attestation = %v, want %q", err, want)
	}
}

// TestTheZeroClientLogsInAsTheDockerConfigurationSays: kubectl kudo's
// client, as docker login left it.
func TestTheZeroClientLogsInAsTheDockerConfigurationSays(t *testing.T) {
	_, host := newRegistry(t, true, func(registry http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if user, password, ok := r.BasicAuth(); !ok || user != "kudo" || password != "secret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			registry.ServeHTTP(w, r)
		})
	})
	ref := Scheme + host + "/packages/hello:0.1.0"
	dockerConfig := func(config string) {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("DOCKER_CONFIG", dir)
	}
	c := &Client{PlainHTTP: true}
	ctx := context.Background()
	dockerConfig(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, base64.StdEncoding.EncodeToString([]byte("kudo:secret"))))
	if _, err := c.Push(ctx, readPackage(t, helloDir), ref); err != nil {
		t.Errorf("Push logged in as the Docker configuration says: %v", err)
	}
	dockerConfig(`{"auths":{"other.example.com":{"auth":"a3VkbzpzZWNyZXQ="}}}`)
	if _, err := c.Pull(ctx, ref); err == nil || !strings.HasPrefix(err.Error(), ref+": ") || !strings.HasSuffix(err.Error(), "basic credential not found") {
		t.Errorf("Pull with no credentials for the registry = %v, want it refused", err)
	}
	dockerConfig("{")
	if _, err := c.Pull(ctx, ref); err == nil ||
		!strings.HasPrefix(err.Error(), "reading the Docker configuration for the credentials of "+host+": ") {
		t.Errorf("Pull with a broken Docker configuration = %v, want it named", err)
	}
}
