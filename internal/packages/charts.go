package packages

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kudo-ng/kudo/internal/chartrender"
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
		tgz, err := chartrender.Pack(chart, files)
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
