package packagecmd

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/resolve"
)

func TestPushThenPullWritesTheTarballCreateWrites(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ctx := context.Background()
	ref := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/packages/hello:0.1.0"
	plain := resolve.Registry{PlainHTTP: true}

	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := RunPush(ctx, streams, &PushOptions{Path: hello, Ref: ref, Registry: plain}); err != nil {
		t.Fatal(err)
	}
	digest := strings.TrimPrefix(strings.Split(out.String(), "\n")[1], "Digest: ")
	if !strings.HasPrefix(out.String(), "Pushed: "+ref+"\n") || !strings.HasPrefix(digest, "sha256:") {
		t.Errorf("push printed %q", out)
	}

	dir := t.TempDir()
	streams, _, out, _ = genericiooptions.NewTestIOStreams()
	if err := RunPull(ctx, streams, &PullOptions{Ref: ref, TarballOptions: TarballOptions{Destination: dir}, Registry: plain}); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "hello-1.27.0_0.1.0.tgz")
	if want := "Pulled: " + ref + "\nDigest: " + digest + "\nPackage: " + target + "\n"; out.String() != want {
		t.Errorf("pull printed %q, want %q", out, want)
	}
	created := t.TempDir()
	if err := RunCreate(ctx, genericiooptions.NewTestIOStreamsDiscard(), &CreateOptions{Path: hello, TarballOptions: TarballOptions{Destination: created}}); err != nil {
		t.Fatal(err)
	}
	pulled, _ := os.ReadFile(target)
	want, _ := os.ReadFile(filepath.Join(created, "hello-1.27.0_0.1.0.tgz"))
	if len(pulled) == 0 || !bytes.Equal(pulled, want) {
		t.Error("the pulled tarball is not the one package create writes")
	}
	if err := RunPull(ctx, streams, &PullOptions{Ref: ref, TarballOptions: TarballOptions{Destination: dir}, Registry: plain}); err == nil ||
		!strings.Contains(err.Error(), "exists; use --overwrite") {
		t.Errorf("a second pull: %v, want the tarball kept", err)
	}

	bad := filepath.Join("..", "..", "packages", "testdata", "bad", "missing-template")
	streams, _, _, errOut := genericiooptions.NewTestIOStreams()
	err := RunPush(ctx, streams, &PushOptions{Path: bad, Ref: ref, Registry: plain})
	if err == nil || !strings.Contains(errOut.String(), `template "missing.yaml" is not in templates/`) {
		t.Errorf("pushing a bad package: %v (%s), want it refused with verify's errors", err, errOut)
	}
	parent := filepath.Join("..", "..", "..", "test", "e2e", "testdata", "deps", "parent")
	if err := RunPush(ctx, streams, &PushOptions{Path: parent, Ref: ref, Registry: plain}); err == nil ||
		err.Error() != "operator.yaml: task child: package ../child is a directory or file, which whoever installs from the registry has not: "+
			"push it too, and name it oci://…, or by its name in a repository" {
		t.Errorf("pushing a package depending on a directory: %v, want it refused", err)
	}
	if err := RunPush(ctx, streams, &PushOptions{Path: hello, Ref: "r.example/p:1"}); err == nil ||
		!strings.Contains(err.Error(), "push to a reference that starts with oci://") {
		t.Errorf("pushing to a reference without oci://: %v", err)
	}
}
