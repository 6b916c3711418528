package packages

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kudo-ng/kudo/test/corpus"
)

func TestTarballRoundTripAndIndex(t *testing.T) {
	dir := t.TempDir()
	hello, err := Read(filepath.Join(corpus.Examples(), "hello", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	// The same package of another name with no appVersion, whose tarball's
	// name has none either, and an older version of hello, which must sort
	// after the newer one.
	bare := variant(t, hello, "name: hello", "name: bare", "appVersion: 1.27.0\n", "")
	older := variant(t, hello, "operatorVersion: 0.1.0", "operatorVersion: 0.0.10")
	var names []string
	for _, p := range []*Package{hello, bare, older} {
		var buf bytes.Buffer
		if err := p.WriteTarball(&buf); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := p.WriteTarball(&again); err != nil || !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Fatalf("%s: writing twice gave different tarballs (%v)", p.TarballName(), err)
		}
		read, err := ReadTarball(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if len(read.Files) != len(p.Files) || read.Operator.Name != p.Operator.Name || len(read.Templates) != len(p.Templates) {
			t.Fatalf("%s: the tarball does not read back as the package", p.TarballName())
		}
		name := filepath.Join(dir, p.TarballName())
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(name))
	}
	want := []string{"hello-1.27.0_0.1.0.tgz", "bare-0.1.0.tgz", "hello-1.27.0_0.0.10.tgz"}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("tarball name %q, want %q", names[i], want[i])
		}
	}

	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	index, err := IndexDirectory(dir, "http://127.0.0.1:8080/", now)
	if err != nil {
		t.Fatal(err)
	}
	data, err := index.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	entries := parsed.Entries["hello"]
	if len(entries) != 2 || entries[0].OperatorVersion != "0.1.0" || entries[1].OperatorVersion != "0.0.10" {
		t.Fatalf("hello entries, newest first: %+v", entries)
	}
	newest := entries[0]
	tgz, _ := os.ReadFile(filepath.Join(dir, "hello-1.27.0_0.1.0.tgz"))
	sum := sha256.Sum256(tgz)
	if newest.Digest != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %s, want the sha256 of the tarball", newest.Digest)
	}
	if newest.URLs[0] != "http://127.0.0.1:8080/hello-1.27.0_0.1.0.tgz" || newest.AppVersion != "1.27.0" || newest.OperatorVersion != "0.1.0" {
		t.Errorf("hello entry: %+v", newest)
	}
	if bare := parsed.Entries["bare"]; len(bare) != 1 || bare[0].AppVersion != "" {
		t.Errorf("bare entries: %+v", bare)
	}
	if !parsed.Generated.Equal(now) {
		t.Errorf("generated %v, want %v", parsed.Generated, now)
	}
}

func TestIndexSortsNewestFirst(t *testing.T) {
	index := &Index{APIVersion: "v1"}
	// 1.2x and abc are no semver: older than every version that is.
	for _, v := range []string{"0.9.0", "1.2x", "0.10.0", "0.2.0", "abc", "1.0.0-rc.1", "1.0.0"} {
		index.Add(&PackageVersion{Name: "zk", OperatorVersion: v, Digest: v})
	}
	index.Add(&PackageVersion{Name: "zk", OperatorVersion: "0.2.0", Digest: "replaced"})
	var got []string
	for _, pv := range index.Entries["zk"] {
		got = append(got, pv.OperatorVersion+"="+pv.Digest)
	}
	want := "1.0.0=1.0.0, 1.0.0-rc.1=1.0.0-rc.1, 0.10.0=0.10.0, 0.9.0=0.9.0, 0.2.0=replaced, abc=abc, 1.2x=1.2x"
	if s := join(got); s != want {
		t.Errorf("order %s, want %s", s, want)
	}
}

func TestParseIndexErrors(t *testing.T) {
	for data, want := range map[string]string{
		"apiVersion: v2\nentries: {}\n":                     `index.yaml: apiVersion "v2" is not supported, want v1`,
		"apiVersion: v1\nentris: {}\n":                      `index.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "entris"`,
		"apiVersion: v1\nentries: {a: [{name: a}, null]}\n": "index.yaml: entries.a[1] is null, not a package version",
	} {
		if _, err := ParseIndex([]byte(data)); err == nil || err.Error() != want {
			t.Errorf("ParseIndex(%q) = %v, want %q", data, err, want)
		}
	}
}

// variant is the package with operator.yaml's text replaced, pair by pair,
// read again.
func variant(t *testing.T, p *Package, oldNew ...string) *Package {
	t.Helper()
	files := maps.Clone(p.Files)
	operator := string(files[OperatorFileName])
	for i := 0; i < len(oldNew); i += 2 {
		if !strings.Contains(operator, oldNew[i]) {
			t.Fatalf("%s has no %q", OperatorFileName, oldNew[i])
		}
		operator = strings.Replace(operator, oldNew[i], oldNew[i+1], 1)
	}
	files[OperatorFileName] = []byte(operator)
	v, err := parseFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
