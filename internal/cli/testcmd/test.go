// Package testcmd is `kubectl kudo test`: run kuttl tests (a package's
// tests/, steps and asserts) against a cluster. kuttl, the harness KUDO's
// own `test` wrapped, does the work as the external program kubectl-kuttl:
// it does not compile with our Go, and the harness is its, not ours.
package testcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
)

const kuttlBinary = "kubectl-kuttl"

// Options are the flags of test.
type Options struct {
	// Kuttl is kubectl-kuttl's path; empty looks in $KUTTL, beside
	// kubectl-kudo, then on PATH.
	Kuttl string
	// Config is the TestSuite file; empty is kuttl's kuttl-test.yaml, else
	// KUDO's kudo-test.yaml, in the current directory.
	Config string
	// TestDirs hold test cases; without them and without a TestSuite file, a
	// package's ./tests.
	TestDirs []string
	// Namespace, when set, is the one namespace all tests run in, instead of
	// one kuttl makes for each.
	Namespace string
	// As is the user kuttl impersonates.
	As string
	// Kubeconfig is kuttl's KUBECONFIG; empty keeps this process's.
	Kubeconfig string
	// Forward are the kuttl flags given on the command line, as --name=value:
	// only those given, so that they override the TestSuite file and nothing
	// else, as KUDO's did.
	Forward []string
	// Exec runs kuttl; nil is (*exec.Cmd).Run.
	Exec func(*exec.Cmd) error
}

// Flags of test that kuttl does not get as they are.
const (
	kuttlFlag     = "kuttl"
	configFlag    = "config"
	startKudoFlag = "start-kudo"
)

// NewCmd returns the test command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	return newCmd(streams, flags, nil)
}

