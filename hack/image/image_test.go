package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

var epoch = time.Unix(0, 0).UTC()

// hostBinaries writes binaries of the given contents, by base name, as
// --binary would give them.
func hostBinaries(t *testing.T, contents map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for n, c := range contents {
		paths[n] = filepath.Join(dir, n)
		if err := os.WriteFile(paths[n], []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// catalogContext is a build context for catalogDockerfile: its modes are
// not the ones the image gets, and it has an empty directory.
func catalogContext(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, mode := range map[string]os.FileMode{"catalog/index.yaml": 0o600, "catalog/kudo-ng/bundle.yaml": 0o664, "catalog/hook.sh": 0o700} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "catalog/empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func build(t *testing.T, dockerfile string, src sources, created time.Time) v1.Image {
	t.Helper()
	st, err := parseDockerfile(dockerfile, bases)
	if err != nil {
		t.Fatal(err)
	}
	img, err := buildImage(st, src, []byte("certificates"), "arm64", created)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// eachEntry calls f with every entry of an image's layers, in order.
func eachEntry(t *testing.T, img v1.Image, f func(layer int, hdr *tar.Header, r io.Reader)) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range layers {
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
			f(i, hdr, tr)
		}
		_ = rc.Close()
	}
}

// files lists an image's files, layer by layer, as "path mode uid:gid".
func files(t *testing.T, img v1.Image) []string {
	t.Helper()
	var out []string
	eachEntry(t, img, func(_ int, hdr *tar.Header, _ io.Reader) {
		if !hdr.ModTime.Equal(epoch) {
			t.Errorf("%s: mtime %v, want %v", hdr.Name, hdr.ModTime, epoch)
		}
		out = append(out, fmt.Sprintf("%s %v %d:%d", hdr.Name, hdr.FileInfo().Mode(), hdr.Uid, hdr.Gid))
	})
	return out
}

// contents is what an image's files hold, by path.
func contents(t *testing.T, img v1.Image) map[string]string {
	t.Helper()
	out := map[string]string{}
	eachEntry(t, img, func(_ int, hdr *tar.Header, r io.Reader) {
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		out[hdr.Name] = string(data)
	})
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
	with := func(files ...string) []string { return append(slices.Clone(baseFiles), files...) }
	manager := sources{binaries: hostBinaries(t, map[string]string{"manager": "manager"})}
	for _, tc := range []struct {
		name, dockerfile string
		src              sources
		want             []string
		wantContents     map[string]string
	}{{
		name:         "the real Dockerfile",
		dockerfile:   readDockerfile(t),
		src:          manager,
		want:         with("manager -rwxr-xr-x 0:0"),
		wantContents: map[string]string{"manager": "manager"},
	}, {
		name: "directories the base lacks",
		dockerfile: builder + "FROM gcr.io/distroless/static:nonroot\nWORKDIR /srv/app\nWORKDIR /tmp\n" +
			"COPY --from=builder /workspace/manager /usr/local/bin/\n",
		src: manager,
		want: with(
			"srv/ drwxr-xr-x 0:0", "srv/app/ drwxr-xr-x 0:0",
			"usr/ drwxr-xr-x 0:0", "usr/local/ drwxr-xr-x 0:0", "usr/local/bin/ drwxr-xr-x 0:0",
			"usr/local/bin/manager -rwxr-xr-x 0:0"),
	}, {
		name:       "a file to a directory the image has goes into it, as in Docker",
		dockerfile: builder + "FROM gcr.io/distroless/static:nonroot\nCOPY --from=builder /workspace/manager /tmp\n",
		src:        manager,
		want:       with("tmp/manager -rwxr-xr-x 0:0"),
	}, {
		name:       "OLM's image: several binaries, busybox renamed",
		dockerfile: olmDockerfile,
		src: sources{binaries: hostBinaries(t, map[string]string{
			"olm": "olm", "catalog": "catalog", "package-server": "package-server",
			"copy-content": "copy-content", "cpb": "cpb", "busybox": "busybox",
		})},
		want: with(
			"bin/ drwxr-xr-x 0:0", "bin/catalog -rwxr-xr-x 0:0", "bin/copy-content -rwxr-xr-x 0:0", "bin/cp -rwxr-xr-x 0:0",
			"bin/cpb -rwxr-xr-x 0:0", "bin/olm -rwxr-xr-x 0:0", "bin/package-server -rwxr-xr-x 0:0"),
		wantContents: map[string]string{"bin/cp": "busybox", "bin/olm": "olm", "bin/package-server": "package-server"},
	}, {
		name:       "the catalog image: binaries and a directory of the context",
		dockerfile: catalogDockerfile,
		src: sources{
			binaries: hostBinaries(t, map[string]string{"opm": "opm", "grpc_health_probe": "grpc_health_probe"}),
			context:  catalogContext(t),
		},
		want: with(
			"bin/ drwxr-xr-x 0:0", "bin/grpc_health_probe -rwxr-xr-x 0:0", "bin/opm -rwxr-xr-x 0:0",
			"configs/ drwxr-xr-x 0:0", "configs/empty/ drwxr-xr-x 0:0", "configs/hook.sh -rwxr-xr-x 0:0",
			"configs/index.yaml -rw-r--r-- 0:0", "configs/kudo-ng/ drwxr-xr-x 0:0", "configs/kudo-ng/bundle.yaml -rw-r--r-- 0:0",
			"tmp/cache/ drwxr-xr-x 1001:1001", "tmp/cache/bundle.yaml -rw-r--r-- 1001:1001"),
		wantContents: map[string]string{"configs/index.yaml": "catalog/index.yaml", "configs/kudo-ng/bundle.yaml": "catalog/kudo-ng/bundle.yaml"},
	}, {
		name: "context files: to a path, into a directory, several to one; a later COPY replaces",
		dockerfile: builder + "FROM gcr.io/distroless/static:nonroot\nWORKDIR /srv\n" +
			"COPY catalog/index.yaml /etc/index\nCOPY /catalog/hook.sh catalog/index.yaml hooks\n" +
			"COPY catalog/kudo-ng/bundle.yaml ./\nCOPY catalog/hook.sh /etc/index\n",
		src: sources{context: catalogContext(t)},
		want: with(
			"etc/index -rwxr-xr-x 0:0", "srv/ drwxr-xr-x 0:0", "srv/bundle.yaml -rw-r--r-- 0:0",
			"srv/hooks/ drwxr-xr-x 0:0", "srv/hooks/hook.sh -rwxr-xr-x 0:0", "srv/hooks/index.yaml -rw-r--r-- 0:0"),
		wantContents: map[string]string{"etc/index": "catalog/hook.sh", "srv/hooks/index.yaml": "catalog/index.yaml"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			img := build(t, tc.dockerfile, tc.src, epoch)
			if d := cmp.Diff(tc.want, files(t, img)); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			got := contents(t, img)
			for p, want := range tc.wantContents {
				if got[p] != want {
					t.Errorf("%s holds %q, want %q", p, got[p], want)
				}
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != "linux" || cf.Architecture != "arm64" || !cf.Created.Equal(epoch) {
				t.Errorf("platform %s/%s created %v, want linux/arm64 created %v", cf.OS, cf.Architecture, cf.Created, epoch)
			}
			if n := len(cf.History); n != 2 || cf.History[1].CreatedBy == "" {
				t.Errorf("history %+v, want two entries describing the layers", cf.History)
			}
		})
	}
}

// The repository's bundle.Dockerfile, FROM scratch, built from its bundle/.
func TestBuildBundleImage(t *testing.T) {
	img := build(t, readBundleDockerfile(t), sources{context: "../.."}, epoch)
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Errorf("%d layers, want one: scratch has none", len(layers))
	}
	got := files(t, img)
	for _, want := range []string{
		"manifests/ drwxr-xr-x 0:0",
		"manifests/kudo-ng.clusterserviceversion.yaml -rw-r--r-- 0:0",
		"metadata/annotations.yaml -rw-r--r-- 0:0",
		"tests/scorecard/config.yaml -rw-r--r-- 0:0",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no %s in %v", want, got)
		}
	}
	annotations, err := os.ReadFile("../../bundle/metadata/annotations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c := contents(t, img)["metadata/annotations.yaml"]; c != string(annotations) {
		t.Errorf("metadata/annotations.yaml holds %q, want bundle/'s", c)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.Env != nil || cf.Config.User != "" || cf.Config.WorkingDir != "" {
		t.Errorf("config %+v, want no Env, User or WorkingDir", cf.Config)
	}
	for k, v := range map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
		"operators.operatorframework.io.bundle.package.v1":   "kudo-ng",
	} {
		if cf.Config.Labels[k] != v {
			t.Errorf("label %s is %q, want %q", k, cf.Config.Labels[k], v)
		}
	}
}

func TestBuildImageErrors(t *testing.T) {
	const final = builder + "FROM gcr.io/distroless/static:nonroot\n"
	for _, tc := range []struct {
		name, dockerfile string
		prepare          func(context string) error // on catalogContext's
		want             string
	}{{
		name:       "a symbolic link as a source",
		dockerfile: final + "COPY index /configs/\n",
		prepare:    func(c string) error { return os.Symlink("catalog/index.yaml", filepath.Join(c, "index")) },
		want:       "line 4: COPY: %s/index is a symbolic link: the offline image build (hack/image) copies only files and directories",
	}, {
		name:       "a symbolic link on a source's way",
		dockerfile: final + "COPY configs/index.yaml /configs/\n",
		prepare:    func(c string) error { return os.Symlink("catalog", filepath.Join(c, "configs")) },
		want:       "line 4: COPY: %s/configs is a symbolic link",
	}, {
		name:       "a symbolic link in a directory",
		dockerfile: final + "COPY catalog /configs\n",
		prepare:    func(c string) error { return os.Symlink("/etc/passwd", filepath.Join(c, "catalog/passwd")) },
		want:       "line 4: COPY: %s/catalog/passwd is a symbolic link",
	}, {
		name:       "a named pipe",
		dockerfile: final + "COPY catalog /configs\n",
		prepare:    func(c string) error { return syscall.Mkfifo(filepath.Join(c, "catalog/pipe"), 0o600) },
		want:       "line 4: COPY: %s/catalog/pipe is neither a file nor a directory",
	}, {
		name:       "a missing source",
		dockerfile: final + "COPY bundle /manifests/\n",
		want:       "line 4: COPY: lstat %s/bundle: no such file or directory",
	}, {
		name:       "a directory onto a file",
		dockerfile: final + "COPY catalog /etc/passwd\n",
		want:       "line 4: COPY: /etc/passwd is a file in the image",
	}, {
		name:       "a file onto a directory",
		dockerfile: final + "COPY catalog /\n",
		prepare:    func(c string) error { return os.WriteFile(filepath.Join(c, "catalog/tmp"), nil, 0o644) },
		want:       "line 4: COPY: /tmp is a directory in the image",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			context := catalogContext(t)
			if tc.prepare != nil {
				if err := tc.prepare(context); err != nil {
					t.Fatal(err)
				}
			}
			st, err := parseDockerfile(tc.dockerfile, bases)
			if err != nil {
				t.Fatal(err)
			}
			_, err = buildImage(st, sources{context: context}, nil, "amd64", epoch)
			if want := strings.ReplaceAll(tc.want, "%s", context); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got error %v, want one containing %q", err, want)
			}
		})
	}
}

