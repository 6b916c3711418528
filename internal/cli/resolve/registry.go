package resolve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"

	"github.com/spf13/pflag"

	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/packages"
)

// Registry is how the verbs reach OCI registries: over HTTPS with the
// system's roots and those of CAFile, or over HTTP; credentials come from the
// Docker configuration and its credential helpers.
type Registry struct {
	PlainHTTP bool
	CAFile    string
}

// AddFlags adds --plain-http and --ca-file, as helm's registry verbs have
// them.
func (r *Registry) AddFlags(f *pflag.FlagSet) {
	f.BoolVar(&r.PlainHTTP, "plain-http", false, "Reach OCI registries (oci://) over HTTP rather than HTTPS")
	f.StringVar(&r.CAFile, "ca-file", "", "PEM file of certificate authorities an OCI registry's certificate may be signed by, "+
		"besides the system's")
}

// Client is the client of registries, with a download's timeouts.
func (r Registry) Client() (*ocipkg.Client, error) {
	hc := newClient(defaultTimeouts)
	if r.CAFile != "" {
		pem, err := os.ReadFile(r.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s: no PEM certificate in it", r.CAFile)
		}
		hc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return &ocipkg.Client{PlainHTTP: r.PlainHTTP, HTTPClient: hc}, nil
}

// pull reads a package from a registry; the package's Origin is the digest
// its reference resolved to.
func pull(ctx context.Context, req Request) (*packages.Package, error) {
	c, err := req.Registry.Client()
	if err != nil {
		return nil, err
	}
	pulled, err := c.Pull(ctx, req.Ref)
	if err != nil {
		return nil, err
	}
	return pulled.Package, nil
}

// registryIndex is the index of a repository in a registry: an entry for
// each tag naming a package, whose URL names it by digest.
func registryIndex(ctx context.Context, repository string, registry Registry) (*packages.Index, error) {
	c, err := registry.Client()
	if err != nil {
		return nil, err
	}
	versions, err := c.Versions(ctx, repository)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", repository, err)
	}
	// Tags naming the same version (0.1.0, latest) make one entry.
	index := &packages.Index{APIVersion: "v1"}
	for _, v := range versions {
		index.Add(&packages.PackageVersion{
			Name: v.Config.Name, OperatorVersion: v.Config.OperatorVersion, AppVersion: v.Config.AppVersion,
			Description: v.Config.Description, URLs: []string{v.Ref},
		})
	}
	return index, nil
}
