// Command image builds container images from Dockerfiles without a
// container engine or a registry to pull from: the manager's image
// (`make docker-build`), OLM's images to run OLM on the local control plane,
// the OLM bundle image (bundle.Dockerfile) and its catalog's.
//
// The Dockerfile stays the one description of an image. Its builder stage
// is replaced by the host's builds of the binaries it makes (--binary
// NAME=PATH, one for each binary the final stage copies from it); its final
// stage is applied to a local stand-in for its base image (image.go), with
// the other files it copies read from the build context (--context). The
// result is reproducible: the same inputs give the same digest. It is
// written as a docker-archive tarball that `ctr images import` and
// `docker load` accept (--output), pushed (--push), or both. A registry is
// trusted as Go's TLS trusts one: the local control plane's through
// SSL_CERT_FILE naming its CA.
//
// The build context is read whole: unlike Docker, the build does not apply
// .dockerignore files (Docker reads bundle.Dockerfile.dockerignore for the
// bundle image); COPY names what it takes.
package main

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// caCertsPath is where the host, like distroless, keeps its CA bundle.
const caCertsPath = "/etc/ssl/certs/ca-certificates.crt"

type options struct {
	dockerfile, context, tag, arch, output string
	binaries                               binaryFlag
	push                                   bool
}

func main() {
	o := options{binaries: binaryFlag{}}
	flag.StringVar(&o.dockerfile, "dockerfile", "Dockerfile", "The Dockerfile whose final stage describes the image.")
	flag.StringVar(&o.context, "context", ".", "The build context, which COPY without --from reads.")
	flag.Var(o.binaries, "binary", "NAME=PATH, repeated: PATH is the host's build of the binary NAME that "+
		"the final stage copies from the builder stage (COPY --from=<builder> .../NAME), built as the builder stage does.")
	flag.StringVar(&o.tag, "tag", "", "The image's reference, e.g. ghcr.io/kudo-ng/kudo:v0.1.0.")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "The binaries' GOARCH; the image's platform is linux/<arch>.")
	flag.StringVar(&o.output, "output", "", "Write the image here as a docker-archive tarball.")
	flag.BoolVar(&o.push, "push", false, "Push the image to the tag's registry, with the credentials of the Docker config.")
	flag.Parse()
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// binaryFlag is --binary NAME=PATH, repeated: the host's builds of the
// builder stage's binaries, by base name.
type binaryFlag map[string]string

func (b binaryFlag) String() string {
	pairs := make([]string, 0, len(b))
	for _, n := range slices.Sorted(maps.Keys(b)) {
		pairs = append(pairs, n+"="+b[n])
	}
	return strings.Join(pairs, ",")
}

func (b binaryFlag) Set(v string) error {
	n, p, ok := strings.Cut(v, "=")
	if !ok || n == "" || p == "" || strings.Contains(n, "/") {
		return fmt.Errorf("want NAME=PATH, NAME the base name of a COPY --from=<builder> source, got %q", v)
	}
	if _, ok := b[n]; ok {
		return fmt.Errorf("%s given twice", n)
	}
	b[n] = p
	return nil
}

