package search

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
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
		false: "Name       Operator Version  App Version  Description\nzookeeper  0.3.10            3.4.14       \n",
		true: "Name       Operator Version  App Version  Description\nzookeeper  0.3.10            3.4.14       \n" +
			"           0.3.2             3.4.14       \n",
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
