// Command kubectl-kudo is the kubectl plugin of kudo-ng: `kubectl kudo <verb>`.
package main

import (
	"errors"
	goflag "flag"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/cli/dashboardcmd"
	"github.com/kudo-ng/kudo/internal/cli/diagnostics"
	"github.com/kudo-ng/kudo/internal/cli/diff"
	"github.com/kudo-ng/kudo/internal/cli/explain"
	"github.com/kudo-ng/kudo/internal/cli/get"
	"github.com/kudo-ng/kudo/internal/cli/initcmd"
	"github.com/kudo-ng/kudo/internal/cli/install"
	"github.com/kudo-ng/kudo/internal/cli/packagecmd"
	"github.com/kudo-ng/kudo/internal/cli/plan"
	"github.com/kudo-ng/kudo/internal/cli/rbaccmd"
	"github.com/kudo-ng/kudo/internal/cli/repo"
	"github.com/kudo-ng/kudo/internal/cli/rollback"
	"github.com/kudo-ng/kudo/internal/cli/rolloutcmd"
	"github.com/kudo-ng/kudo/internal/cli/search"
	"github.com/kudo-ng/kudo/internal/cli/testcmd"
	"github.com/kudo-ng/kudo/internal/cli/uninstall"
	"github.com/kudo-ng/kudo/internal/cli/update"
	"github.com/kudo-ng/kudo/internal/cli/upgrade"
	"github.com/kudo-ng/kudo/internal/cli/version"
	kudoversion "github.com/kudo-ng/kudo/internal/version"
)

func main() {
	err := newRootCmd(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}).Execute()
	if err == nil {
		return
	}
	// A preview that finds changes exits 1 with nothing more to say, as
	// kubectl diff does.
	if errors.Is(err, action.ErrWouldChange) {
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "Error:", err)
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		os.Exit(coded.ExitCode())
	}
	os.Exit(1)
}

func newRootCmd(streams genericiooptions.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:           "kubectl-kudo",
		Short:         "Install and run KUDO operator packages",
		Version:       kudoversion.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// The cluster flags every verb shares: --kubeconfig, -n, --context, ...
	flags := genericclioptions.NewConfigFlags(true)
	flags.AddFlags(root.PersistentFlags())
	kudoFlags(root)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.AddCommand(
		initcmd.NewCmd(streams, flags),
		diagnostics.NewCmd(streams, flags),
		dashboardcmd.NewCmd(streams, flags),
		diff.NewCmd(streams, flags),
		rolloutcmd.NewCmd(streams, flags),
		explain.NewCmd(streams, flags),
		install.NewCmd(streams, flags),
		update.NewCmd(streams, flags),
		upgrade.NewCmd(streams, flags),
		rollback.NewCmd(streams, flags),
		get.NewCmd(streams, flags),
		uninstall.NewCmd(streams, flags),
		plan.NewCmd(streams, flags),
		rbaccmd.NewCmd(streams, flags),
		packagecmd.NewCmd(streams),
		repo.NewCmd(streams),
		search.NewCmd(streams),
		testcmd.NewCmd(streams, flags),
		version.NewCmd(streams),
	)
	return root
}

// kudoFlags are the root flags of KUDO's kubectl kudo that are not
// kubectl's: --home, -v and --validate-install.
func kudoFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	home := f.String("home", "", "Location of your KUDO config, its repositories (default $KUDO_HOME, else ~/.kudo)")
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	verbosity := pflag.PFlagFromGoFlag(klogFlags.Lookup("v"))
	verbosity.Shorthand = "v"
	verbosity.Usage = "Log level for V logs"
	f.AddFlag(verbosity)
	f.Bool("validate-install", true, "Accepted for KUDO's scripts: each verb checks what it needs of the cluster when it needs it")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if *home != "" {
			return os.Setenv("KUDO_HOME", *home)
		}
		return nil
	}
}