// newCmd is NewCmd with kuttl run by run (nil: (*exec.Cmd).Run).
func newCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags, run func(*exec.Cmd) error) *cobra.Command {
	opts := &Options{Exec: run}
	cmd := &cobra.Command{
		Use:   "test [flags]... [test directories]...",
		Short: "Run kuttl tests of operators against a cluster",
		Long: `Runs kuttl (https://kuttl.dev) integration tests against a Kubernetes cluster, as KUDO's test did.

Without arguments the TestSuite file kuttl-test.yaml (or KUDO's kudo-test.yaml) of the current
directory says what to run; without one either, the current package's tests/ directory runs.
Flags override the TestSuite file. kuttl runs as its own program, kubectl-kuttl: --kuttl, $KUTTL,
beside kubectl-kudo or on PATH.`,
		Example: `  kubectl kudo test                                  # kuttl-test.yaml, kudo-test.yaml or ./tests
  kubectl kudo test --config test.yaml
  kubectl kudo test ./zookeeper/tests --test zookeeper-upgrade-test -n default
  kubectl kudo test --crd-dir ./config/crds/ --manifest-dir ./test/manifests/ ./test/integration/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.TestDirs = args
			// VisitAll with Changed: these derived flag sets know no Visit.
			cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
				if f.Changed && f.Name != kuttlFlag && f.Name != configFlag && f.Name != startKudoFlag {
					opts.Forward = append(opts.Forward, forward(f)...)
				}
			})
			cleanup, err := clusterFlags(cmd.InheritedFlags(), flags, opts)
			if err != nil {
				return err
			}
			defer cleanup()
			return Run(cmd.Context(), streams, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Kuttl, kuttlFlag, "", "Path of kubectl-kuttl (default: $KUTTL, beside kubectl-kudo, then PATH)")
	f.StringVar(&opts.Config, configFlag, "", "TestSuite file to load settings from (default: kuttl-test.yaml or kudo-test.yaml)")
	// kuttl's flags, as KUDO's test had them; kuttl reads them.
	f.String("crd-dir", "", "Directory to load CustomResourceDefinitions from prior to running the tests")
	f.StringSlice("manifest-dir", nil, "One or more directories containing manifests to apply before running the tests")
	f.String("test", "", "If set, the specific test case to run (basename of the test case dir)")
	f.Bool("start-control-plane", false, "Start a local Kubernetes control plane for the tests (requires etcd and kube-apiserver)")
	f.Bool("start-kind", false, "Start a KIND cluster for the tests (cannot be used with --start-control-plane)")
	f.String("kind-config", "", "KIND configuration file (implies --start-kind)")
	f.String("kind-context", "", "KIND context name to use (default: kind)")
	f.String("artifacts-dir", "", "Directory to write logs and reports to (default: the current directory)")
	f.String("report", "", "Report format, JSON or XML, written to --artifacts-dir")
	f.Bool("skip-delete", false, "Do not delete what the tests created (implies --skip-cluster-delete)")
	f.Bool("skip-cluster-delete", false, "Do not delete the control plane or KIND cluster the tests started")
	f.Int("parallel", 8, "The maximum number of tests to run at once")
	f.Int("timeout", 30, "Default timeout of a step in seconds")
	f.Bool(startKudoFlag, false, "")
	_ = f.MarkDeprecated(startKudoFlag, "KUDO ignored it too; start the manager before the tests (make run, or kubectl kudo init)")
	return cmd
}

// forward writes a flag given on the command line as kuttl reads it.
func forward(f *pflag.Flag) []string {
	s, ok := f.Value.(pflag.SliceValue)
	if !ok {
		return []string{"--" + f.Name + "=" + f.Value.String()}
	}
	var out []string
	for _, v := range s.GetSlice() {
		out = append(out, "--"+f.Name+"="+v)
	}
	return out
}

// clusterFlags passes the kubectl flags given to kuttl: the kubeconfig, the
// namespace and --as directly, --context as a copy of the kubeconfig that
// uses it. kuttl has no flags for the others.
func clusterFlags(given *pflag.FlagSet, flags *genericclioptions.ConfigFlags, opts *Options) (func(), error) {
	var kubeContext string
	var unsupported []string
	given.VisitAll(func(f *pflag.Flag) {
		if !f.Changed {
			return
		}
		switch f.Name {
		case "kubeconfig":
			opts.Kubeconfig = f.Value.String()
		case "namespace":
			opts.Namespace = f.Value.String()
		case "as":
			opts.As = f.Value.String()
		case "context":
			kubeContext = f.Value.String()
		case "home", "v", "validate-install":
			// kubectl kudo's own: they mean nothing to kuttl.
		default:
			unsupported = append(unsupported, "--"+f.Name)
		}
	})
	if len(unsupported) > 0 {
		return nil, fmt.Errorf("kubectl kudo test passes --kubeconfig, --context, --namespace and --as to kuttl, not %s: "+
			"set it in a kubeconfig's context", strings.Join(unsupported, ", "))
	}
	if kubeContext == "" {
		return func() {}, nil
	}
	config, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, err
	}
	if _, ok := config.Contexts[kubeContext]; !ok {
		return nil, fmt.Errorf("context %q not found in the kubeconfig", kubeContext)
	}
	config.CurrentContext = kubeContext
	dir, err := os.MkdirTemp("", "kubectl-kudo-test-")
	if err != nil {
		return nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	opts.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(config, opts.Kubeconfig); err != nil {
		cleanup()
		return nil, err
	}
	return cleanup, nil
}

// Run runs kuttl's test command with the options, in the current directory.
func Run(ctx context.Context, streams genericiooptions.IOStreams, opts *Options) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	kuttl, err := locate(opts.Kuttl, filepath.Dir(self))
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, kuttl, kuttlArgs(opts, ".")...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = streams.In, streams.Out, streams.ErrOut
	cmd.Env = os.Environ()
	if opts.Kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+opts.Kubeconfig)
	}
	run := opts.Exec
	if run == nil {
		run = (*exec.Cmd).Run
	}
	if err := run(cmd); err != nil {
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			return fmt.Errorf("the tests failed (%s exited with status %d): see kuttl's output above", kuttl, exit.ExitCode())
		}
		return fmt.Errorf("running %s: %w", kuttl, err)
	}
	return nil
}

// kuttlArgs are kuttl's arguments for the options, run in dir. KUDO's kudo-test.yaml
// is named when kuttl's own kuttl-test.yaml is absent; a package's tests/ runs
// when neither a TestSuite file nor test directories say what to run.
func kuttlArgs(opts *Options, dir string) []string {
	args := []string{"test"}
	config, dirs := opts.Config, opts.TestDirs
	if config == "" && !exists(dir, "kuttl-test.yaml", false) {
		if exists(dir, "kudo-test.yaml", false) {
			config = "kudo-test.yaml"
		} else if len(dirs) == 0 && exists(dir, "tests", true) {
			dirs = []string{"tests"}
		}
	}
	if config != "" {
		args = append(args, "--config", config)
	}
	if opts.Namespace != "" {
		args = append(args, "--namespace", opts.Namespace)
	}
	if opts.As != "" {
		args = append(args, "--as", opts.As)
	}
	return slices.Concat(args, opts.Forward, dirs)
}

func exists(dir, name string, isDir bool) bool {
	info, err := os.Stat(filepath.Join(dir, name))
	return err == nil && info.IsDir() == isDir
}

// locate finds kubectl-kuttl: the flag, $KUTTL, beside kubectl-kudo (in
// self), then PATH.
func locate(flag, self string) (string, error) {
	for _, p := range []string{flag, os.Getenv("KUTTL")} {
		if p != "" {
			path, err := exec.LookPath(p)
			if e := (*exec.Error)(nil); errors.As(err, &e) {
				err = e.Err
			}
			if err != nil {
				return "", fmt.Errorf("kuttl (--kuttl or $KUTTL): %w", err)
			}
			return path, nil
		}
	}
	if path, err := exec.LookPath(filepath.Join(self, kuttlBinary)); err == nil {
		return path, nil
	}
	if path, err := exec.LookPath(kuttlBinary); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("%s not found: kubectl kudo test runs kuttl (https://kuttl.dev, v0.22 or later); "+
		"give its path with --kuttl or $KUTTL, or put it beside kubectl-kudo (%s) or on PATH; "+
		"in kudo-ng's repository `make kuttl` builds it into bin/", kuttlBinary, self)
}
