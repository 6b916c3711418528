package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

var epoch = time.Unix(0, 0).UTC()

func build(t *testing.T, dockerfile, binary string, created time.Time) v1.Image {
	t.Helper()
	st, err := parseDockerfile(dockerfile, bases)
	if err != nil {
		t.Fatal(err)
	}
	img, err := buildImage(st, []byte(binary), []byte("certificates"), "arm64", created)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// files lists an image's files, layer by layer, as "path mode uid:gid".
func files(t *testing.T, img v1.Image) []string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !hdr.ModTime.Equal(epoch) {
				t.Errorf("%s: mtime %v, want %v", hdr.Name, hdr.ModTime, epoch)
			}
			out = append(out, fmt.Sprintf("%s %v %d:%d", hdr.Name, hdr.FileInfo().Mode(), hdr.Uid, hdr.Gid))
		}
		_ = rc.Close()
	}
	return out
}

func TestBuildImage(t *testing.T) {
	baseFiles := []string{
		"etc/ drwxr-xr-x 0:0",
		"etc/group -rw-r--r-- 0:0",
		"etc/nsswitch.conf -rw-r--r-- 0:0",
		"etc/passwd -rw-r--r-- 0:0",
		"etc/ssl/ drwxr-xr-x 0:0",
		"etc/ssl/certs/ drwxr-xr-x 0:0",
		"etc/ssl/certs/ca-certificates.crt -rw-r--r-- 0:0",
		"home/ drwxr-xr-x 0:0",
		"home/nonroot/ drwx------ 65532:65532",
		"tmp/ dtrwxrwxrwx 0:0",
	}
	for _, tc := range []struct {
		name, dockerfile string
		want             []string
	}{{
		name:       "the real Dockerfile",
		dockerfile: readDockerfile(t),
		want:       append(baseFiles, "manager -rwxr-xr-x 0:0"),
	}, {
		name: "directories the base lacks",
		dockerfile: builder + "FROM gcr.io/distroless/static:nonroot\nWORKDIR /srv/app\nWORKDIR /tmp\n" +
			"COPY --from=builder /workspace/manager /usr/local/bin/\n",
		want: append(baseFiles,
			"srv/ drwxr-xr-x 0:0", "srv/app/ drwxr-xr-x 0:0",
			"usr/ drwxr-xr-x 0:0", "usr/local/ drwxr-xr-x 0:0", "usr/local/bin/ drwxr-xr-x 0:0",
			"usr/local/bin/manager -rwxr-xr-x 0:0"),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			img := build(t, tc.dockerfile, "binary", epoch)
			if d := cmp.Diff(tc.want, files(t, img)); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != "linux" || cf.Architecture != "arm64" || !cf.Created.Equal(epoch) {
				t.Errorf("platform %s/%s created %v, want linux/arm64 created %v", cf.OS, cf.Architecture, cf.Created, epoch)
			}
		})
	}
}

// The same binary gives the same digest; another binary or date does not.
func TestBuildImageIsReproducible(t *testing.T) {
	dockerfile := readDockerfile(t)
	digest := func(binary string, created time.Time) v1.Hash {
		d, err := build(t, dockerfile, binary, created).Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest("binary", epoch)
	if again := digest("binary", epoch); again != first {
		t.Errorf("two builds: %s and %s", first, again)
	}
	if other := digest("other binary", epoch); other == first {
		t.Error("another binary gave the same digest")
	}
	if later := digest("binary", epoch.Add(time.Hour)); later == first {
		t.Error("another SOURCE_DATE_EPOCH gave the same digest")
	}
}

// The tarball is one that docker load and ctr images import read: a
// docker-archive with the tag in manifest.json, read back as the same image.
func TestTarballReadsBack(t *testing.T) {
	img := build(t, readDockerfile(t), "binary", epoch)
	tag, err := name.NewTag("ghcr.io/kudo-ng/kudo:v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "manager.tar")
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		t.Fatal(err)
	}
	listing, err := exec.Command("tar", "tf", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(listing), "manifest.json\n") {
		t.Errorf("tar tf: no manifest.json in\n%s", listing)
	}
	read, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatal(err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := read.Digest(); err != nil || got != want {
		t.Errorf("read back digest %s (%v), want %s", got, err, want)
	}
}

func TestCheckBinary(t *testing.T) {
	settings := func(goos, arch, cgo string) *debug.BuildInfo {
		return &debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"}, {Key: "CGO_ENABLED", Value: cgo}, {Key: "GOARCH", Value: arch}, {Key: "GOOS", Value: goos},
		}}
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"static linux/amd64", settings("linux", "amd64", "0"), ""},
		{"another arch", settings("linux", "arm64", "0"), "built with GOARCH=arm64, the image needs GOARCH=amd64"},
		{"cgo", settings("linux", "amd64", "1"), "built with CGO_ENABLED=1"},
		{"darwin", settings("darwin", "amd64", "0"), "built with GOOS=darwin"},
		{"no settings", &debug.BuildInfo{}, "its build settings lack CGO_ENABLED, GOARCH, GOOS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkBinary(tc.info, "amd64")
			if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || !strings.Contains(got, tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSourceDate(t *testing.T) {
	for _, tc := range []struct {
		epoch   string
		want    time.Time
		wantErr bool
	}{
		{"", epoch, false},
		{"1700000000", time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC), false},
		{"yesterday", time.Time{}, true},
	} {
		got, err := sourceDate(tc.epoch)
		if !got.Equal(tc.want) || (err != nil) != tc.wantErr {
			t.Errorf("sourceDate(%q) = %v, %v; want %v, error %t", tc.epoch, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestReference(t *testing.T) {
	for _, tc := range []struct {
		tag, plainHTTP string
		wantScheme     string
		wantErr        bool
	}{
		{"registry.test:5000/kudo:v1", "registry.test:5000", "http", false},
		{"registry.test:5000/kudo:v1", "", "https", false},
		{"registry.test:5000/kudo:v1", "registry.test:5001", "https", false},
		{"ghcr.io/kudo-ng/kudo:v0.1.0", "registry.test:5000", "https", false},
		{"Not A Tag", "registry.test:5000", "", true},
	} {
		got, err := reference(tc.tag, tc.plainHTTP)
		if (err != nil) != tc.wantErr {
			t.Errorf("reference(%q, %q): error %v, want one: %t", tc.tag, tc.plainHTTP, err, tc.wantErr)
			continue
		}
		if err == nil && got.Scheme() != tc.wantScheme {
			t.Errorf("reference(%q, %q) speaks %s, want %s", tc.tag, tc.plainHTTP, got.Scheme(), tc.wantScheme)
		}
	}
}
