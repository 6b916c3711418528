package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
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
	// Empty: no files, no config.
	"scratch": {files: func([]byte) []file { return nil }},
}

// file is one entry of a layer.
type file struct {
	path     string // absolute
	dir      bool
	mode     int64 // permissions and the sticky bit, as tar has them
	uid, gid int
	data     []byte
	source   string // a host file whose contents it has instead, read when the layer is written
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

// sources are where a stage's COPYs read: the host's builds of the builder
// stage's binaries, by base name (--binary), and the build context.
type sources struct {
	binaries map[string]string
	context  string
}

// buildImage writes the image of a stage: the base's stand-in layer if the
// base has files, then one layer with what the stage adds. created is every
// file's mtime and the config's creation time, so that the same inputs give
// the same digest.
func buildImage(st stage, src sources, caCerts []byte, arch string, created time.Time) (v1.Image, error) {
	baseFiles := st.base.files(caCerts)
	added, err := stageFiles(st, baseFiles, src)
	if err != nil {
		return nil, err
	}
	at := v1.Time{Time: created}
	var addenda []mutate.Addendum
	if len(baseFiles) > 0 {
		baseLayer, err := layer(baseFiles, created)
		if err != nil {
			return nil, err
		}
		addenda = append(addenda, mutate.Addendum{
			Layer: baseLayer, History: v1.History{Created: at, CreatedBy: "hack/image: stand-in for " + st.from}})
	}
	stageLayer, err := layer(added, created)
	if err != nil {
		return nil, err
	}
	steps := make([]string, len(st.additions))
	for i, a := range st.additions {
		steps[i] = a.in.String()
	}
	addenda = append(addenda, mutate.Addendum{
		Layer: stageLayer, History: v1.History{Created: at, CreatedBy: "hack/image: " + strings.Join(steps, "; ")}})
	img, err := mutate.Append(empty.Image, addenda...)
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

// stageFiles applies the stage's WORKDIRs and COPYs, in order, to the base's
// files, and returns the files they add or replace: the stage's layer.
func stageFiles(st stage, baseFiles []file, src sources) ([]file, error) {
	t := tree{isDir: map[string]bool{"/": true}, added: map[string]file{}}
	for _, f := range baseFiles {
		t.isDir[f.path] = f.dir
	}
	for _, a := range st.additions {
		if err := t.add(a, src); err != nil {
			return nil, a.in.errorf("%v", err)
		}
	}
	return slices.Collect(maps.Values(t.added)), nil
}

// tree is the image's paths as the stage's instructions change them.
type tree struct {
	isDir map[string]bool // every path the image has, the base's and the stage's
	added map[string]file
}

// add applies one WORKDIR or COPY with Docker's semantics: a directory
// source copies its contents to dest; a file goes into dest if dest is a
// directory, else it is dest.
func (t tree) add(a addition, src sources) error {
	if len(a.srcs) == 0 {
		return t.mkdirAll(a.dest, a.owner)
	}
	for _, s := range a.srcs {
		if a.builder {
			// The binaries keep the mode go build gives them.
			name := path.Base(s)
			f := file{path: t.target(a, name), mode: 0o755, uid: a.owner.uid, gid: a.owner.gid, source: src.binaries[name]}
			if err := t.putFile(f, a.owner); err != nil {
				return err
			}
			continue
		}
		info, err := lstatInContext(src.context, s)
		if err != nil {
			return err
		}
		host := filepath.Join(src.context, filepath.FromSlash(s))
		if !info.IsDir() {
			if err := t.putHostFile(t.target(a, path.Base(s)), host, info, a.owner); err != nil {
				return err
			}
			continue
		}
		err = filepath.WalkDir(host, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(host, p)
			if err != nil {
				return err
			}
			dest := path.Join(a.dest, filepath.ToSlash(rel))
			if d.IsDir() {
				return t.mkdirAll(dest, a.owner)
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return t.putHostFile(dest, p, info, a.owner)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// target is where a file source named name goes.
func (t tree) target(a addition, name string) string {
	if a.into || t.isDir[a.dest] {
		return path.Join(a.dest, name)
	}
	return a.dest
}

// lstatInContext stats a source in the build context, refusing a symbolic
// link on its way: Docker follows links within the context, which the
// offline build does not reproduce.
func lstatInContext(context, rel string) (fs.FileInfo, error) {
	for p := rel; p != "."; p = path.Dir(p) {
		host := filepath.Join(context, filepath.FromSlash(p))
		info, err := os.Lstat(host)
		if err != nil {
			return nil, err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil, symlinkError(host)
		}
	}
	return os.Lstat(filepath.Join(context, filepath.FromSlash(rel)))
}

func symlinkError(name string) error {
	return fmt.Errorf("%s is a symbolic link: the offline image build (hack/image) copies only files and directories", name)
}

// putHostFile adds a regular file of the host's. Its mode is the host's
// execute bit only, so that the host's umask does not change the image.
func (t tree) putHostFile(dest, host string, info fs.FileInfo, o owner) error {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return symlinkError(host)
	case !info.Mode().IsRegular():
		return fmt.Errorf("%s is neither a file nor a directory", host)
	}
	mode := int64(0o644)
	if info.Mode()&0o111 != 0 {
		mode = 0o755
	}
	return t.putFile(file{path: dest, mode: mode, uid: o.uid, gid: o.gid, source: host}, o)
}

// putFile adds a file, replacing one at its path, and its missing parents,
// which o owns.
func (t tree) putFile(f file, o owner) error {
	if err := t.mkdirAll(path.Dir(f.path), o); err != nil {
		return err
	}
	if t.isDir[f.path] {
		return fmt.Errorf("%s is a directory in the image", f.path)
	}
	t.isDir[f.path] = false
	t.added[f.path] = f
	return nil
}

// mkdirAll adds the directory p and its missing parents, which o owns; the
// ones the image has keep their owner and mode.
func (t tree) mkdirAll(p string, o owner) error {
	isDir, ok := t.isDir[p]
	switch {
	case ok && isDir:
		return nil
	case ok:
		return fmt.Errorf("%s is a file in the image", p)
	}
	if err := t.mkdirAll(path.Dir(p), o); err != nil {
		return err
	}
	t.isDir[p] = true
	t.added[p] = file{path: p, dir: true, mode: 0o755, uid: o.uid, gid: o.gid}
	return nil
}

// layer tars files in path order, parents first, with one mtime.
func layer(files []file, mtime time.Time) (v1.Layer, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.path, b.path) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if f.source != "" {
			data, err := os.ReadFile(f.source)
			if err != nil {
				return nil, err
			}
			f.data = data
		}
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
