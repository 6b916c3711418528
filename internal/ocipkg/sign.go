package ocipkg

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"google.golang.org/protobuf/encoding/protojson"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
)

// A package's signature is what cosign v3 writes for an image it signs
// (cosign sign --new-bundle-format): a Sigstore bundle whose DSSE envelope
// signs an in-toto statement naming the manifest's digest, pushed as an
// artifact that refers to the manifest (OCI 1.1 subject; the referrers tag
// where the registry has no referrers API). So cosign verify checks our
// signatures, and we check cosign's.
const (
	// SignatureArtifactType is the artifact type, and the layer's media
	// type, of a signature: a Sigstore bundle v0.3.
	SignatureArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// cosignSignPredicateType is the predicate of the statement cosign sign
	// signs.
	cosignSignPredicateType = "https://sigstore.dev/cosign/sign/v1"
	inTotoStatementType     = "https://in-toto.io/Statement/v1"
	inTotoPayloadType       = "application/vnd.in-toto+json"
	// The annotations cosign puts on a signature's manifest.
	bundleContentAnnotation       = "dev.sigstore.bundle.content"
	bundlePredicateTypeAnnotation = "dev.sigstore.bundle.predicateType"
)

// MaxSignatures is how many signatures of a package Verify reads, at most:
// anyone who may push to the repository may add some.
const MaxSignatures = 16

// statement is an in-toto statement v1 about one artifact.
type statement struct {
	Type          string         `json:"_type"`
	Subject       []subject      `json:"subject"`
	PredicateType string         `json:"predicateType"`
	Predicate     map[string]any `json:"predicate"`
}

type subject struct {
	Digest map[string]string `json:"digest"`
}

// Signed is what a signature wrote.
type Signed struct {
	// Digest is the signed manifest's; Signature the signature's manifest's.
	Digest, Signature string
}

// Sign signs the package or the Helm chart ref names (by digest, or by a
// tag resolved to one first) with signer, and pushes the signature.
func (c *Client) Sign(ctx context.Context, ref string, signer sign.Keypair) (*Signed, error) {
	repo, desc, err := c.signable(ctx, ref)
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(statement{
		Type:          inTotoStatementType,
		Subject:       []subject{{Digest: map[string]string{desc.Digest.Algorithm().String(): desc.Digest.Encoded()}}},
		PredicateType: cosignSignPredicateType,
		Predicate:     map[string]any{},
	})
	if err != nil {
		return nil, err
	}
	signed, err := sign.Bundle(&sign.DSSEData{Data: payload, PayloadType: inTotoPayloadType}, signer, sign.BundleOptions{Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", resolved(ref, desc), err)
	}
	data, err := protojson.Marshal(signed)
	if err != nil {
		return nil, err
	}
	sig, err := pushSignature(ctx, repo, desc, data)
	if err != nil {
		return nil, fmt.Errorf("%s: pushing the signature: %w", ref, err)
	}
	return &Signed{Digest: desc.Digest.String(), Signature: sig.Digest.String()}, nil
}

// signable reads the manifest ref names, a package's or a Helm chart's.
func (c *Client) signable(ctx context.Context, ref string) (*remote.Repository, ocispec.Descriptor, error) {
	repo, reference, err := c.repository(ref)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	desc, manifest, err := fetchManifest(ctx, repo, reference)
	if err != nil {
		return nil, desc, fmt.Errorf("%s: %w", ref, err)
	}
	if _, err := packageLayer(manifest); err != nil {
		if _, chartErr := chartLayer(manifest); chartErr != nil {
			return nil, desc, fmt.Errorf("%s: %w", resolved(ref, desc), err)
		}
	}
	return repo, desc, nil
}

// pushSignature pushes a Sigstore bundle as a signature of the manifest
// subject.
func pushSignature(ctx context.Context, repo *remote.Repository, subject ocispec.Descriptor, data []byte) (ocispec.Descriptor, error) {
	layer := content.NewDescriptorFromBytes(SignatureArtifactType, data)
	if err := pushBlob(ctx, repo, layer, data); err != nil {
		return ocispec.Descriptor{}, err
	}
	return oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, SignatureArtifactType, oras.PackManifestOptions{
		Subject: &subject, Layers: []ocispec.Descriptor{layer},
		ManifestAnnotations: map[string]string{
			ocispec.AnnotationCreated:     time.Now().UTC().Format(time.RFC3339),
			bundleContentAnnotation:       "dsse-envelope",
			bundlePredicateTypeAnnotation: cosignSignPredicateType,
		},
	})
}

