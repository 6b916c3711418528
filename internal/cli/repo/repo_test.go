package repo

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/packagecmd"
	"github.com/kudo-ng/kudo/internal/packages"
	"github.com/kudo-ng/kudo/test/corpus"
)

// repoCommand runs kubectl kudo repo with its arguments.
func repoCommand(streams genericiooptions.IOStreams) func(args ...string) error {
	return func(args ...string) error {
		cmd := NewCmd(streams)
		cmd.SetArgs(args)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		return cmd.Execute()
	}
}

func TestIndex(t *testing.T) {
	dir := t.TempDir()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	// Two packages: hello, and a copy of it named bye with no appVersion.
	bye := filepath.Join(t.TempDir(), "bye")
	if err := os.CopyFS(bye, os.DirFS(filepath.Join(corpus.Examples(), "hello", "operator"))); err != nil {
		t.Fatal(err)
	}
	operator := filepath.Join(bye, packages.OperatorFileName)
	data, err := os.ReadFile(operator)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(strings.Replace(string(data), "name: hello", "name: bye", 1), "appVersion: 1.27.0\n", "", 1))
	if err := os.WriteFile(operator, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(corpus.Examples(), "hello", "operator"), bye} {
		if err := packagecmd.RunCreate(context.Background(), streams, &packagecmd.CreateOptions{Path: path, TarballOptions: packagecmd.TarballOptions{Destination: dir}}); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	now := func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }
	if err := RunIndex(context.Background(), streams, &IndexOptions{Dir: dir, URL: "http://127.0.0.1:8080", Now: now}); err != nil {
		t.Fatal(err)
	}
	if want := "index " + filepath.Join(dir, "index.yaml") + " created.\n"; out.String() != want {
		t.Errorf("output %q, want %q", out, want)
	}
	data, err = os.ReadFile(filepath.Join(dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	index, err := packages.ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	entry := index.Entries["hello"]
	if len(entry) != 1 || entry[0].URLs[0] != "http://127.0.0.1:8080/hello-1.27.0_0.1.0.tgz" || len(entry[0].Digest) != 64 {
		t.Errorf("hello entry: %+v", entry)
	}
	if bye := index.Entries["bye"]; len(bye) != 1 || bye[0].URLs[0] != "http://127.0.0.1:8080/bye-0.1.0.tgz" {
		t.Errorf("bye entry: %+v", bye)
	}
	if !strings.Contains(string(data), "generated: \"2026-11-21T10:00:00Z\"") {
		t.Errorf("index.yaml:\n%s", data)
	}

	// As KUDO's: an index is not overwritten unless asked, and another
	// index's packages the directory has not are merged in.
	opts := &IndexOptions{Dir: dir, URL: "http://127.0.0.1:8080", Now: now}
	if err := RunIndex(context.Background(), streams, opts); err == nil || !strings.HasSuffix(err.Error(), "exists: pass --overwrite to replace it") {
		t.Errorf("a second index: %v", err)
	}
	other := filepath.Join(t.TempDir(), "index.yaml")
	otherIndex := "apiVersion: v1\nentries:\n  hello:\n  - {name: hello, operatorVersion: 0.1.0, appVersion: 1.27.0, urls: [http://elsewhere/h.tgz], digest: x}\n" +
		"  kafka:\n  - {name: kafka, operatorVersion: 1.3.0, urls: [http://elsewhere/k.tgz], digest: y}\n"
	if err := os.WriteFile(other, []byte(otherIndex), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Overwrite, opts.Merge = true, other
	if err := RunIndex(context.Background(), streams, opts); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(filepath.Join(dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if index, err = packages.ParseIndex(data); err != nil {
		t.Fatal(err)
	}
	if len(index.Entries) != 3 || index.Entries["hello"][0].URLs[0] != "http://127.0.0.1:8080/hello-1.27.0_0.1.0.tgz" ||
		index.Entries["kafka"][0].URLs[0] != "http://elsewhere/k.tgz" {
		t.Errorf("merged index:\n%s", data)
	}
	opts.MergeRepo = "community"
	if err := RunIndex(context.Background(), streams, opts); err == nil || err.Error() != "specify either 'merge' or 'merge-repo', not both" {
		t.Errorf("--merge and --merge-repo: %v", err)
	}
}

// TestAddChecksTheRepository: as KUDO's, repo add reads the repository's
// index first, unless --skip-check.
func TestAddChecksTheRepository(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	served := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/index.yaml" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("apiVersion: v1\nentries: {}\n"))
	}))
	defer served.Close()
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	run := repoCommand(streams)
	if err := run("add", "served", served.URL); err != nil {
		t.Errorf("a served repository: %v", err)
	}
	if err := run("add", "missing", served.URL+"/missing"); err == nil || !strings.HasSuffix(err.Error(), "(--skip-check adds it unchecked)") {
		t.Errorf("a repository without an index: %v", err)
	}
}

func TestRepositoryConfig(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	run := repoCommand(streams)
	for _, args := range [][]string{
		{"add", "local", "http://127.0.0.1:8080", "--skip-check"}, {"add", "other", "http://127.0.0.1:9090", "-f"}, {"context", "other"}, {"list"},
	} {
		if err := run(args...); err != nil {
			t.Fatalf("repo %v: %v", args, err)
		}
	}
	want := "\"local\" has been added to your repositories\n\"other\" has been added to your repositories\nusing repository other\n" +
		"NAME     \tURL                                              \n" +
		"community\thttps://kudo-repository.storage.googleapis.com/v1\n" +
		"local    \thttp://127.0.0.1:8080                            \n" +
		"*other   \thttp://127.0.0.1:9090                            \n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if err := run("add", "local", "http://x"); err == nil || err.Error() != "repository local exists (http://127.0.0.1:8080): remove it first" {
		t.Errorf("adding twice: %v", err)
	}
	if err := run("context", "ghost"); err == nil ||
		err.Error() != `repository "ghost" is not configured: add it with kubectl kudo repo add ghost URL` {
		t.Errorf("context of an unknown repository: %v", err)
	}
	if err := run("rm", "other"); err != nil {
		t.Fatal(err)
	}
	if err := run("remove", "other"); err == nil || err.Error() != "repository other is not configured" {
		t.Errorf("removing twice: %v", err)
	}
}

