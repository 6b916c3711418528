package packages

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/kudo-ng/kudo/internal/yamlbound"
)

// Limits of a package. MaxFileSize bounds each file: the whole
// OperatorVersion must fit in one Kubernetes object, which etcd limits to
// 1.5 MiB. A tarball is bounded as a whole too, or one of many files, each
// under the limit and all compressing to nothing, could exhaust memory:
// MaxTarballSize bounds the bytes read, both compressed and uncompressed
// (tar headers included), and MaxTarballEntries its entries. They leave
// room for the tests and docs a tarball may carry besides the package. A
// file's YAML aliases may expand it to MaxFileSize, no more.
const (
	MaxFileSize       = 1 << 20
	MaxTarballSize    = 8 << 20
	MaxTarballEntries = 1000
)

const onlyThePackage = "a package needs only operator.yaml, params.yaml and templates/"

var (
	errCompressed   = fmt.Errorf("the tarball is over the limit of %d bytes compressed; %s", MaxTarballSize, onlyThePackage)
	errUncompressed = fmt.Errorf("the tarball is over the limit of %d bytes uncompressed; %s", MaxTarballSize, onlyThePackage)
	errEntries      = fmt.Errorf("the tarball has more than the limit of %d entries; %s", MaxTarballEntries, onlyThePackage)
)

// Read reads a package from a directory or a gzip tarball.
func Read(pathName string) (*Package, error) {
	info, err := os.Stat(pathName)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		files, err := readDir(os.DirFS(pathName))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pathName, err)
		}
		return parseFiles(files)
	}
	f, err := os.Open(pathName)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	p, err := ReadTarball(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pathName, err)
	}
	return p, nil
}

// ReadTarball reads a package from a gzip tarball with its files at the root.
func ReadTarball(r io.Reader) (*Package, error) {
	files, err := readTarball(r)
	if err != nil {
		return nil, err
	}
	return parseFiles(files)
}

// readTarball reads the regular files of a gzip tarball, within the limits.
func readTarball(r io.Reader) (map[string][]byte, error) {
	gz, err := gzip.NewReader(&capped{r: r, left: MaxTarballSize, err: errCompressed})
	if err != nil {
		return nil, fmt.Errorf("not a gzip tarball: %w", err)
	}
	tr := tar.NewReader(&capped{r: gz, left: MaxTarballSize, err: errUncompressed})
	files := map[string][]byte{}
	// The files' sizes count too: the holes of a sparse entry take no
	// room in the stream the readers cap, and a few kilobytes of them
	// made a gigabyte of zeros.
	left := int64(MaxTarballSize)
	for entries := 1; ; entries++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading tarball: %w", err)
		}
		if entries > MaxTarballEntries {
			return nil, errEntries
		}
		name := strings.TrimPrefix(h.Name, "./")
		clean := path.Clean(name)
		if path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, fmt.Errorf("entry %q escapes the package root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("entry %q is not a regular file", h.Name)
		}
		if h.Size > MaxFileSize {
			return nil, fmt.Errorf("%s is %d bytes, more than the limit of %d", clean, h.Size, MaxFileSize)
		}
		if left -= h.Size; left < 0 {
			return nil, errUncompressed
		}
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			return nil, fmt.Errorf("reading %s: %w", clean, err)
		}
		files[clean] = data
	}
	return files, nil
}

// capped reads r up to a limit and fails with err past it, where
// io.LimitReader would end as though r had.
type capped struct {
	r    io.Reader
	left int64
	err  error
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left == 0 {
		// At the limit: one byte more is over it, the end of r is not.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, c.err
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// readDir reads the files of a package directory; other files than the
// package's own (a README, tests) are read too but ignored when parsing.
func readDir(fsys fs.FS) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !packageFile(name) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", name)
		}
		if info.Size() > MaxFileSize {
			return fmt.Errorf("%s is %d bytes, more than the limit of %d", name, info.Size(), MaxFileSize)
		}
		data, err := fs.ReadFile(fsys, name)
		files[name] = data
		return err
	})
	return files, err
}

// packageFile: the file is one of the package's, not a test or a document
// a tarball carries beside it.
func packageFile(name string) bool {
	return name == OperatorFileName || name == ParamsFileName || strings.HasPrefix(name, TemplatesDir) || strings.HasPrefix(name, ChartsDir)
}

// parseFiles turns a package's files into a Package.
func parseFiles(files map[string][]byte) (*Package, error) {
	p := &Package{Templates: map[string]string{}, Files: map[string][]byte{}}
	for name, data := range files {
		if !packageFile(name) {
			continue
		}
		if strings.HasPrefix(name, TemplatesDir) {
			p.Templates[strings.TrimPrefix(name, TemplatesDir)] = string(data)
		}
		p.Files[name] = data
	}
	charts, err := chartsOf(p.Files)
	if err != nil {
		return nil, err
	}
	p.Charts = charts

	data, ok := files[OperatorFileName]
	if !ok {
		return nil, fmt.Errorf("%s is missing", OperatorFileName)
	}
	p.Operator = &OperatorFile{}
	if err := unmarshal(data, p.Operator); err != nil {
		return nil, fmt.Errorf("%s: %w", OperatorFileName, err)
	}

	p.Params = &ParamsFile{}
	if data, ok := files[ParamsFileName]; ok {
		if err := unmarshal(data, p.Params); err != nil {
			return nil, fmt.Errorf("%s: %w", ParamsFileName, err)
		}
	}
	return p, nil
}

// unmarshal decodes YAML keeping numbers as written, so a default of 1000000
// stays "1000000" rather than becoming "1e+06".
func unmarshal(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("is empty")
	}
	err := yamlbound.Unmarshal(data, v, yamlbound.Within(MaxFileSize), func(d *json.Decoder) *json.Decoder {
		d.UseNumber()
		return d
	})
	if err != nil {
		return errors.New(yamlMessage(err))
	}
	return nil
}

// yamlMessage drops the prefixes of sigs.k8s.io/yaml's errors, which say
// how it parses rather than what is wrong.
func yamlMessage(err error) string {
	msg := err.Error()
	for _, prefix := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "yaml: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return msg
}
