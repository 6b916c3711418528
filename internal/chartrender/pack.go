package chartrender

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"maps"
	"path"
	"slices"
)

// Pack is a chart as Render takes it, a gzip tarball of files under the
// directory top as `helm package` makes one, in the order of their paths,
// with no times or owners: the same files, the same bytes.
func Pack(top string, files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data := files[name]
		hdr := &tar.Header{Name: path.Join(top, name), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