func run(o options, out io.Writer) error {
	if o.tag == "" {
		return errors.New("--tag is required")
	}
	tag, err := name.NewTag(o.tag)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(o.dockerfile)
	if err != nil {
		return err
	}
	st, err := parseDockerfile(string(src), bases)
	if err != nil {
		return fmt.Errorf("%s: %w", o.dockerfile, err)
	}
	if err := matchBinaries(st.binaries, o.binaries); err != nil {
		return fmt.Errorf("%s: %w", o.dockerfile, err)
	}
	for _, n := range slices.Sorted(maps.Keys(o.binaries)) {
		if err := checkBinary(o.binaries[n], o.arch); err != nil {
			return fmt.Errorf("--binary %s=%s: %w", n, o.binaries[n], err)
		}
	}
	// Symbolic links are refused within the context, not on the way to it.
	context, err := filepath.EvalSymlinks(o.context)
	if err != nil {
		return err
	}
	caCerts, err := os.ReadFile(caCertsPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	created, err := sourceDate(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	img, err := buildImage(st, sources{binaries: o.binaries, context: context}, caCerts, o.arch, created)
	if err != nil {
		return fmt.Errorf("%s: %w", o.dockerfile, err)
	}

	if o.output != "" {
		if err := os.MkdirAll(filepath.Dir(o.output), 0o755); err != nil {
			return err
		}
		if err := tarball.WriteToFile(o.output, tag, img); err != nil {
			return err
		}
	}
	if o.push {
		if err := remote.Write(tag, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return err
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	var size int64
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return err
		}
		size += n
	}
	_, err = fmt.Fprintf(out, "%s %s %.1f MiB\n", tag, digest, float64(size)/(1<<20))
	return err
}

// matchBinaries pairs the binaries the stage copies from the builder stage
// (base name → source) with --binary: each needs one, and each --binary
// must be copied, else the Makefile and the Dockerfile have parted.
func matchBinaries(copied, given map[string]string) error {
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(copied)) {
		if _, ok := given[n]; !ok {
			errs = append(errs, fmt.Errorf("no --binary %s=<host path> for the builder stage's %s", n, copied[n]))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(given)) {
		if _, ok := copied[n]; !ok {
			errs = append(errs, fmt.Errorf("--binary %s is unused: the final stage copies no %s from the builder stage", n, n))
		}
	}
	return errors.Join(errs...)
}

// checkBinary refuses a binary that would not start in the image: the image
// has one platform, and its base no C library.
func checkBinary(binary, arch string) error {
	f, err := os.Open(binary)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if info, err := buildinfo.Read(f); err == nil {
		return checkGoBuild(info, arch)
	}
	return checkELF(f, arch)
}

// checkGoBuild checks a Go binary by the settings it was built with.
func checkGoBuild(info *debug.BuildInfo, arch string) error {
	want := map[string]string{"GOOS": "linux", "GOARCH": arch, "CGO_ENABLED": "0"}
	for _, s := range info.Settings {
		if w, ok := want[s.Key]; ok {
			if s.Value != w {
				return fmt.Errorf("built with %s=%s, the image needs %s=%s", s.Key, s.Value, s.Key, w)
			}
			delete(want, s.Key)
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("its build settings lack %s", strings.Join(slices.Sorted(maps.Keys(want)), ", "))
	}
	return nil
}

// elfMachines are the ELF machines of the GOARCHes an image may have.
var elfMachines = map[string]elf.Machine{
	"386": elf.EM_386, "amd64": elf.EM_X86_64, "arm": elf.EM_ARM, "arm64": elf.EM_AARCH64, "riscv64": elf.EM_RISCV, "s390x": elf.EM_S390,
}

// checkELF checks a binary that is not Go's, such as busybox: a static
// Linux executable for arch.
func checkELF(r io.ReaderAt, arch string) error {
	f, err := elf.NewFile(r)
	if err != nil {
		return fmt.Errorf("neither a Go binary nor an ELF executable (%w)", err)
	}
	want, ok := elfMachines[arch]
	switch {
	case !ok:
		return fmt.Errorf("hack/image knows no ELF machine for GOARCH=%s: add it to elfMachines", arch)
	case f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN:
		return fmt.Errorf("an ELF %v, not an executable", f.Type)
	case f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX:
		return fmt.Errorf("an ELF executable for %v, not Linux", f.OSABI)
	case f.Machine != want:
		return fmt.Errorf("an ELF executable for %v, the image needs %v (GOARCH=%s)", f.Machine, want, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, err := io.ReadAll(p.Open())
			if err != nil {
				return err
			}
			return fmt.Errorf("dynamically linked (interpreter %s), and the base has no C library: give a static build",
				bytes.TrimRight(interp, "\x00"))
		}
	}
	return nil
}

// sourceDate is the time reproducible builds agree on: SOURCE_DATE_EPOCH
// (reproducible-builds.org) if set, else the Unix epoch.
func sourceDate(epoch string) (time.Time, error) {
	if epoch == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH: %w", err)
	}
	return time.Unix(sec, 0).UTC(), nil
}
