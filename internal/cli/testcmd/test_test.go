package testcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// fakeKuttl writes an executable script into dir and returns its path.
func fakeKuttl(t *testing.T, dir, script string) string {
	t.Helper()
	path := filepath.Join(dir, kuttlBinary)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubectlKudo returns kubectl-kudo's root with the cluster flags and the test
// verb, as cmd/kubectl-kudo makes it, kuttl run by run.
func kubectlKudo(streams genericiooptions.IOStreams, run func(*exec.Cmd) error, args ...string) *cobra.Command {
	root := &cobra.Command{Use: "kubectl-kudo", SilenceUsage: true, SilenceErrors: true}
	flags := genericclioptions.NewConfigFlags(true)
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newCmd(streams, flags, run))
	root.SetArgs(args)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	return root
}

func TestKuttlCommandLine(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	config := clientcmdapi.NewConfig()
	config.Clusters["a"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	config.Clusters["b"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:2"}
	config.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	config.Contexts["a"] = &clientcmdapi.Context{Cluster: "a", AuthInfo: "u"}
	config.Contexts["b"] = &clientcmdapi.Context{Cluster: "b", AuthInfo: "u"}
	config.CurrentContext = "a"
	if err := clientcmd.WriteToFile(*config, kubeconfig); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		files []string // in the working directory; a trailing / makes a directory
		args  []string // of kubectl kudo
		want  []string // kuttl's, after the program
		// wantContext is the current context of the kubeconfig kuttl gets;
		// empty: kuttl keeps this process's KUBECONFIG.
		wantContext string
		wantErr     string
	}{
		{name: "kuttl's own suite file, read by kuttl", files: []string{"kuttl-test.yaml", "kudo-test.yaml", "tests/"},
			args: []string{"test"}, want: []string{"test"}},
		{name: "KUDO's suite file", files: []string{"kudo-test.yaml", "tests/"},
			args: []string{"test"}, want: []string{"test", "--config", "kudo-test.yaml"}},
		{name: "KUDO's suite file, its test directories overridden", files: []string{"kudo-test.yaml"},
			args: []string{"test", "e2e"}, want: []string{"test", "--config", "kudo-test.yaml", "e2e"}},
		{name: "a package's tests without a suite file", files: []string{"operator/", "tests/"},
			args: []string{"test"}, want: []string{"test", "tests"}},
		{name: "test directories as arguments", files: []string{"tests/"},
			args: []string{"test", "./a", "./b"}, want: []string{"test", "./a", "./b"}},
		{name: "nothing to run is kuttl's to say", args: []string{"test"}, want: []string{"test"}},
		{name: "--config wins", files: []string{"kudo-test.yaml"},
			args: []string{"test", "--config", "ci.yaml"}, want: []string{"test", "--config", "ci.yaml"}},
		{name: "kuttl's flags given, in kuttl's syntax and order",
			args: []string{"test", "--timeout", "60", "--parallel", "2", "--skip-delete", "--manifest-dir", "m1",
				"--manifest-dir", "m2,m3", "--crd-dir", "crds", "--test", "zk", "--report", "XML", "--artifacts-dir", "out",
				"--start-control-plane", "--skip-cluster-delete=false", "--kind-context", "k", "tests"},
			want: []string{"test", "--artifacts-dir=out", "--crd-dir=crds", "--kind-context=k", "--manifest-dir=m1",
				"--manifest-dir=m2", "--manifest-dir=m3", "--parallel=2", "--report=XML", "--skip-cluster-delete=false",
				"--skip-delete=true", "--start-control-plane=true", "--test=zk", "--timeout=60", "tests"}},
		{name: "KUDO's --start-kudo is accepted and not passed on",
			args: []string{"test", "--start-kudo", "--start-kind", "--kind-config", "kind.yaml", "e2e"},
			want: []string{"test", "--kind-config=kind.yaml", "--start-kind=true", "e2e"}},
		{name: "the cluster flags kuttl has", args: []string{"test", "-n", "default", "--as", "admin", "tests"},
			want: []string{"test", "--namespace", "default", "--as", "admin", "tests"}},
		{name: "the kubeconfig, through KUBECONFIG", args: []string{"--kubeconfig", kubeconfig, "test", "tests"},
			want: []string{"test", "tests"}, wantContext: "a"},
		{name: "a context, through a copy of the kubeconfig", args: []string{"test", "--kubeconfig", kubeconfig, "--context", "b"},
			want: []string{"test"}, wantContext: "b"},
		{name: "a context the kubeconfig lacks", args: []string{"test", "--kubeconfig", kubeconfig, "--context", "c"},
			wantErr: `context "c" not found in the kubeconfig`},
		{name: "cluster flags kuttl has no way to take", args: []string{"test", "--server", "https://x", "--insecure-skip-tls-verify"},
			wantErr: "kubectl kudo test passes --kubeconfig, --context, --namespace and --as to kuttl, " +
				"not --insecure-skip-tls-verify, --server: set it in a kubeconfig's context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", "/from/the/environment")
			t.Setenv("KUTTL", "")
			work := t.TempDir()
			for _, f := range tt.files {
				var err error
				if dir, ok := strings.CutSuffix(f, "/"); ok {
					err = os.Mkdir(filepath.Join(work, dir), 0o755)
				} else {
					err = os.WriteFile(filepath.Join(work, f), nil, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(work)
			kuttl := fakeKuttl(t, t.TempDir(), "exit 0")

			var got *exec.Cmd
			var gotContext string
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			record := func(c *exec.Cmd) error {
				got = c
				// The copy of the kubeconfig is gone after the run: read it now.
				if cfg, err := clientcmd.LoadFromFile(kubeconfigOf(c)); err == nil {
					gotContext = cfg.CurrentContext
				}
				return nil
			}
			root := kubectlKudo(streams, record, slices.Concat(tt.args, []string{"--kuttl", kuttl})...)
			err := root.Execute()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Path != kuttl || !slices.Equal(got.Args[1:], tt.want) {
				t.Errorf("ran %s %q\nwant %s %q", got.Path, got.Args[1:], kuttl, tt.want)
			}
			if tt.wantContext == "" && kubeconfigOf(got) != "/from/the/environment" {
				t.Errorf("KUBECONFIG=%s, want the environment's", kubeconfigOf(got))
			}
			if tt.wantContext != "" && gotContext != tt.wantContext {
				t.Errorf("kuttl's kubeconfig uses context %q, want %q", gotContext, tt.wantContext)
			}
			if path := kubeconfigOf(got); path != kubeconfig && path != "/from/the/environment" {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("the copy of the kubeconfig, %s, is left after the run: %v", path, err)
				}
			}
		})
	}
}

// kubeconfigOf is the KUBECONFIG a command runs with: the last one in its
// environment, as exec uses it.
func kubeconfigOf(c *exec.Cmd) string {
	value := ""
	for _, kv := range c.Env {
		if v, ok := strings.CutPrefix(kv, "KUBECONFIG="); ok {
			value = v
		}
	}
	return value
}

func TestLocateKuttl(t *testing.T) {
	flag, env, beside, path := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	for _, dir := range []string{flag, env, beside, path} {
		fakeKuttl(t, dir, "exit 0")
	}
	tests := []struct {
		name                    string
		flag, env, beside, path string
		want                    string
		wantErr                 string
	}{
		{name: "the flag first", flag: flag, env: env, beside: beside, path: path, want: flag},
		{name: "then $KUTTL", env: env, beside: beside, path: path, want: env},
		{name: "then beside kubectl-kudo", beside: beside, path: path, want: beside},
		{name: "then PATH", beside: t.TempDir(), path: path, want: path},
		{name: "a flag naming nothing", flag: t.TempDir(), beside: beside,
			wantErr: "kuttl (--kuttl or $KUTTL): stat %s/kubectl-kuttl: no such file or directory"},
		{name: "nowhere", beside: "/kudo/bin", path: t.TempDir(),
			wantErr: "kubectl-kuttl not found: kubectl kudo test runs kuttl (https://kuttl.dev, v0.22 or later); " +
				"give its path with --kuttl or $KUTTL, or put it beside kubectl-kudo (/kudo/bin) or on PATH; " +
				"in kudo-ng's repository `make kuttl` builds it into bin/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			t.Setenv("KUTTL", "")
			if tt.env != "" {
				t.Setenv("KUTTL", filepath.Join(tt.env, kuttlBinary))
			}
			flagPath := ""
			if tt.flag != "" {
				flagPath = filepath.Join(tt.flag, kuttlBinary)
			}
			got, err := locate(flagPath, tt.beside)
			if tt.wantErr != "" {
				want := strings.ReplaceAll(tt.wantErr, "%s", tt.flag)
				if err == nil || err.Error() != want {
					t.Fatalf("error %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != filepath.Join(tt.want, kuttlBinary) {
				t.Errorf("found %s, want the one in %s", got, tt.want)
			}
		})
	}
}

func TestRunKuttl(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tt := range []struct {
		name, script, wantErr string
	}{
		{name: "passing tests", script: `echo "kuttl $*"`},
		{name: "failing tests", script: `echo "kuttl $*"; exit 1`,
			wantErr: "the tests failed (%s exited with status 1): see kuttl's output above"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kuttl := fakeKuttl(t, t.TempDir(), tt.script)
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			err := kubectlKudo(streams, nil, "test", "--kuttl", kuttl, "--parallel", "1", "tests").Execute()
			if out.String() != "kuttl test --parallel=1 tests\n" {
				t.Errorf("kuttl's output: %q", out)
			}
			if want := strings.ReplaceAll(tt.wantErr, "%s", kuttl); tt.wantErr != "" && (err == nil || err.Error() != want) {
				t.Errorf("error %v, want %q", err, want)
			} else if tt.wantErr == "" && err != nil {
				t.Error(err)
			}
		})
	}
}
