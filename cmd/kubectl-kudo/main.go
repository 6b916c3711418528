// Command kubectl-kudo is the kubectl plugin of kudo-ng: `kubectl kudo <verb>`.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/kudo-ng/kudo/internal/version"
)

func main() {
	root := &cobra.Command{
		Use:           "kubectl-kudo",
		Short:         "Install and run KUDO operator packages",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl-kudo",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "kubectl-kudo version %s\n", version.Get())
			return err
		},
	})
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
