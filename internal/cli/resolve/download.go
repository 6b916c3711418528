package resolve

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"
)

// fileScheme starts the URL of a file on this machine: a repository on
// disk is how an air-gapped site serves its packages.
const fileScheme = "file://"

// maxDownloadSize bounds what one download reads: a repository's index or a
// package tarball, which is bounded again when read.
const maxDownloadSize = 16 << 20

// httpsScheme is the scheme a download may not leave once it took it.
const httpsScheme = "https"

// maxRedirects is Go's own limit, which a CheckRedirect replaces.
const maxRedirects = 10

// timeouts bound each stage of a download, so a server that stalls, at
// any stage, fails the command rather than hanging it.
type timeouts struct {
	dial, tlsHandshake, responseHeader, overall time.Duration
}

var defaultTimeouts = timeouts{
	dial:           30 * time.Second,
	tlsHandshake:   10 * time.Second,
	responseHeader: 30 * time.Second,
	overall:        5 * time.Minute,
}

// client makes every download: a URL, a repository's index, its tarballs.
// Tests replace it to trust their TLS server or to time out sooner.
var client = newClient(defaultTimeouts)

func newClient(t timeouts) *http.Client {
	return &http.Client{
		Timeout:       t.overall,
		CheckRedirect: checkRedirect,
		// The rest as http.DefaultTransport has it, proxies included.
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: t.dial, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   t.tlsHandshake,
			ResponseHeaderTimeout: t.responseHeader,
			IdleConnTimeout:       90 * time.Second,
		},
	}
}

// checkRedirect refuses a redirect from https to http, which would let
// whoever sits on the network replace the package.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if prev := via[len(via)-1].URL; prev.Scheme == httpsScheme && req.URL.Scheme != httpsScheme {
		return fmt.Errorf("refusing the redirect from %s to %s, which drops https", prev.Redacted(), req.URL.Redacted())
	}
	return nil
}

// download reads url's body (a file:// URL's file), an error past
// maxDownloadSize rather than a truncated package or index.
func download(ctx context.Context, url string) ([]byte, error) {
	open, source, what := get, "GET "+url, "the response"
	if strings.HasPrefix(url, fileScheme) {
		open, source, what = openFile, url, "the file"
	}
	body, err := open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer func() { _ = body.Close() }()
	data, err := io.ReadAll(io.LimitReader(body, maxDownloadSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(data) > maxDownloadSize {
		return nil, fmt.Errorf("%s: %s is over the limit of %d bytes", source, what, maxDownloadSize)
	}
	return data, nil
}

// get is the body of url's response.
func get(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp.Body, nil
}

// openFile is the file a file:// URL names.
func openFile(_ context.Context, url string) (io.ReadCloser, error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return nil, err
	}
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("%s: a file URL names a file of this machine: file:///PATH", url)
	}
	f, err := os.Open(u.Path)
	if err != nil {
		return nil, err
	}
	return f, nil
}
