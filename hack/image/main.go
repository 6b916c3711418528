// Command image builds the manager's container image without a container
// engine or a registry to pull from, for `make docker-build`.
//
// The Dockerfile stays the one description of the image. Its builder stage
// is replaced by the host's Go build of the same command (the Makefile runs
// it, --binary); its final stage is applied to a local stand-in for its base
// image (image.go). The result is reproducible: the same binary gives the
// same digest. It is written as a docker-archive tarball that
// `ctr images import` and `docker load` accept (--output), pushed (--push),
// or both. The local control plane's registry is pushed to over plain HTTP
// (--plain-http).
package main

import (
	"bytes"
	"debug/buildinfo"
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
	dockerfile, binary, tag, arch, output, plainHTTP string
	push                                             bool
}

func main() {
	var o options
	flag.StringVar(&o.dockerfile, "dockerfile", "Dockerfile", "The Dockerfile whose final stage describes the image.")
	flag.StringVar(&o.binary, "binary", "", "The binary the Dockerfile's builder stage makes, built on the host with the same command.")
	flag.StringVar(&o.tag, "tag", "", "The image's reference, e.g. ghcr.io/kudo-ng/kudo:v0.1.0.")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "The binary's GOARCH; the image's platform is linux/<arch>.")
	flag.StringVar(&o.output, "output", "", "Write the image here as a docker-archive tarball.")
	flag.BoolVar(&o.push, "push", false, "Push the image to the tag's registry, with the credentials of the Docker config.")
	flag.StringVar(&o.plainHTTP, "plain-http", "",
		"A registry (host:port) to push to over plain HTTP when the tag names it, as the local control plane's on its bridge.")
	flag.Parse()
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(o options, out io.Writer) error {
	if o.binary == "" || o.tag == "" {
		return errors.New("--binary and --tag are required")
	}
	tag, err := reference(o.tag, o.plainHTTP)
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
	binary, err := os.ReadFile(o.binary)
	if err != nil {
		return err
	}
	info, err := buildinfo.Read(bytes.NewReader(binary))
	if err != nil {
		return fmt.Errorf("%s: %w", o.binary, err)
	}
	if err := checkBinary(info, o.arch); err != nil {
		return fmt.Errorf("%s: %w", o.binary, err)
	}
	caCerts, err := os.ReadFile(caCertsPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	created, err := sourceDate(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	img, err := buildImage(st, binary, caCerts, o.arch, created)
	if err != nil {
		return err
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

// reference parses the image's tag. Its registry is spoken to over plain
// HTTP only if it is plainHTTP: every other one keeps TLS.
func reference(tag, plainHTTP string) (name.Tag, error) {
	t, err := name.NewTag(tag)
	if err != nil || plainHTTP == "" || t.RegistryStr() != plainHTTP {
		return t, err
	}
	return name.NewTag(tag, name.Insecure)
}

// checkBinary refuses a binary that would not start in the image: the base
// has no C library, and the image has one platform.
func checkBinary(info *debug.BuildInfo, arch string) error {
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