// TestRepoListPrintsKUDOsGoldenFiles: KUDO v0.19's golden files of repo
// list (testdata/kudo-v0.19, from its module's pkg/kudoctl/cmd/testdata)
// are our output, byte for byte: the community repository in use where no
// file configures any, and after repo add --skip-check of a bad URL.
func TestRepoListPrintsKUDOsGoldenFiles(t *testing.T) {
	t.Setenv("KUDO_HOME", t.TempDir())
	for _, step := range []struct {
		golden string
		add    []string
	}{
		{"repo-list.golden", nil},
		{"skip-check-add-list.golden", []string{"add", "foo", "badurl", "--skip-check"}},
	} {
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		run := repoCommand(streams)
		if step.add != nil {
			if err := run(step.add...); err != nil {
				t.Fatal(err)
			}
			if out.String() != "\"foo\" has been added to your repositories\n" {
				t.Errorf("repo add: %q, want KUDO's", out)
			}
			out.Reset()
		}
		if err := run("list"); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "kudo-v0.19", step.golden))
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != string(want) {
			t.Errorf("%s:\n%q\nwant KUDO's\n%q", step.golden, out.String(), want)
		}
	}
}

// TestIndexWritesKUDOsGoldenFile: repo index of KUDO's zk.tgz, named as
// package create names it, writes KUDO v0.19's index.yaml.golden byte for
// byte. (KUDO's URL named the package, whatever the file's name; kudo-ng's
// names the file, which is what a server serves.)
func TestIndexWritesKUDOsGoldenFile(t *testing.T) {
	kudo := filepath.Join("testdata", "kudo-v0.19")
	dir := t.TempDir()
	tgz, err := os.ReadFile(filepath.Join(kudo, "zk.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zookeeper-3.4.10_0.1.0.tgz"), tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	generated := time.Date(2019, 10, 25, 0, 0, 0, 0, time.UTC)
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	if err := RunIndex(context.Background(), streams, &IndexOptions{Dir: dir, URL: "http://localhost", Now: func() time.Time { return generated }}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, packages.IndexFileName))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(kudo, "index.yaml.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("index.yaml:\n%s\nwant KUDO's\n%s", got, want)
	}
}
