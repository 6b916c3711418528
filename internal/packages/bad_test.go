package packages

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kudo-ng/kudo/internal/render"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*/expected.txt from what the code does")

// outcome is what reading and verifying a package produced, a line each.
func outcome(p *Package, err error) []string {
	if err != nil {
		return []string{"read: " + err.Error()}
	}
	// No package here breaks the render time bound, whose tests are
	// render's: on a loaded machine the corpus's largest renders could
	// pass its default, 2 s, and give another error than theirs.
	limits := render.DefaultLimits
	limits.Timeout = time.Minute
	report := Verify(p, VerifyOptions{RenderLimits: limits})
	var lines []string
	for _, e := range report.Errors {
		lines = append(lines, "error: "+e.String())
	}
	for _, w := range report.Warnings {
		lines = append(lines, "warning: "+w.String())
	}
	return lines
}

func TestGoodPackageHasNoFindings(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "good"))
	if got := outcome(p, err); len(got) != 0 {
		t.Fatalf("the base of the bad corpus is not clean: %q", got)
	}
}

// TestBadPackages reads every package of testdata/bad: each breaks one rule
// and must give exactly the one error in its expected.txt, and nothing else.
func TestBadPackages(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "bad", "*"))
	if err != nil || len(dirs) < 30 {
		t.Fatalf("want at least 30 bad packages, found %d (%v)", len(dirs), err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			p, err := Read(dir)
			got := outcome(p, err)
			expectedFile := filepath.Join(dir, "expected.txt")
			if *update {
				if err := os.WriteFile(expectedFile, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(expectedFile)
			if err != nil {
				t.Fatal(err)
			}
			wantLines := strings.Split(strings.TrimSpace(string(want)), "\n")
			if len(wantLines) != 1 {
				t.Fatalf("%s must hold exactly one error, not %q", expectedFile, wantLines)
			}
			if strings.Join(got, "\n") != wantLines[0] {
				t.Errorf("got\n  %s\nwant exactly\n  %s", strings.Join(got, "\n  "), wantLines[0])
			}
		})
	}
}

// tarball builds a gzip tarball of the good package plus extra entries.
func tarball(t testing.TB, extra ...*tar.Header) *bytes.Buffer {
	t.Helper()
	p, err := Read(filepath.Join("testdata", "good"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, data := range p.Files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range extra {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(bytes.Repeat([]byte("#"), int(h.Size))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func TestBadTarballs(t *testing.T) {
	tests := []struct {
		name  string
		entry *tar.Header
		want  string
	}{
		{"path escaping the root", &tar.Header{Name: "../../etc/cron.d/evil", Size: 4, Mode: 0o644, Typeflag: tar.TypeReg},
			`entry "../../etc/cron.d/evil" escapes the package root`},
		{"absolute path", &tar.Header{Name: "/etc/passwd", Size: 4, Mode: 0o644, Typeflag: tar.TypeReg},
			`entry "/etc/passwd" escapes the package root`},
		{"symlink", &tar.Header{Name: "templates/link.yaml", Linkname: "/etc/passwd", Mode: 0o777, Typeflag: tar.TypeSymlink},
			`entry "templates/link.yaml" is not a regular file`},
		{"oversized template", &tar.Header{Name: "templates/huge.yaml", Size: MaxFileSize + 1, Mode: 0o644, Typeflag: tar.TypeReg},
			"templates/huge.yaml is 1048577 bytes, more than the limit of 1048576"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ReadTarball(tarball(t, tt.entry))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("ReadTarball = %v, %v; want error %q", p, err, tt.want)
			}
		})
	}
}

func TestOversizedTemplateInDirectory(t *testing.T) {
	dir := t.TempDir()
	p, err := Read(filepath.Join("testdata", "good"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range p.Files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "templates", "huge.yaml"), bytes.Repeat([]byte("#"), MaxFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Read(dir)
	want := dir + ": templates/huge.yaml is 1048577 bytes, more than the limit of 1048576"
	if err == nil || err.Error() != want {
		t.Fatalf("Read = %v, want %q", err, want)
	}
}
