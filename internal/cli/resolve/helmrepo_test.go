package resolve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A classic chart repository as `helm repo index` writes one: charts by
// relative URL, each with its digest.
func TestAChartComesFromARepositorysIndexCheckedAgainstItsDigest(t *testing.T) {
	charts := map[string][]byte{"web-1.2.0.tgz": []byte("chart 1.2.0"), "web-1.3.1.tgz": []byte("chart 1.3.1"),
		"web-2.0.0-rc.1.tgz": []byte("chart 2.0.0-rc.1"), "web-1.0.0.tgz": []byte("not what the index says")}
	digest := func(name string) string { return fmt.Sprintf("%x", sha256.Sum256(charts[name])) }
	index := "apiVersion: v1\nentries:\n  web:\n"
	for _, v := range []string{"1.2.0", "1.3.1", "2.0.0-rc.1"} {
		name := "web-" + v + ".tgz"
		index += fmt.Sprintf("  - {name: web, version: %s, urls: [charts/%s], digest: %s}\n", v, name, digest(name))
	}
	index += "  - {name: web, version: 1.0.0, urls: [charts/web-1.0.0.tgz], digest: " + digest("web-1.2.0.tgz") + "}\n" +
		"  - {name: web, version: 0.9.0, urls: [\"file:///etc/hostname\"]}\n"
	mux := http.NewServeMux()
	mux.HandleFunc("/stable/index.yaml", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(index)) })
	mux.HandleFunc("/stable/charts/{name}", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(charts[r.PathValue("name")]) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, tc := range []struct{ chart, version, want, wantErr string }{
		{chart: "web", want: "web-1.3.1.tgz"},
		{chart: "web", version: "1.2.0", want: "web-1.2.0.tgz"},
		{chart: "web", version: "~1.2", want: "web-1.2.0.tgz"},
		{chart: "web", version: "2.0.0-rc.1", want: "web-2.0.0-rc.1.tgz"},
		{chart: "web", version: "1.0.0", wantErr: "where " + srv.URL + "/stable/index.yaml says " + digest("web-1.2.0.tgz")},
		{chart: "web", version: "0.9.0", wantErr: "is at file:///etc/hostname, which a repository at http:// may not name"},
		{chart: "web", version: "3.x", wantErr: "no version of chart web is 3.x"},
		{chart: "db", wantErr: "no chart db in it"},
	} {
		t.Run(tc.chart+" "+tc.version, func(t *testing.T) {
			got, from, err := HelmChart(context.Background(), srv.URL+"/stable", tc.chart, tc.version)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, charts[tc.want]) || from != srv.URL+"/stable/charts/"+tc.want {
				t.Errorf("got %q from %s, want %s", got, from, tc.want)
			}
		})
	}
}

// An index is a repository's text: its aliases may not expand it past what
// a download holds.
func TestARepositorysIndexIsParsedWithinItsBound(t *testing.T) {
	bomb := "apiVersion: v1\nx: &a " + strings.Repeat("x", 40000) + "\nentries: {web: [" + strings.Repeat("{version: *a},", 9999) + "{version: *a}]}\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(bomb)) }))
	defer srv.Close()
	_, _, err := HelmChart(context.Background(), srv.URL, "web", "")
	if err == nil || !strings.Contains(err.Error(), srv.URL+"/index.yaml: ") || !strings.Contains(err.Error(), "alias") {
		t.Fatalf("got %v, want the index refused for its aliases", err)
	}
	if !strings.Contains(err.Error(), "expand") {
		t.Fatalf("got %v, want the bound named", err)
	}
}
