package ocipkg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
)

// MaxVersions is how many tags of a repository Versions reads, at most:
// each costs two requests.
const MaxVersions = 256

// Version is a package a repository's tag names.
type Version struct {
	Tag    string
	Config Config
	// Ref names the package by its digest.
	Ref string
}

// errTooManyTags ends the listing of tags past MaxVersions.
var errTooManyTags = errors.New("too many tags")

// Versions reads the packages the tags of a repository
// (oci://REGISTRY/REPOSITORY) name: its tags are its versions. Tags of
// what is not a package (signatures, the referrers tags) are skipped.
func (c *Client) Versions(ctx context.Context, repository string) ([]Version, error) {
	if !IsRef(repository) {
		return nil, fmt.Errorf("%s: not a repository in a registry, which starts with %s", repository, Scheme)
	}
	repo, err := remote.NewRepository(strings.TrimPrefix(repository, Scheme))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", repository, err)
	}
	if repo.Reference.Reference != "" {
		return nil, fmt.Errorf("%s: a repository, whose tags are its versions, names no tag nor digest", repository)
	}
	if err := c.connect(repo); err != nil {
		return nil, err
	}
	var tags []string
	err = repo.Tags(ctx, "", func(page []string) error {
		tags = append(tags, page...)
		if len(tags) > MaxVersions {
			return errTooManyTags
		}
		return nil
	})
	if errors.Is(err, errTooManyTags) {
		return nil, fmt.Errorf("%s has more than %d tags: name the package's tag", repository, MaxVersions)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: listing its tags: %w", repository, err)
	}
	var versions []Version
	for _, tag := range tags {
		desc, manifest, err := fetchManifest(ctx, repo, tag)
		if err == nil {
			_, err = packageLayer(manifest)
		}
		if errors.Is(err, errNotAPackage) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%s: %w", repository, tag, err)
		}
		if manifest.Config.Size > MaxMetadataBytes {
			return nil, fmt.Errorf("%s:%s: its config is %d bytes, more than the %d a package's may be",
				repository, tag, manifest.Config.Size, MaxMetadataBytes)
		}
		data, err := content.FetchAll(ctx, repo, manifest.Config)
		if err != nil {
			return nil, fmt.Errorf("%s:%s: %w", repository, tag, err)
		}
		v := Version{Tag: tag, Ref: byDigest(repo, desc)}
		if err := json.Unmarshal(data, &v.Config); err != nil {
			return nil, fmt.Errorf("%s:%s: reading its config: %w", repository, tag, err)
		}
		versions = append(versions, v)
	}
	return versions, nil
}
