package packages

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAChartDirectoryIsTheSameTarballEachTime(t *testing.T) {
	files := map[string][]byte{
		"charts/web/Chart.yaml":            []byte("apiVersion: v2\nname: web\nversion: 0.1.0\n"),
		"charts/web/templates/cm.yaml":     []byte("kind: ConfigMap\n"),
		"charts/db.tgz":                    []byte("a tarball"),
		"templates/ignored-by-charts.yaml": []byte("x"),
	}
	first, err := chartsOf(files)
	if err != nil {
		t.Fatal(err)
	}
	second, err := chartsOf(files)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first["web"], second["web"]) || string(first["db"]) != "a tarball" || len(first) != 2 {
		t.Fatalf("charts %v, then %v", first, second)
	}
	gz, err := gzip.NewReader(bytes.NewReader(first["web"]))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var got []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		got = append(got, hdr.Name+": "+string(data))
	}
	want := []string{"web/Chart.yaml: apiVersion: v2\nname: web\nversion: 0.1.0\n", "web/templates/cm.yaml: kind: ConfigMap\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the tarball (-want +got):\n%s", diff)
	}
}

func TestChartsThatAreNotAreRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string][]byte
		want  string
	}{
		"a loose file":       {map[string][]byte{"charts/README.md": nil}, "charts/README.md: a chart of charts/ is a NAME.tgz or a NAME/ directory"},
		"a name of no chart": {map[string][]byte{"charts/Web_1.tgz": nil}, `charts/Web_1.tgz: "Web_1" is not a chart's name`},
		"one chart twice": {map[string][]byte{"charts/web.tgz": nil, "charts/web/Chart.yaml": nil},
			"charts/web.tgz and charts/web/ are both chart web: keep one"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := chartsOf(tc.files)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
