// Package version is `kubectl kudo version`.
package version

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/output"
	"github.com/kudo-ng/kudo/internal/version"
)

// forOutput is what -o writes, as KUDO wrote it.
type forOutput struct {
	Client version.Info `json:"clientVersion"`
}

// NewCmd returns the version command.
func NewCmd(streams genericiooptions.IOStreams) *cobra.Command {
	var format output.Format
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl-kudo",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			info := version.Current()
			if format != "" {
				return output.Object(streams.Out, format, forOutput{Client: info})
			}
			_, err := fmt.Fprintf(streams.Out, "KUDO Version: %#v\n", info)
			return err
		},
	}
	output.Flag(cmd.Flags(), &format, "Output format for command results: json or yaml")
	return cmd
}
