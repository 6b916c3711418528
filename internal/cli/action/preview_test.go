package action

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kudo-ng/kudo/internal/preview"
)

func TestPreviewOptionsValidate(t *testing.T) {
	tests := []struct {
		opts PreviewOptions
		wait bool
		err  string
	}{
		{opts: PreviewOptions{DryRun: "none"}},
		{opts: PreviewOptions{DryRun: "server", Output: "yaml"}},
		{opts: PreviewOptions{Diff: true, Output: "json"}},
		{opts: PreviewOptions{DryRun: "client"}, err: "--dry-run=client: what a package renders offline is kubectl kudo package render"},
		{opts: PreviewOptions{DryRun: "all"}, err: `--dry-run=all: the values are "none" and "server"`},
		{opts: PreviewOptions{Output: "yaml"}, err: "-o yaml prints a preview: add --dry-run=server or --diff"},
		{opts: PreviewOptions{Diff: true, Output: "wide"}, err: "-o wide: the formats are json and yaml"},
		{opts: PreviewOptions{Diff: true}, wait: true, err: "--wait waits for the change, which a preview"},
		{opts: PreviewOptions{DryRun: "none"}, wait: true},
	}
	for _, tc := range tests {
		err := tc.opts.Check(tc.wait)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%+v, wait %t: error %v, want %q", tc.opts, tc.wait, err, tc.err)
		}
	}
}

func TestPreviewExitCodes(t *testing.T) {
	quiet := &preview.Report{Instance: "a", Plan: "deploy", Objects: []preview.Object{{Verb: preview.Unchanged}}}
	busy := &preview.Report{Instance: "b", Plan: "deploy", Objects: []preview.Object{{Verb: preview.Configure}}}
	opts := &PreviewOptions{Diff: true}
	var out bytes.Buffer
	if err := opts.Print(&out, quiet); err != nil {
		t.Errorf("nothing would change: %v", err)
	}
	if err := opts.Print(&out, quiet, busy); !errors.Is(err, ErrWouldChange) {
		t.Errorf("a change: %v, want ErrWouldChange", err)
	}
	if !strings.Contains(out.String(), "INSTANCE  PLAN    CREATE  CONFIGURE  DELETE  KEEP  REFUSE  UNCHANGED\n/a        deploy  0       0          0       0     0       1\n") {
		t.Errorf("a fleet's summary:\n%s", out.String())
	}
	err := opts.Preview(&out, func() (*preview.Report, error) { return nil, errors.New("unreachable") })
	var failed *PreviewFailed
	if !errors.As(err, &failed) || failed.ExitCode() != 2 {
		t.Errorf("a failed preview: %v, want exit code 2", err)
	}
}

func TestDiffReadsABoundedManifest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	two := write("two.yaml", "apiVersion: packages.kudo.dev/v1\nkind: Hello\nmetadata: {name: a}\n---\n---\n"+
		"apiVersion: packages.kudo.dev/v1\nkind: Hello\nmetadata: {name: b, namespace: other}\n")
	objs, err := (&Diff{File: two}).read("team")
	if err != nil || len(objs) != 2 || objs[0].GetNamespace() != "team" || objs[1].GetNamespace() != "other" {
		t.Fatalf("read %v, %v", objs, err)
	}
	for name, tc := range map[string]struct{ content, err string }{
		"empty.yaml":    {"---\n", "holds no object"},
		"nameless.yaml": {"kind: Hello\n", "document 1: an object needs a kind and metadata.name"},
		"bomb.yaml":     {"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n", "nodes"},
	} {
		if _, err := (&Diff{File: write(name, tc.content)}).read("team"); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", name, err, tc.err)
		}
	}
	big := write("big.yaml", "kind: Hello\nmetadata: {name: a}\ndata: "+strings.Repeat("x", MaxManifestBytes)+"\n")
	if _, err := (&Diff{File: big}).read("team"); err == nil || !strings.Contains(err.Error(), "more than 4 MiB") {
		t.Errorf("a manifest past the bound: %v", err)
	}
}

func TestDryRunAloneIsServer(t *testing.T) {
	for args, want := range map[string]string{"": "none", "--dry-run": "server", "--dry-run=server": "server", "--dry-run=none": "none"} {
		opts := &PreviewOptions{}
		f := pflag.NewFlagSet("install", pflag.ContinueOnError)
		opts.AddFlags(f)
		if err := f.Parse(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		if opts.DryRun != want {
			t.Errorf("%q: --dry-run is %q, want %q", args, opts.DryRun, want)
		}
	}
}
