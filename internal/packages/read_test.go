package packages

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// headers are n entries named name-0, name-1... of size bytes each, or
// directories when size is negative.
func headers(n int, name string, size int64) []*tar.Header {
	hs := make([]*tar.Header, n)
	for i := range hs {
		hs[i] = &tar.Header{Name: fmt.Sprintf("%s-%d", name, i), Mode: 0o644, Size: size, Typeflag: tar.TypeReg}
		if size < 0 {
			hs[i].Size, hs[i].Typeflag = 0, tar.TypeDir
		}
	}
	return hs
}

func TestTarballLimits(t *testing.T) {
	good, err := Read(filepath.Join("testdata", "good"))
	if err != nil {
		t.Fatal(err)
	}
	// Empty gzip members before the tarball cost reading but uncompress to
	// nothing.
	var empty bytes.Buffer
	if err := gzip.NewWriter(&empty).Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   func(t *testing.T) io.Reader
		want string // in the error; none when empty
	}{
		{"files each under the file limit but over the total", func(t *testing.T) io.Reader {
			return tarball(t, headers(MaxTarballSize/MaxFileSize+1, "docs/fill", MaxFileSize)...)
		}, errUncompressed.Error()},
		{"too many entries", func(t *testing.T) io.Reader {
			return tarball(t, headers(MaxTarballEntries, "docs", -1)...)
		}, errEntries.Error()},
		{"as many entries as the limit", func(t *testing.T) io.Reader {
			return tarball(t, headers(MaxTarballEntries-len(good.Files), "docs", -1)...)
		}, ""},
		{"sparse entries whose holes are over the total", func(t *testing.T) io.Reader {
			return bytes.NewReader(sparseTarball(t, MaxTarballSize/MaxFileSize+1, MaxFileSize))
		}, errUncompressed.Error()},
		{"over the limit compressed", func(t *testing.T) io.Reader {
			n := MaxTarballSize/empty.Len() + 1
			return io.MultiReader(bytes.NewReader(bytes.Repeat(empty.Bytes(), n)), tarball(t))
		}, errCompressed.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadTarball(tt.in(t))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("ReadTarball: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("ReadTarball = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// sparseTarball is a gzip tarball of n entries docs/sparse-0... of size
// bytes each, all a hole: GNU sparse files (PAX format 1.0), which
// archive/tar reads and no tar.Writer writes, so each is written by hand,
// a few hundred bytes of headers.
func sparseTarball(t testing.TB, n int, size int64) []byte {
	var stream []byte
	for i := range n {
		name := fmt.Sprintf("docs/sparse-%d", i)
		var pax string
		for _, kv := range [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"},
			{"GNU.sparse.name", name}, {"GNU.sparse.realsize", fmt.Sprint(size)}} {
			pax += paxRecord(kv[0], kv[1])
		}
		stream = append(stream, tarBlock("PaxHeaders/"+name, len(pax), tar.TypeXHeader)...)
		stream = append(stream, padded(pax)...)
		// The data: the sparse map, of no region.
		stream = append(stream, tarBlock(name, 512, tar.TypeReg)...)
		stream = append(stream, padded("0\n")...)
	}
	stream = append(stream, make([]byte, 1024)...) // the end of the archive
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := gz.Write(stream); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tarBlock is a ustar header block.
func tarBlock(name string, size int, typeflag byte) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	copy(b[100:], "0000644\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	b[156] = typeflag
	copy(b[257:], "ustar\x0000")
	// The checksum is of the block with its own field blank.
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// paxRecord is "<length> key=value\n", the length counting itself.
func paxRecord(key, value string) string {
	rest := " " + key + "=" + value + "\n"
	n := len(rest)
	for len(fmt.Sprint(n))+len(rest) != n {
		n = len(fmt.Sprint(n)) + len(rest)
	}
	return fmt.Sprint(n) + rest
}

func padded(s string) []byte {
	return append([]byte(s), make([]byte, (512-len(s)%512)%512)...)
}

func TestCapped(t *testing.T) {
	errOver := errors.New("over")
	tests := []struct {
		name    string
		in      string
		max     int64
		wantErr error
	}{
		{"under the limit", "abc", 4, nil},
		{"at the limit", "abcd", 4, nil},
		{"one byte over", "abcde", 4, errOver},
		{"empty, no limit left", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte a read, so the limit is met between reads.
			got, err := io.ReadAll(&capped{r: iotest.OneByteReader(strings.NewReader(tt.in)), left: tt.max, err: errOver})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && string(got) != tt.in {
				t.Errorf("read %q, want %q", got, tt.in)
			}
		})
	}
}

func TestTarballLimitNamesTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "many.tgz")
	if err := os.WriteFile(file, tarball(t, headers(MaxTarballEntries, "docs", -1)...).Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := file + ": " + errEntries.Error()
	if _, err := Read(file); err == nil || err.Error() != want {
		t.Fatalf("Read = %v, want %q", err, want)
	}
}
