// Command kubectl-kudo is the kubectl plugin of kudo-ng: `kubectl kudo <verb>`.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/diagnostics"
	"github.com/kudo-ng/kudo/internal/cli/get"
	"github.com/kudo-ng/kudo/internal/cli/initcmd"
	"github.com/kudo-ng/kudo/internal/cli/install"
	"github.com/kudo-ng/kudo/internal/cli/packagecmd"
	"github.com/kudo-ng/kudo/internal/cli/plan"
	"github.com/kudo-ng/kudo/internal/cli/rbaccmd"
	"github.com/kudo-ng/kudo/internal/cli/repo"
	"github.com/kudo-ng/kudo/internal/cli/rollback"
	"github.com/kudo-ng/kudo/internal/cli/search"
	"github.com/kudo-ng/kudo/internal/cli/testcmd"
	"github.com/kudo-ng/kudo/internal/cli/uninstall"
	"github.com/kudo-ng/kudo/internal/cli/update"
	"github.com/kudo-ng/kudo/internal/cli/upgrade"
	"github.com/kudo-ng/kudo/internal/cli/version"
)

func main() {
	if err := newRootCmd(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func newRootCmd(streams genericiooptions.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:           "kubectl-kudo",
		Short:         "Install and run KUDO operator packages",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// The cluster flags every verb shares: --kubeconfig, -n, --context, ...
	flags := genericclioptions.NewConfigFlags(true)
	flags.AddFlags(root.PersistentFlags())
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.AddCommand(
		initcmd.NewCmd(streams, flags),
		diagnostics.NewCmd(streams, flags),
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
