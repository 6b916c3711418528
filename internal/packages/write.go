package packages

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"sort"
	"time"
)

// TarballName is KUDO's file name for a package:
// <name>-<appVersion>_<operatorVersion>.tgz, or <name>-<operatorVersion>.tgz
// without appVersion.
func (p *Package) TarballName() string {
	if p.Operator.AppVersion == "" {
		return fmt.Sprintf("%s-%s.tgz", p.Operator.Name, p.Operator.OperatorVersion)
	}
	return fmt.Sprintf("%s-%s_%s.tgz", p.Operator.Name, p.Operator.AppVersion, p.Operator.OperatorVersion)
}

// WriteTarball writes the package's files, unchanged and with their paths at
// the root, as a gzip tarball. The output depends on the files only (sorted
// entries, fixed times and modes), so a repository's digests are stable.
func (p *Package) WriteTarball(w io.Writer) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(p.Files))
	for name := range p.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data := p.Files[name]
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
