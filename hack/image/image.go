package main

import (
	"archive/tar"
	"bytes"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// base is a local stand-in for a base image. No registry is reachable where
// the image is built, so the base cannot be pulled: its files and config
// that matter to the manager are written here instead.
type base struct {
	config v1.Config
	files  func(caCerts []byte) []file
}

// bases are the base images a Dockerfile's final stage may name.
var bases = map[string]base{
	// As distroless sets it: PATH, and the nonroot user and its home.
	"gcr.io/distroless/static:nonroot": {
		config: v1.Config{
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			User:       "65532",
			WorkingDir: "/home/nonroot",
		},
		files: distrolessStatic,
	},
}

// file is one entry of a layer.
type file struct {
	path     string // absolute
	dir      bool
	mode     int64 // permissions and the sticky bit, as tar has them
	uid, gid int
	data     []byte
}

// distrolessStatic is what gcr.io/distroless/static:nonroot holds that a
// static Go binary may use: users and groups for the numeric USER, name
// resolution through DNS, CA certificates for TLS, and a writable /tmp.
func distrolessStatic(caCerts []byte) []file {
	const nonroot = 65532
	files := []file{
		{path: "/etc", dir: true, mode: 0o755},
		{path: "/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
			"nonroot:x:65532:65532::/home/nonroot:/sbin/nologin\n")},
		{path: "/etc/group", mode: 0o644, data: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		{path: "/etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{path: "/home", dir: true, mode: 0o755},
		{path: "/home/nonroot", dir: true, mode: 0o700, uid: nonroot, gid: nonroot},
		{path: "/tmp", dir: true, mode: 0o1777},
	}
	if caCerts != nil {
		files = append(files,
			file{path: "/etc/ssl", dir: true, mode: 0o755},
			file{path: "/etc/ssl/certs", dir: true, mode: 0o755},
			file{path: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caCerts})
	}
	return files
}

// buildImage writes the image of a stage: the base's stand-in layer, then a
// layer with the binary. created is every file's mtime and the config's
// creation time, so that the same binary gives the same digest.
func buildImage(st stage, binary, caCerts []byte, arch string, created time.Time) (v1.Image, error) {
	baseFiles := st.base.files(caCerts)
	baseLayer, err := layer(baseFiles, created)
	if err != nil {
		return nil, err
	}
	appLayer, err := layer(appFiles(st, binary, baseFiles), created)
	if err != nil {
		return nil, err
	}
	at := v1.Time{Time: created}
	img, err := mutate.Append(empty.Image,
		mutate.Addendum{Layer: baseLayer, History: v1.History{Created: at, CreatedBy: "hack/image: stand-in for " + st.from}},
		mutate.Addendum{Layer: appLayer, History: v1.History{Created: at, CreatedBy: "hack/image: COPY " + st.binary}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created, cf.Config = "linux", arch, at, st.config
	return mutate.ConfigFile(img, cf)
}

// appFiles is the stage's own layer: the binary, and the directories that
// its WORKDIRs and COPY create because the base lacks them.
func appFiles(st stage, binary []byte, baseFiles []file) []file {
	have := map[string]bool{"/": true}
	for _, f := range baseFiles {
		have[f.path] = true
	}
	var files []file
	for _, d := range append(slices.Clone(st.dirs), path.Dir(st.binary)) {
		for p := d; !have[p]; p = path.Dir(p) {
			have[p] = true
			files = append(files, file{path: p, dir: true, mode: 0o755})
		}
	}
	return append(files, file{path: st.binary, mode: 0o755, data: binary})
}

// layer tars files in path order, parents first, with one mtime.
func layer(files []file, mtime time.Time) (v1.Layer, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.path, b.path) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     strings.TrimPrefix(f.path, "/"),
			Mode:     f.mode,
			Uid:      f.uid,
			Gid:      f.gid,
			Size:     int64(len(f.data)),
			ModTime:  mtime,
		}
		if f.dir {
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}
