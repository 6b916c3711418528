package packagecmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/ocipkg/ocitest"
)

// A chart in a registry is imported by the digest its tag resolved to,
// with --key once one of the keys is found to have signed it; the package
// carries the chart as it was pushed.
func TestImportOfAChartInARegistry(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	host, c := ocitest.Registry(t, true, nil)
	chart, err := os.ReadFile(filepath.Join("..", "..", "chartrender", "testdata", "test-chart-1.2.3.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	signedRef, unsignedRef := ocipkg.Scheme+host+"/charts/signed:1.2.3", ocipkg.Scheme+host+"/charts/unsigned:1.2.3"
	digest := ocitest.PushChart(t, signedRef, chart, nil)
	ocitest.PushChart(t, unsignedRef, chart, nil)
	signer, public := ocitest.Signer(t)
	if _, err := c.Sign(ctx, signedRef, signer); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(key, []byte(public), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := resolve.Registry{PlainHTTP: true}

	dir := filepath.Join(t.TempDir(), "operator")
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := RunImport(ctx, streams, &ImportOptions{Chart: signedRef, Directory: dir, Keys: []string{key}, Registry: plain}); err != nil {
		t.Fatal(err)
	}
	byDigest := ocipkg.Scheme + host + "/charts/signed@" + digest
	if !strings.HasPrefix(out.String(), "Verified: "+byDigest+", signed with "+key) ||
		!strings.Contains(out.String(), "chart from "+byDigest+"\npackage test-chart 1.2.3 written in "+dir) {
		t.Errorf("import printed %q", out)
	}
	carried, err := os.ReadFile(filepath.Join(dir, "charts", "test-chart.tgz"))
	if err != nil || !bytes.Equal(carried, chart) {
		t.Errorf("the package's chart: %v (as pushed: %t)", err, bytes.Equal(carried, chart))
	}

	for name, tc := range map[string]struct {
		opts ImportOptions
		want string
	}{
		"an unsigned chart with --key": {ImportOptions{Chart: unsignedRef, Keys: []string{key}}, "is not signed"},
		"--version of a chart in a registry": {ImportOptions{Chart: unsignedRef, Version: "1.2.3"},
			"--version is of a chart in --repo"},
		"--key of a chart on disk": {ImportOptions{Chart: "web-1.2.3.tgz", Keys: []string{key}},
			"--version and --key are of a chart in a repository or a registry, not of web-1.2.3.tgz"},
	} {
		t.Run(name, func(t *testing.T) {
			opts := tc.opts
			opts.Directory, opts.Registry = filepath.Join(t.TempDir(), "operator"), plain
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			err := RunImport(ctx, streams, &opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if _, statErr := os.Stat(opts.Directory); !os.IsNotExist(statErr) {
				t.Errorf("a failed import wrote %s", opts.Directory)
			}
		})
	}
}
