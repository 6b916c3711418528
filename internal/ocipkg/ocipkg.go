// Package ocipkg publishes operator packages to OCI registries and fetches
// them: a package is an OCI 1.1 artifact of its own type, whose config is the
// package's metadata and whose one layer is the tarball `package create`
// writes. The same package pushes to the same digest, wherever and whenever
// it is pushed.
package ocipkg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/kudo-ng/kudo/internal/packages"
)

// Scheme starts a package's reference in a registry:
// oci://REGISTRY/REPOSITORY:TAG or oci://REGISTRY/REPOSITORY@sha256:DIGEST.
const Scheme = "oci://"

// Media types of a package's artifact.
const (
	ArtifactType     = "application/vnd.kudo-ng.package.v1"
	ConfigMediaType  = "application/vnd.kudo-ng.package.config.v1+json"
	ContentMediaType = "application/vnd.kudo-ng.package.content.v1.tar+gzip"
)

// Bounds of what a pull reads before it trusts it: the manifest and the
// config (the layer is bounded by packages.MaxTarballSize).
const MaxMetadataBytes = 1 << 20

// created is the creation time every manifest states, so that a package's
// digest depends on the package alone.
const created = "1970-01-01T00:00:00Z"

// IsRef reports whether ref names a package in a registry.
func IsRef(ref string) bool { return strings.HasPrefix(ref, Scheme) }

// Config is the config of a package's artifact: what a registry, or
// kubectl kudo search, shows of a package without reading it.
type Config struct {
	Name              string      `json:"name"`
	OperatorVersion   string      `json:"operatorVersion"`
	AppVersion        string      `json:"appVersion,omitempty"`
	KubernetesVersion string      `json:"kubernetesVersion,omitempty"`
	Description       string      `json:"description,omitempty"`
	Parameters        []Parameter `json:"parameters,omitempty"`
}

// Parameter is a parameter of a package, as its config lists it.
type Parameter struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// ConfigOf is the config of a package's artifact.
func ConfigOf(p *packages.Package) Config {
	c := Config{
		Name: p.Operator.Name, OperatorVersion: p.Operator.OperatorVersion, AppVersion: p.Operator.AppVersion,
		KubernetesVersion: p.Operator.KubernetesVersion, Description: p.Operator.Description,
	}
	if p.Params != nil {
		for _, param := range p.Params.Parameters {
			c.Parameters = append(c.Parameters, Parameter{Name: param.Name, Description: param.Description,
				Type: string(param.Type), Required: param.Required != nil && *param.Required && param.Default == nil})
		}
	}
	return c
}

// Client pushes and pulls packages. The zero value reaches registries over
// HTTPS with the credentials of the Docker configuration and its
// credential helpers, as every OCI client does.
type Client struct {
	// PlainHTTP reaches registries over HTTP.
	PlainHTTP bool
	// HTTPClient makes the requests; nil is http.DefaultClient.
	HTTPClient *http.Client
	// Credential finds the credentials of a registry; nil reads the Docker
	// configuration ($DOCKER_CONFIG, or ~/.docker/config.json).
	Credential auth.CredentialFunc
}

// Anonymous gives no credentials to any registry.
func Anonymous(context.Context, string) (auth.Credential, error) { return auth.EmptyCredential, nil }

// Pushed is what a push wrote.
type Pushed struct {
	Ref    string
	Digest string
	Size   int64
}

// Push writes the package as an artifact to ref, which must name a tag,
// and tags it.
func (c *Client) Push(ctx context.Context, p *packages.Package, ref string) (*Pushed, error) {
	repo, tag, err := c.repository(ref)
	if err != nil {
		return nil, err
	}
	if strings.Contains(tag, ":") {
		return nil, fmt.Errorf("%s: a push needs a tag, not a digest", ref)
	}
	var tarball bytes.Buffer
	if err := p.WriteTarball(&tarball); err != nil {
		return nil, err
	}
	config, err := json.Marshal(ConfigOf(p))
	if err != nil {
		return nil, err
	}
	layer := content.NewDescriptorFromBytes(ContentMediaType, tarball.Bytes())
	layer.Annotations = map[string]string{ocispec.AnnotationTitle: p.TarballName()}
	configDesc := content.NewDescriptorFromBytes(ConfigMediaType, config)
	for _, blob := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{configDesc, config}, {layer, tarball.Bytes()}} {
		if err := pushBlob(ctx, repo, blob.desc, blob.data); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
	}
	manifest, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{
		Layers: []ocispec.Descriptor{layer}, ConfigDescriptor: &configDesc,
		ManifestAnnotations: map[string]string{
			ocispec.AnnotationCreated: created,
			ocispec.AnnotationTitle:   p.Operator.Name,
			ocispec.AnnotationVersion: p.Operator.OperatorVersion,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if err := repo.Tag(ctx, manifest, tag); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return &Pushed{Ref: ref, Digest: manifest.Digest.String(), Size: manifest.Size}, nil
}

func pushBlob(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, data []byte) error {
	exists, err := repo.Exists(ctx, desc)
	if err != nil || exists {
		return err
	}
	return repo.Push(ctx, desc, bytes.NewReader(data))
}

// Pulled is a package read from a registry, and the digest of its manifest.
type Pulled struct {
	Package *packages.Package
	// Digest is the manifest's, which a tag resolved to.
	Digest string
	// Tarball is the layer as pushed.
	Tarball []byte
}

// Pull reads the package ref names, by tag or by digest; a tag is resolved
// to a digest once, and the content read is checked against it.
func (c *Client) Pull(ctx context.Context, ref string) (*Pulled, error) {
	repo, desc, layer, err := c.packageManifest(ctx, ref)
	if err != nil {
		return nil, err
	}
	tarball, err := content.FetchAll(ctx, repo, layer)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resolved(ref, desc), err)
	}
	p, err := packages.ReadTarball(bytes.NewReader(tarball))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resolved(ref, desc), err)
	}
	p.Origin = byDigest(repo, desc)
	return &Pulled{Package: p, Digest: desc.Digest.String(), Tarball: tarball}, nil
}

