package ocipkg_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/kudo-ng/kudo/internal/ocipkg"
	"github.com/kudo-ng/kudo/internal/ocipkg/ocitest"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/corpus"
)

func TestAHelmChartIsPulledByTheDigestItsTagResolvedTo(t *testing.T) {
	host, c := ocitest.Registry(t, true, nil)
	ctx := context.Background()
	chart, err := os.ReadFile(filepath.Join("..", "chartrender", "testdata", "test-chart-1.2.3.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	ref := ocipkg.Scheme + host + "/charts/test-chart:1.2.3"
	digest := ocitest.PushChart(t, ref, chart, nil)
	pulled, err := c.PullChart(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pulled.Tarball, chart) || pulled.Ref != ocipkg.Scheme+host+"/charts/test-chart@"+digest {
		t.Errorf("pulled %d bytes as %s, want the chart's %d as …@%s", len(pulled.Tarball), pulled.Ref, len(chart), digest)
	}

	for name, tc := range map[string]struct {
		push func(ref string)
		want string
	}{
		"a package": {func(ref string) {
			hello, err := packages.Read(filepath.Join(corpus.Examples(), "hello", "operator"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Push(ctx, hello, ref); err != nil {
				t.Fatal(err)
			}
		}, "not a Helm chart: config \"" + ocipkg.ConfigMediaType + "\""},
		"no chart layer": {func(ref string) {
			ocitest.PushChart(t, ref, chart, func(l *ocispec.Descriptor) { l.MediaType = "application/octet-stream" })
		}, "a Helm chart has one layer of " + ocipkg.ChartContentMediaType + ", this has 0"},
		"a chart larger than a package may be": {func(ref string) {
			ocitest.PushChart(t, ref, chart, func(l *ocispec.Descriptor) { l.Size = 1 << 40 })
		}, "the chart's tarball is 1099511627776 bytes, more than the limit"},
	} {
		t.Run(name, func(t *testing.T) {
			ref := ocipkg.Scheme + host + "/charts/" + strings.ReplaceAll(name, " ", "-") + ":1"
			tc.push(ref)
			if _, err := c.PullChart(ctx, ref); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