// Verified is the signature Verify accepted.
type Verified struct {
	// Ref names the package verified by its digest; Digest is the digest,
	// which a tag resolved to; Signature the accepted signature's manifest's.
	Ref, Digest, Signature string
	// Authority is the name of the authority that signed.
	Authority string
}

// errEnoughSignatures ends the listing of signatures at MaxSignatures.
var errEnoughSignatures = errors.New("enough signatures")

// Verify checks that a signature of the package ref names (by digest, or
// by a tag resolved to one once) was made by one of authorities, and says
// which; an error says why none was: none at all, none by these
// authorities, or none that holds.
func (c *Client) Verify(ctx context.Context, ref string, authorities []Authority) (*Verified, error) {
	repo, reference, err := c.repository(ref)
	if err != nil {
		return nil, err
	}
	desc, err := repo.Resolve(ctx, reference)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	var signatures []ocispec.Descriptor
	// Listed unfiltered: some registries (go-containerregistry's) give a
	// referrer the artifact type of its config, empty here, and the
	// signature's manifest is checked when read.
	err = repo.Referrers(ctx, desc, "", func(page []ocispec.Descriptor) error {
		for _, d := range page {
			if d.ArtifactType == SignatureArtifactType || d.ArtifactType == ocispec.MediaTypeEmptyJSON {
				signatures = append(signatures, d)
			}
		}
		if len(signatures) >= MaxSignatures {
			return errEnoughSignatures
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnoughSignatures) {
		return nil, fmt.Errorf("%s: listing its signatures: %w", resolved(ref, desc), err)
	}
	if len(signatures) == 0 {
		return nil, fmt.Errorf("%s is not signed: no Sigstore bundle refers to it", resolved(ref, desc))
	}
	digest, err := hex.DecodeString(desc.Digest.Encoded())
	if err != nil {
		return nil, err
	}
	artifact := verify.WithArtifactDigest(desc.Digest.Algorithm().String(), digest)
	var reasons []string
	for _, s := range signatures[:min(len(signatures), MaxSignatures)] {
		b, err := fetchBundle(ctx, repo, s)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("%s: %v", s.Digest, err))
			continue
		}
		for _, a := range authorities {
			if err := a.verifies(b, artifact); err != nil {
				reasons = append(reasons, fmt.Sprintf("%s by %s: %v", s.Digest, a.Name, err))
				continue
			}
			return &Verified{Ref: byDigest(repo, desc), Digest: desc.Digest.String(), Signature: s.Digest.String(), Authority: a.Name}, nil
		}
	}
	return nil, fmt.Errorf("%s: none of its %d signatures verifies as made by %s: %s",
		resolved(ref, desc), len(signatures), names(authorities), strings.Join(reasons, "; "))
}

// names lists the authorities' names.
func names(authorities []Authority) string {
	n := make([]string, len(authorities))
	for k, a := range authorities {
		n[k] = a.Name
	}
	return strings.Join(n, " or ")
}

// fetchBundle reads the Sigstore bundle of a signature, within
// MaxMetadataBytes, checked against its digests.
func fetchBundle(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor) (*bundle.Bundle, error) {
	_, manifest, err := fetchManifest(ctx, repo, desc.Digest.String())
	if err != nil {
		return nil, err
	}
	if manifest.ArtifactType != SignatureArtifactType || len(manifest.Layers) != 1 || manifest.Layers[0].MediaType != SignatureArtifactType {
		return nil, errors.New("not a signature: a signature has one layer, its Sigstore bundle")
	}
	layer := manifest.Layers[0]
	if layer.Size < 0 || layer.Size > MaxMetadataBytes {
		return nil, fmt.Errorf("the bundle is %d bytes, more than the %d a signature's may be", layer.Size, MaxMetadataBytes)
	}
	data, err := content.FetchAll(ctx, repo, layer)
	if err != nil {
		return nil, err
	}
	b := &bundle.Bundle{}
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("reading the bundle: %w", err)
	}
	return b, nil
}
