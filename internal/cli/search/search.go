// Package search is `kubectl kudo search`: the packages of a repository.
package search

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gosuri/uitable"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/repoconfig"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
)

// NewCmd returns the search command.
func NewCmd(streams genericiooptions.IOStreams) *cobra.Command {
	var repo string
	var allVersions bool
	var registry resolve.Registry
	cmd := &cobra.Command{
		Use:   "search [TEXT]",
		Short: "List the packages of a repository whose name contains TEXT",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := ""
			if len(args) == 1 {
				text = args[0]
			}
			url, err := repoconfig.Resolve(repo)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), streams.Out, url, text, allVersions, registry)
		},
	}
	cmd.Flags().StringVar(&repo, "repo", "", "Repository (URL or name; default: the one in use)")
	cmd.Flags().BoolVarP(&allVersions, "all-versions", "a", false, "Every version of the packages found, not only the newest")
	registry.AddFlags(cmd.Flags())
	return cmd
}

// Run prints the newest version of the matching packages, or with
// allVersions every version, newest first; a repository in an OCI
// registry is reached as registry says.
func Run(ctx context.Context, out io.Writer, url, text string, allVersions bool, registry resolve.Registry) error {
	if url == "" {
		return fmt.Errorf("no repository is configured: add one with kubectl kudo repo add NAME URL, or pass --repo URL")
	}
	index, err := resolve.Index(ctx, url, registry)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(index.Entries))
	for name := range index.Entries {
		if strings.Contains(name, text) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		_, err := fmt.Fprintln(out, "no operators found")
		return err
	}
	// KUDO's table, the name on the first version of a package only.
	table := uitable.New()
	table.AddRow("Name", "Operator Version", "App Version")
	for _, name := range names {
		versions := index.Entries[name]
		if !allVersions && len(versions) > 1 {
			versions = versions[:1]
		}
		for k, pv := range versions {
			shown := pv.Name
			if k > 0 {
				shown = ""
			}
			table.AddRow(shown, pv.OperatorVersion, pv.AppVersion)
		}
	}
	_, err = fmt.Fprintln(out, table)
	return err
}
