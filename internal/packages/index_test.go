package packages

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTarballRoundTripAndIndex(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for _, pkg := range []string{"zookeeper", "first-operator", "cowsay"} {
		p, err := Read(filepath.Join(conformanceDir, pkg, "operator"))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := p.WriteTarball(&buf); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := p.WriteTarball(&again); err != nil || !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Fatalf("%s: writing twice gave different tarballs (%v)", pkg, err)
		}
		read, err := ReadTarball(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if len(read.Files) != len(p.Files) || read.Operator.Name != p.Operator.Name || len(read.Templates) != len(p.Templates) {
			t.Fatalf("%s: the tarball does not read back as the package", pkg)
		}
		name := filepath.Join(dir, p.TarballName())
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(name))
	}
	want := []string{"zookeeper-3.6.2_0.3.3.tgz", "first-operator-0.2.0.tgz", "cowsay-0.2.0.tgz"}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("tarball name %q, want %q", names[i], want[i])
		}
	}

	// A second version of first-operator, older, must sort after.
	p, _ := Read(filepath.Join(conformanceDir, "first-operator", "operator"))
	p.Files[OperatorFileName] = bytes.Replace(p.Files[OperatorFileName], []byte(`"0.2.0"`), []byte(`"0.1.10"`), 1)
	var buf bytes.Buffer
	if err := p.WriteTarball(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "first-operator-0.1.10.tgz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
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
	first := parsed.Entries["first-operator"]
	if len(first) != 2 || first[0].OperatorVersion != "0.2.0" || first[1].OperatorVersion != "0.1.10" {
		t.Errorf("first-operator entries, newest first: %+v", first)
	}
	zk := parsed.Entries["zookeeper"][0]
	tgz, _ := os.ReadFile(filepath.Join(dir, "zookeeper-3.6.2_0.3.3.tgz"))
	sum := sha256.Sum256(tgz)
	if zk.Digest != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %s, want the sha256 of the tarball", zk.Digest)
	}
	if zk.URLs[0] != "http://127.0.0.1:8080/zookeeper-3.6.2_0.3.3.tgz" || zk.AppVersion != "3.6.2" || zk.OperatorVersion != "0.3.3" {
		t.Errorf("zookeeper entry: %+v", zk)
	}
	if !parsed.Generated.Equal(now) {
		t.Errorf("generated %v, want %v", parsed.Generated, now)
	}
}

func TestIndexSortsNewestFirst(t *testing.T) {
	index := &Index{APIVersion: "v1"}
	for _, v := range []string{"0.9.0", "0.10.0", "0.2.0", "1.0.0-rc.1", "1.0.0"} {
		index.Add(&PackageVersion{Name: "zk", OperatorVersion: v, Digest: v})
	}
	index.Add(&PackageVersion{Name: "zk", OperatorVersion: "0.2.0", Digest: "replaced"})
	var got []string
	for _, pv := range index.Entries["zk"] {
		got = append(got, pv.OperatorVersion+"="+pv.Digest)
	}
	want := "1.0.0=1.0.0, 1.0.0-rc.1=1.0.0-rc.1, 0.10.0=0.10.0, 0.9.0=0.9.0, 0.2.0=replaced"
	if s := join(got); s != want {
		t.Errorf("order %s, want %s", s, want)
	}
}

func TestParseIndexErrors(t *testing.T) {
	for data, want := range map[string]string{
		"apiVersion: v2\nentries: {}\n": `index.yaml: apiVersion "v2" is not supported, want v1`,
		"apiVersion: v1\nentris: {}\n":  `index.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "entris"`,
	} {
		if _, err := ParseIndex([]byte(data)); err == nil || err.Error() != want {
			t.Errorf("ParseIndex(%q) = %v, want %q", data, err, want)
		}
	}
}
