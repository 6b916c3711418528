package packages

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxCharts bounds the charts of a package, as the OperatorVersion's
// spec.charts does.
const MaxCharts = 16

// chartsOf are the Helm charts of a package's files under charts/, by
// name: NAME.tgz as it is, a NAME/ directory as the gzip tarball `helm
// package` would make of it (one top directory, NAME), written the same
// each time, so that the same package is the same OperatorVersion.
func chartsOf(files map[string][]byte) (map[string][]byte, error) {
	dirs := map[string]map[string][]byte{}
	charts := map[string][]byte{}
	for name, data := range files {
		rel, ok := strings.CutPrefix(name, ChartsDir)
		if !ok {
			continue
		}
		chart, inside, isDir := strings.Cut(rel, "/")
		if !isDir {
			var isTarball bool
			if chart, isTarball = strings.CutSuffix(rel, ".tgz"); !isTarball {
				return nil, fmt.Errorf("%s: a chart of %s is a NAME.tgz or a NAME/ directory", name, ChartsDir)
			}
			charts[chart] = data
		} else {
			if dirs[chart] == nil {
				dirs[chart] = map[string][]byte{}
			}
			dirs[chart][inside] = data
		}
		if errs := validation.IsDNS1123Label(chart); len(errs) > 0 {
			return nil, fmt.Errorf("%s: %q is not a chart's name: %s", name, chart, strings.Join(errs, "; "))
		}
	}
	for chart, files := range dirs {
		if _, both := charts[chart]; both {
			return nil, fmt.Errorf("%s%s.tgz and %s%s/ are both chart %s: keep one", ChartsDir, chart, ChartsDir, chart, chart)
		}
		tgz, err := chartTarball(chart, files)
		if err != nil {
			return nil, fmt.Errorf("%s%s/: %w", ChartsDir, chart, err)
		}
		charts[chart] = tgz
	}
	if len(charts) > MaxCharts {
		return nil, fmt.Errorf("%s holds %d charts, more than the limit of %d", ChartsDir, len(charts), MaxCharts)
	}
	if len(charts) == 0 {
		return nil, nil
	}
	return charts, nil
}

// chartTarball is a gzip tarball of files under the directory top, in the order
// of their paths, with no times or owners: the same files, the same bytes.
func chartTarball(top string, files map[string][]byte) ([]byte, error) {
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
