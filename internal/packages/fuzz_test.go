package packages

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/metrics"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/test/corpus"
)

// The fuzz targets of operator.yaml and params.yaml are seeded with the
// pieces of the real files, a parameter, a task or a plan each, not with
// the files whole: the fuzzer minimizes every input that finds new coverage,
// in time quadratic in its size, and an input of a few kilobytes kept both
// workers minimizing for the whole of a 30 s run.

// realPackages are the example packages and, when it is there, the
// conformance corpus.
func realPackages(f *testing.F) []*Package {
	dirs := examplePackages(f)
	if dir, err := corpus.Dir(); err == nil && dir != "" {
		dirs = append(dirs, conformancePackages(f)...)
	}
	var out []*Package
	for _, dir := range dirs {
		p, err := Read(dir)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// addYAML adds v, written as YAML, to the corpus.
func addYAML(f *testing.F, v any) {
	data, err := yaml.Marshal(v)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
}

// fuzzBase is the package whose operator.yaml or params.yaml a target
// replaces: hello's files, parsed once, with a template using a parameter.
func fuzzBase(f *testing.F) *Package {
	p, err := Read(filepath.Join(corpus.Examples(), "hello", "operator"))
	if err != nil {
		f.Fatal(err)
	}
	p.Templates = map[string]string{
		"deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: {{ .Params.replicas }}\n",
	}
	return p
}

func FuzzOperatorFile(f *testing.F) {
	for _, p := range realPackages(f) {
		o := p.Operator
		header := OperatorFile{APIVersion: o.APIVersion, Name: o.Name, OperatorVersion: o.OperatorVersion,
			AppVersion: o.AppVersion, KubernetesVersion: o.KubernetesVersion, NamespaceManifest: o.NamespaceManifest}
		for _, t := range o.Tasks {
			piece := header
			piece.Tasks = []kudov1beta1.Task{t}
			piece.Plans = map[string]kudov1beta1.Plan{kudov1beta1.DeployPlanName: {Phases: []kudov1beta1.Phase{
				{Name: "main", Steps: []kudov1beta1.Step{{Name: "main", Tasks: []string{t.Name}}}}}}}
			addYAML(f, piece)
		}
		for _, name := range sortedKeys(o.Plans) {
			piece := header
			piece.Plans = map[string]kudov1beta1.Plan{name: o.Plans[name]}
			addYAML(f, piece)
		}
	}
	base := fuzzBase(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := *base
		p.Operator = &OperatorFile{}
		if err := unmarshal(data, p.Operator); err != nil {
			return
		}
		// Whatever parses must verify and convert without panicking.
		Verify(&p, VerifyOptions{})
		_, _, _ = p.Convert("default")
	})
}

func FuzzParamsFile(f *testing.F) {
	for _, p := range realPackages(f) {
		for _, param := range p.Params.Parameters {
			addYAML(f, ParamsFile{APIVersion: p.Params.APIVersion, Parameters: []Parameter{param}})
		}
	}
	f.Add([]byte("parameters:\n- name: A\n  default: [1, {a: b}]\n  type: array\n  enum: [[1]]\n"))
	f.Add([]byte("parameters:\n- name: a\n  type: integer\n  default: 1\n- name: A\n  immutable: true\n"))
	base := fuzzBase(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := *base
		p.Params = &ParamsFile{}
		if err := unmarshal(data, p.Params); err != nil {
			return
		}
		report := Verify(&p, VerifyOptions{})
		_, _, err := p.Convert("default")
		if len(report.Errors) == 0 && err != nil {
			t.Fatalf("a package that verifies does not convert: %v", err)
		}
	})
}

// maxReadAlloc bounds what reading any tarball allocates: the files, at
// most MaxTarballSize whatever their headers claim or their holes hold, and
// archive/tar's extended headers, which it reads doubling a buffer, up to
// three times the MaxTarballSize it may read of them.
const maxReadAlloc = 5 * MaxTarballSize

// readError matches what reading a tarball fails with: each names the
// tarball, the entry or file, or the limit.
var readError = regexp.MustCompile(`^(not a gzip tarball: |reading tarball: |reading \S+: |entry ".*" (escapes the package root|is not a regular file)$|` +
	`the tarball (is over|has more than) the limit |\S+ is \d+ bytes, more than the limit of \d+$|(operator|params)\.yaml(: | is missing$))`)

