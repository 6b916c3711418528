package ocipkg

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// TestTheVersionsOfARepositoryAreThePackagesItsTagsName: signatures, the
// referrers tags of a registry without the referrers API and other
// artifacts are no versions.
func TestTheVersionsOfARepositoryAreThePackagesItsTagsName(t *testing.T) {
	c, host := newRegistry(t, false, nil)
	ctx := context.Background()
	repository := Scheme + host + "/packages/hello"
	hello, err := c.Push(ctx, readPackage(t, helloDir), repository+":0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, readPackage(t, helloDir), repository+":latest"); err != nil {
		t.Fatal(err)
	}
	widget, err := c.Push(ctx, readPackage(t, widgetDir), repository+":widget")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := newSigner(t, "key")
	if _, err := c.Sign(ctx, repository+":0.1.0", signer); err != nil {
		t.Fatal(err)
	}
	a := newArtifacts(t, c, repository)
	a.manifest("chart", "application/vnd.example.chart.v1", nil, nil)

	versions, err := c.Versions(ctx, repository)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range versions {
		got = append(got, fmt.Sprintf("%s=%s %s %s", v.Tag, v.Config.Name, v.Config.OperatorVersion, v.Ref))
	}
	want := []string{
		"0.1.0=hello 0.1.0 " + repository + "@" + hello.Digest,
		"latest=hello 0.1.0 " + repository + "@" + hello.Digest,
		"widget=widget " + ConfigOf(readPackage(t, widgetDir)).OperatorVersion + " " + repository + "@" + widget.Digest,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Versions =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The config is the whole of what the package's says.
	if want := ConfigOf(readPackage(t, widgetDir)); len(versions) == 3 && !reflect.DeepEqual(versions[2].Config, want) {
		t.Errorf("widget's config = %+v, want %+v", versions[2].Config, want)
	}
}

func TestVersionsNeedsARepositoryAndBoundsWhatItReads(t *testing.T) {
	// tags serves a tag list of n tags for the repository p/many.
	tags := func(n int) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v2/p/many/tags/list" {
					next.ServeHTTP(w, r)
					return
				}
				list := struct {
					Name string   `json:"name"`
					Tags []string `json:"tags"`
				}{Name: "p/many"}
				for k := range n {
					list.Tags = append(list.Tags, fmt.Sprintf("t%03d", k))
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(list)
			})
		}
	}
	c, host := newRegistry(t, true, tags(MaxVersions+1))
	ctx := context.Background()
	// p/big's config is over the bound; p/bad's is no JSON.
	for repository, config := range map[string][]byte{"big": []byte("{}"), "bad": []byte("not JSON")} {
		a := newArtifacts(t, c, Scheme+host+"/p/"+repository)
		desc := a.blob(ConfigMediaType, config)
		if repository == "big" {
			desc.Size = MaxMetadataBytes + 1
		}
		manifest, err := oras.PackManifest(ctx, a.repo, oras.PackManifestVersion1_1, ArtifactType,
			oras.PackManifestOptions{Layers: []ocispec.Descriptor{a.blob(ContentMediaType, []byte("tarball"))}, ConfigDescriptor: &desc})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.repo.Tag(ctx, manifest, "1.0.0"); err != nil {
			t.Fatal(err)
		}
	}
	_, bounded := newRegistry(t, true, tags(MaxVersions))
	for _, tt := range []struct {
		c          *Client
		repository string
		want       string
	}{
		{c, "r.example/p/hello", "r.example/p/hello: not a repository in a registry, which starts with oci://"},
		{c, "oci://r.example/p/hello:1", "oci://r.example/p/hello:1: a repository, whose tags are its versions, names no tag nor digest"},
		{c, "oci://r.example/p/HELLO", "oci://r.example/p/HELLO: invalid reference: "},
		{c, Scheme + host + "/p/big", Scheme + host + "/p/big:1.0.0: its config is 1048577 bytes, more than the 1048576 a package's may be"},
		{c, Scheme + host + "/p/bad", Scheme + host + "/p/bad:1.0.0: reading its config: "},
		{c, Scheme + host + "/p/many", Scheme + host + "/p/many has more than 256 tags: name the package's tag"},
		// As many tags as it may read: it reads the first.
		{&Client{PlainHTTP: true, Credential: auth.StaticCredential(bounded, auth.EmptyCredential)}, Scheme + bounded + "/p/many",
			Scheme + bounded + "/p/many:t000: "},
	} {
		if _, err := tt.c.Versions(ctx, tt.repository); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Versions(%s) = %v, want an error starting %q", tt.repository, err, tt.want)
		}
	}
}
