package packages

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"

	"github.com/kudo-ng/kudo/internal/yamlbound"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// IndexFileName is the name of a repository's index.
const IndexFileName = "index.yaml"

// Index is a repository's index.yaml: every version of every package in it.
type Index struct {
	APIVersion string                       `json:"apiVersion"`
	Entries    map[string][]*PackageVersion `json:"entries"`
	Generated  *time.Time                   `json:"generated,omitempty"`
}

// PackageVersion is one package tarball of a repository.
type PackageVersion struct {
	Name            string                    `json:"name"`
	OperatorVersion string                    `json:"operatorVersion"`
	AppVersion      string                    `json:"appVersion,omitempty"`
	Description     string                    `json:"description,omitempty"`
	Maintainers     []*kudov1beta1.Maintainer `json:"maintainers,omitempty"`
	URLs            []string                  `json:"urls"`
	// Digest is the sha256 of the tarball, in hex.
	Digest string `json:"digest"`
}

// ParseIndex parses an index.yaml, a repository's: its aliases may expand
// it to MaxTarballSize, the most a download holds.
func ParseIndex(data []byte) (*Index, error) {
	index := &Index{}
	if err := yamlbound.Check(data, yamlbound.Within(MaxTarballSize)); err != nil {
		return nil, fmt.Errorf("%s: %w", IndexFileName, err)
	}
	if err := yaml.UnmarshalStrict(data, index); err != nil {
		return nil, fmt.Errorf("%s: %w", IndexFileName, err)
	}
	if index.APIVersion != "v1" {
		return nil, fmt.Errorf("%s: apiVersion %q is not supported, want v1", IndexFileName, index.APIVersion)
	}
	for name, versions := range index.Entries {
		for i, pv := range versions {
			if pv == nil {
				return nil, fmt.Errorf("%s: entries.%s[%d] is null, not a package version", IndexFileName, name, i)
			}
		}
		sortVersions(versions)
	}
	return index, nil
}

// Marshal writes the index as YAML, each package's versions newest first.
func (i *Index) Marshal() ([]byte, error) {
	for _, versions := range i.Entries {
		sortVersions(versions)
	}
	return yaml.Marshal(i)
}

// Add adds a package version, replacing one with the same name, app version
// and operator version.
func (i *Index) Add(pv *PackageVersion) {
	if i.Entries == nil {
		i.Entries = map[string][]*PackageVersion{}
	}
	versions := i.Entries[pv.Name]
	for j, existing := range versions {
		if existing.OperatorVersion == pv.OperatorVersion && existing.AppVersion == pv.AppVersion {
			versions[j] = pv
			return
		}
	}
	i.Entries[pv.Name] = append(versions, pv)
	sortVersions(i.Entries[pv.Name])
}

// Has says whether the index has the package version: the same name,
// operator version and app version.
func (i *Index) Has(pv *PackageVersion) bool {
	for _, existing := range i.Entries[pv.Name] {
		if existing.OperatorVersion == pv.OperatorVersion && existing.AppVersion == pv.AppVersion {
			return true
		}
	}
	return false
}

// IndexDirectory indexes the package tarballs (*.tgz) of a directory; each
// URL is baseURL joined with the file name.
func IndexDirectory(dir, baseURL string, now time.Time) (*Index, error) {
	tarballs, err := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if err != nil {
		return nil, err
	}
	index := &Index{APIVersion: "v1", Entries: map[string][]*PackageVersion{}, Generated: &now}
	for _, tarball := range tarballs {
		pv, err := indexTarball(tarball, baseURL)
		if err != nil {
			return nil, err
		}
		index.Add(pv)
	}
	return index, nil
}

func indexTarball(tarball, baseURL string) (*PackageVersion, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	p, err := ReadTarball(io.TeeReader(f, h))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tarball, err)
	}
	// The gzip reader may stop before the end of the file: hash the rest.
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	o := p.Operator
	return &PackageVersion{
		Name:            o.Name,
		OperatorVersion: o.OperatorVersion,
		AppVersion:      o.AppVersion,
		Description:     o.Description,
		Maintainers:     o.Maintainers,
		URLs:            []string{strings.TrimSuffix(baseURL, "/") + "/" + filepath.Base(tarball)},
		Digest:          hex.EncodeToString(h.Sum(nil)),
	}, nil
}

// sortVersions orders newest first: by operator version, then app version;
// versions that parse as semver by semver, newer than those that do not,
// which are compared as text. Comparing by semver where both parse and as
// text otherwise was no order: 1.10.0 > 1.9.0 > 1.2x > 1.10.0, and 1.10.0
// could sort last.
func sortVersions(versions []*PackageVersion) {
	sort.SliceStable(versions, func(a, b int) bool {
		if c := CompareVersions(versions[a].OperatorVersion, versions[b].OperatorVersion); c != 0 {
			return c > 0
		}
		return CompareVersions(versions[a].AppVersion, versions[b].AppVersion) > 0
	})
}

// CompareVersions orders versions: semver ones by semver and above the
// others, which are compared as text.
func CompareVersions(a, b string) int {
	va, errA := semver.NewVersion(a)
	vb, errB := semver.NewVersion(b)
	switch {
	case errA == nil && errB == nil:
		return va.Compare(vb)
	case errA == nil:
		return 1
	case errB == nil:
		return -1
	}
	return strings.Compare(a, b)
}
