package search

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/kudo-ng/kudo/internal/cli/resolve"
)

// TestSearchShowsTheNewestUnlessAllVersions: as KUDO's search, the newest
// version of each package found; -a lists them all.
func TestSearchShowsTheNewestUnlessAllVersions(t *testing.T) {
	served := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`apiVersion: v1
entries:
  zookeeper:
  - {name: zookeeper, operatorVersion: 0.3.2, appVersion: 3.4.14, urls: [z2.tgz], digest: a}
  - {name: zookeeper, operatorVersion: 0.3.10, appVersion: 3.4.14, urls: [z10.tgz], digest: b}
  kafka:
  - {name: kafka, operatorVersion: 1.3.0, urls: [k.tgz], digest: c}
`))
	}))
	defer served.Close()
	for allVersions, want := range map[bool]string{
		false: "Name     \tOperator Version\tApp Version\nzookeeper\t0.3.10          \t3.4.14     \n",
		true: "Name     \tOperator Version\tApp Version\nzookeeper\t0.3.10          \t3.4.14     \n" +
			"         \t0.3.2           \t3.4.14     \n",
	} {
		var out bytes.Buffer
		if err := Run(context.Background(), &out, served.URL, "zoo", allVersions, resolve.Registry{}); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("all versions %t:\n%q\nwant\n%q", allVersions, out.String(), want)
		}
	}
}

// TestSearchPrintsKUDOsGoldenFiles: KUDO v0.19's search golden files
// (testdata/kudo-v0.19, from its module's pkg/kudoctl/cmd/testdata, with
// the index they were made from, read here from disk) are our output, byte
// for byte.
func TestSearchPrintsKUDOsGoldenFiles(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "kudo-v0.19"))
	if err != nil {
		t.Fatal(err)
	}
	for golden, search := range map[string]struct {
		text        string
		allVersions bool
	}{
		"search1.golden": {"mysql", false},
		"search2.golden": {"", false},
		"search3.golden": {"mysql", true},
	} {
		want, err := os.ReadFile(filepath.Join(dir, golden))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Run(context.Background(), &out, "file://"+dir, search.text, search.allVersions, resolve.Registry{}); err != nil {
			t.Fatal(err)
		}
		if out.String() != string(want) {
			t.Errorf("%s:\n%q\nwant KUDO's\n%q", golden, out.String(), want)
		}
	}
}
