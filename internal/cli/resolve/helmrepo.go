package resolve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	neturl "net/url"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kudo-ng/kudo/internal/yamlbound"
)

// helmIndex is what a download reads of a chart repository's index.yaml:
// Helm's own reader (helm.sh/helm/v4/pkg/repo/v1) brings Helm's plugin
// runtime and Kubernetes client with it.
type helmIndex struct {
	Entries map[string][]helmChartVersion `json:"entries"`
}

type helmChartVersion struct {
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	Digest  string   `json:"digest"`
}

// get is the version of the chart name that version names, exactly or as a
// constraint ("" for any), the newest that does.
func (i *helmIndex) get(name, version string) (*helmChartVersion, error) {
	versions, ok := i.Entries[name]
	if !ok {
		return nil, fmt.Errorf("no chart %s in it", name)
	}
	for k := range versions {
		if versions[k].Version == version {
			return &versions[k], nil
		}
	}
	constraint := "*"
	if version != "" {
		constraint = version
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return nil, fmt.Errorf("--version %s: %w", version, err)
	}
	var newest *helmChartVersion
	var newestVersion *semver.Version
	for k := range versions {
		v, err := semver.NewVersion(versions[k].Version)
		if err != nil || !c.Check(v) {
			continue
		}
		if newestVersion == nil || v.GreaterThan(newestVersion) {
			newest, newestVersion = &versions[k], v
		}
	}
	if newest == nil {
		return nil, fmt.Errorf("no version of chart %s is %s", name, constraint)
	}
	return newest, nil
}

// HelmChart downloads the chart name of the classic Helm chart repository
// at repoURL (its index.yaml, then the chart's first URL), of version, a
// version or a constraint ("" for the newest); a digest the index gives is
// checked. Each download is bounded as a package's. It returns the chart's
// tarball and the URL it came from.
func HelmChart(ctx context.Context, repoURL, name, version string) ([]byte, string, error) {
	base, err := neturl.Parse(strings.TrimSuffix(repoURL, "/") + "/")
	if err != nil {
		return nil, "", fmt.Errorf("--repo %s: %w", repoURL, err)
	}
	indexURL := base.JoinPath("index.yaml").String()
	data, err := download(ctx, indexURL)
	if err != nil {
		return nil, "", err
	}
	// An index's aliases may expand it to what a download holds, no more.
	index := &helmIndex{}
	if err := yamlbound.Unmarshal(data, index, yamlbound.Within(maxDownloadSize)); err != nil {
		return nil, "", fmt.Errorf("%s: %w", indexURL, err)
	}
	found, err := index.get(name, version)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", indexURL, err)
	}
	if len(found.URLs) == 0 {
		return nil, "", fmt.Errorf("%s: chart %s %s has no URL", indexURL, name, found.Version)
	}
	ref, err := neturl.Parse(found.URLs[0])
	if err != nil {
		return nil, "", fmt.Errorf("%s: chart %s %s: %w", indexURL, name, found.Version, err)
	}
	resolved := base.ResolveReference(ref)
	chartURL := resolved.String()
	// An index may not send the download to this machine's files, nor from
	// https to http.
	if resolved.Scheme != base.Scheme && (base.Scheme != "http" || resolved.Scheme != httpsScheme) {
		return nil, "", fmt.Errorf("%s: chart %s %s is at %s, which a repository at %s may not name", indexURL, name, found.Version,
			chartURL, base.Scheme+"://")
	}
	tarball, err := download(ctx, chartURL)
	if err != nil {
		return nil, "", err
	}
	if found.Digest != "" {
		if sum := sha256.Sum256(tarball); !strings.EqualFold(hex.EncodeToString(sum[:]), found.Digest) {
			return nil, "", fmt.Errorf("%s: its sha256 is %x, where %s says %s", chartURL, sum, indexURL, found.Digest)
		}
	}
	return tarball, chartURL, nil
}
