// Package packagecmd is `kubectl kudo package`: verify, create, list and
// render operator packages, with no cluster, and push them to OCI
// registries and pull them.
package packagecmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewCmd returns the package command and its verbs.
func NewCmd(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "package",
		Short: "Verify, create, list, render operator packages, push them to OCI registries and pull them, and print their typed APIs",
	}
	cmd.AddCommand(newVerifyCmd(streams), newCreateCmd(streams), newListCmd(streams), newRenderCmd(streams), newNewCmd(streams),
		newAddCmd(streams), newSchemaCmd(streams), newPushCmd(streams), newPullCmd(streams), newSignCmd(streams), newImportCmd(streams))
	return cmd
}