// packageManifest reads the manifest of the package ref names: its
// repository, the manifest's descriptor, and its tarball's layer.
func (c *Client) packageManifest(ctx context.Context, ref string) (*remote.Repository, ocispec.Descriptor, ocispec.Descriptor, error) {
	repo, reference, err := c.repository(ref)
	if err != nil {
		return nil, ocispec.Descriptor{}, ocispec.Descriptor{}, err
	}
	desc, manifest, err := fetchManifest(ctx, repo, reference)
	if err != nil {
		return nil, desc, ocispec.Descriptor{}, fmt.Errorf("%s: %w", ref, err)
	}
	layer, err := packageLayer(manifest)
	if err != nil {
		return nil, desc, layer, fmt.Errorf("%s: %w", resolved(ref, desc), err)
	}
	return repo, desc, layer, nil
}

// byDigest names the manifest desc of repo by its digest.
func byDigest(repo *remote.Repository, desc ocispec.Descriptor) string {
	r := repo.Reference
	return Scheme + r.Registry + "/" + r.Repository + "@" + desc.Digest.String()
}

// resolved names ref and, when it names a tag, the digest it resolved to.
func resolved(ref string, desc ocispec.Descriptor) string {
	if strings.HasSuffix(ref, "@"+desc.Digest.String()) {
		return ref
	}
	return ref + " (" + desc.Digest.String() + ")"
}

// Resolve is the digest of the manifest ref names.
func (c *Client) Resolve(ctx context.Context, ref string) (string, error) {
	repo, reference, err := c.repository(ref)
	if err != nil {
		return "", err
	}
	desc, err := repo.Resolve(ctx, reference)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, err)
	}
	return desc.Digest.String(), nil
}

// errNotAPackage is what another artifact than a package is.
var errNotAPackage = errors.New("not a package")

// fetchManifest reads the manifest reference names, within
// MaxMetadataBytes, checked against its digest.
func fetchManifest(ctx context.Context, repo *remote.Repository, reference string) (ocispec.Descriptor, *ocispec.Manifest, error) {
	desc, rc, err := repo.FetchReference(ctx, reference)
	if err != nil {
		return desc, nil, err
	}
	defer func() { _ = rc.Close() }()
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return desc, nil, fmt.Errorf("%w: a %s, where a package is an OCI image manifest", errNotAPackage, desc.MediaType)
	}
	if desc.Size > MaxMetadataBytes {
		return desc, nil, fmt.Errorf("the manifest is %d bytes, more than the %d a package's may be", desc.Size, MaxMetadataBytes)
	}
	data, err := content.ReadAll(rc, desc)
	if err != nil {
		return desc, nil, err
	}
	manifest := &ocispec.Manifest{}
	if err := json.Unmarshal(data, manifest); err != nil {
		return desc, nil, fmt.Errorf("reading the manifest: %w", err)
	}
	return desc, manifest, nil
}

// packageLayer is the tarball's layer of a package's manifest.
func packageLayer(m *ocispec.Manifest) (ocispec.Descriptor, error) {
	if m.ArtifactType != ArtifactType || m.Config.MediaType != ConfigMediaType {
		return ocispec.Descriptor{}, fmt.Errorf("%w: artifact type %q, config %q, where a package is a %s",
			errNotAPackage, m.ArtifactType, m.Config.MediaType, ArtifactType)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != ContentMediaType {
		return ocispec.Descriptor{}, fmt.Errorf("%w: a package has one layer, its tarball", errNotAPackage)
	}
	layer := m.Layers[0]
	if layer.Size < 0 || layer.Size > packages.MaxTarballSize {
		return ocispec.Descriptor{}, fmt.Errorf("the package's tarball is %d bytes, more than the limit of %d",
			layer.Size, packages.MaxTarballSize)
	}
	return layer, nil
}

// repository is the repository of ref, and its tag or digest.
func (c *Client) repository(ref string) (*remote.Repository, string, error) {
	if !IsRef(ref) {
		return nil, "", fmt.Errorf("%s: not a package in a registry, which starts with %s", ref, Scheme)
	}
	repo, err := remote.NewRepository(strings.TrimPrefix(ref, Scheme))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", ref, err)
	}
	if repo.Reference.Reference == "" {
		return nil, "", fmt.Errorf("%s: name a tag (:TAG) or a digest (@sha256:...)", ref)
	}
	if err := c.connect(repo); err != nil {
		return nil, "", err
	}
	return repo, repo.Reference.Reference, nil
}

// connect makes repo reach its registry as the client says.
func (c *Client) connect(repo *remote.Repository) error {
	credential := c.Credential
	if credential == nil {
		store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
		if err != nil {
			return fmt.Errorf("reading the Docker configuration for the credentials of %s: %w", repo.Reference.Registry, err)
		}
		credential = credentials.Credential(store)
	}
	repo.Client = &auth.Client{Client: c.HTTPClient, Credential: credential, Cache: auth.NewCache()}
	repo.PlainHTTP = c.PlainHTTP
	repo.MaxMetadataBytes = MaxMetadataBytes
	return nil
}