// FuzzReadTarball: reading a tarball never allocates more than
// maxReadAlloc, fails saying what, and a package read writes back to a
// tarball that reads as the same files.
func FuzzReadTarball(f *testing.F) {
	for _, p := range realPackages(f) {
		var buf bytes.Buffer
		if err := p.WriteTarball(&buf); err != nil {
			f.Fatal(err)
		}
		// The small ones: see the minimization above.
		if buf.Len() <= 2<<10 {
			f.Add(buf.Bytes())
		}
	}
	for _, h := range []*tar.Header{
		{Name: "../escape", Size: 1, Mode: 0o644, Typeflag: tar.TypeReg},
		{Name: "templates/link.yaml", Linkname: "/etc/passwd", Mode: 0o777, Typeflag: tar.TypeSymlink},
		{Name: "templates/huge.yaml", Size: MaxFileSize + 1, Mode: 0o644, Typeflag: tar.TypeReg},
	} {
		f.Add(tarball(f, h).Bytes())
	}
	// A megabyte of holes each, eight times the limit once read, in 1.5 KiB.
	f.Add(sparseTarball(f, 8*MaxTarballSize/MaxFileSize, MaxFileSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		before := heapAllocated()
		files, err := readTarball(bytes.NewReader(data))
		if n := heapAllocated() - before; n > maxReadAlloc {
			t.Fatalf("reading %d bytes allocated %d MiB, more than the %d MiB the limits allow", len(data), n>>20, maxReadAlloc>>20)
		}
		var p *Package
		if err == nil {
			p, err = parseFiles(files)
		}
		if err != nil {
			if !readError.MatchString(err.Error()) {
				t.Fatalf("the error %q does not say which entry, file or limit", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := p.WriteTarball(&buf); err != nil {
			t.Fatalf("a package read from a tarball does not write back: %v", err)
		}
		again, err := ReadTarball(&buf)
		if err != nil || !reflect.DeepEqual(again.Files, p.Files) {
			t.Fatalf("a package written back reads as %v, %v; want the files %v", again, err, p.Files)
		}
	})
}

// heapAllocated is the bytes allocated so far, in all.
func heapAllocated() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// FuzzParseIndex: an index that parses writes and parses back to the same
// YAML, with each package's versions newest first: none after one that is
// older.
func FuzzParseIndex(f *testing.F) {
	dir := f.TempDir()
	for _, p := range realPackages(f) {
		file, err := os.Create(filepath.Join(dir, p.TarballName()))
		if err != nil {
			f.Fatal(err)
		}
		if err := p.WriteTarball(file); err != nil {
			f.Fatal(err)
		}
		if err := file.Close(); err != nil {
			f.Fatal(err)
		}
	}
	index, err := IndexDirectory(dir, "https://example.com/repo", time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	if err != nil {
		f.Fatal(err)
	}
	// A package an index each, as the fuzzer minimizes the inputs it keeps.
	for _, name := range sortedKeys(index.Entries) {
		addYAML(f, &Index{APIVersion: index.APIVersion, Generated: index.Generated, Entries: map[string][]*PackageVersion{name: index.Entries[name]}})
	}
	f.Add([]byte("apiVersion: v1\nentries:\n  a:\n  - {name: a, operatorVersion: 1.2x, urls: []}\n" +
		"  - {name: a, operatorVersion: 1.9.0, urls: []}\n  - {name: a, operatorVersion: 1.10.0, appVersion: v2, urls: []}\n"))
	f.Add([]byte("apiVersion: v1\ngenerated: 2026-11-21T10:00:00.5+02:00\nentries: {a: [null, {name: a}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		index, err := ParseIndex(data)
		if err != nil {
			return
		}
		for name, versions := range index.Entries {
			for i := range versions {
				for j := i + 1; j < len(versions); j++ {
					if older(versions[i], versions[j]) {
						t.Fatalf("entries.%s: %+v before %+v, which is newer", name, *versions[i], *versions[j])
					}
				}
			}
		}
		written, err := index.Marshal()
		if err != nil {
			t.Fatalf("a parsed index does not write: %v", err)
		}
		again, err := ParseIndex(written)
		if err != nil {
			t.Fatalf("a written index does not parse: %v\n%s", err, written)
		}
		if rewritten, err := again.Marshal(); err != nil || !bytes.Equal(rewritten, written) {
			t.Fatalf("written again, the index changed (%v):\n%s\nthen\n%s", err, written, rewritten)
		}
	})
}

// older reports whether a is an older version of its package than b.
func older(a, b *PackageVersion) bool {
	if c := CompareVersions(a.OperatorVersion, b.OperatorVersion); c != 0 {
		return c < 0
	}
	return CompareVersions(a.AppVersion, b.AppVersion) < 0
}