// The same inputs give the same digest, whatever the host's times and
// umask; another binary, file or date does not.
func TestBuildImageIsReproducible(t *testing.T) {
	digest := func(dockerfile string, src sources, created time.Time) v1.Hash {
		d, err := build(t, dockerfile, src, created).Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	manager := func(contents string) sources {
		return sources{binaries: hostBinaries(t, map[string]string{"manager": contents})}
	}
	dockerfile := readDockerfile(t)
	first := digest(dockerfile, manager("binary"), epoch)
	if again := digest(dockerfile, manager("binary"), epoch); again != first {
		t.Errorf("two builds: %s and %s", first, again)
	}
	if other := digest(dockerfile, manager("other binary"), epoch); other == first {
		t.Error("another binary gave the same digest")
	}
	if later := digest(dockerfile, manager("binary"), epoch.Add(time.Hour)); later == first {
		t.Error("another SOURCE_DATE_EPOCH gave the same digest")
	}

	src := sources{binaries: hostBinaries(t, map[string]string{"opm": "opm", "grpc_health_probe": "probe"}), context: catalogContext(t)}
	catalog := digest(catalogDockerfile, src, epoch)
	index := filepath.Join(src.context, "catalog/index.yaml")
	if err := os.Chmod(index, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(index, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if again := digest(catalogDockerfile, src, epoch); again != catalog {
		t.Errorf("the catalog changed by its host mode and time only: %s and %s", catalog, again)
	}
	if err := os.WriteFile(index, []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	if other := digest(catalogDockerfile, src, epoch); other == catalog {
		t.Error("another catalog gave the same digest")
	}
}

// The tarball is one that docker load and ctr images import read: a
// docker-archive with the tag in manifest.json, read back as the same image.
func TestTarballReadsBack(t *testing.T) {
	img := build(t, readDockerfile(t), sources{binaries: hostBinaries(t, map[string]string{"manager": "binary"})}, epoch)
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
	if !bytes.Contains(listing, []byte("manifest.json\n")) {
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
