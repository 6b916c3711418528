package ocipkg

import (
	"context"
	"fmt"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/kudo-ng/kudo/internal/packages"
)

// Media types of a Helm chart in a registry, as `helm push` writes it.
const (
	ChartConfigMediaType  = "application/vnd.cncf.helm.config.v1+json"
	ChartContentMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// PulledChart is a Helm chart read from a registry: its tarball, as `helm
// package` wrote it, and its reference by the digest it resolved to.
type PulledChart struct {
	Tarball []byte
	Ref     string
}

// PullChart reads the Helm chart ref names, by tag or by digest, within
// the bound of a package's tarball, checked against the digest the tag
// resolved to.
func (c *Client) PullChart(ctx context.Context, ref string) (*PulledChart, error) {
	repo, reference, err := c.repository(ref)
	if err != nil {
		return nil, err
	}
	desc, manifest, err := fetchManifest(ctx, repo, reference)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	layer, err := chartLayer(manifest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resolved(ref, desc), err)
	}
	tarball, err := content.FetchAll(ctx, repo, layer)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resolved(ref, desc), err)
	}
	return &PulledChart{Tarball: tarball, Ref: byDigest(repo, desc)}, nil
}

// chartLayer is the chart's layer of a Helm chart's manifest; a
// provenance layer beside it is left.
func chartLayer(m *ocispec.Manifest) (ocispec.Descriptor, error) {
	if m.Config.MediaType != ChartConfigMediaType {
		return ocispec.Descriptor{}, fmt.Errorf("not a Helm chart: config %q, where a chart's is %s", m.Config.MediaType, ChartConfigMediaType)
	}
	var charts []ocispec.Descriptor
	for _, l := range m.Layers {
		if l.MediaType == ChartContentMediaType {
			charts = append(charts, l)
		}
	}
	if len(charts) != 1 {
		return ocispec.Descriptor{}, fmt.Errorf("a Helm chart has one layer of %s, this has %d", ChartContentMediaType, len(charts))
	}
	if layer := charts[0]; layer.Size < 0 || layer.Size > packages.MaxTarballSize {
		return ocispec.Descriptor{}, fmt.Errorf("the chart's tarball is %d bytes, more than the limit of %d", layer.Size, packages.MaxTarballSize)
	}
	return charts[0], nil
}
