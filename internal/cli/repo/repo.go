// Package repo is `kubectl kudo repo`: operator package repositories.
package repo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/packages"
)

// NewCmd returns the repo command and its verbs.
func NewCmd(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "repo",
		Short: "Manage operator package repositories",
	}
	cmd.AddCommand(newIndexCmd(streams))
	return cmd
}

// IndexOptions are the flags of `repo index`.
type IndexOptions struct {
	Dir string
	URL string
	// Now stamps the index; tests fix it.
	Now func() time.Time
}

func newIndexCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &IndexOptions{Now: time.Now}
	cmd := &cobra.Command{
		Use:   "index <dir>",
		Short: "Write index.yaml for the package tarballs of a directory",
		Example: `  kubectl kudo package create ./zookeeper/operator -d repo/
  kubectl kudo repo index repo/ --url http://127.0.0.1:8080`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			return RunIndex(cmd.Context(), streams, opts)
		},
	}
	cmd.Flags().StringVar(&opts.URL, "url", "", "URL the repository is served at; the tarballs' URLs start with it")
	return cmd
}

// RunIndex indexes the directory's tarballs into <dir>/index.yaml.
func RunIndex(_ context.Context, streams genericiooptions.IOStreams, opts *IndexOptions) error {
	index, err := packages.IndexDirectory(opts.Dir, opts.URL, opts.Now().UTC())
	if err != nil {
		return err
	}
	data, err := index.Marshal()
	if err != nil {
		return err
	}
	target := filepath.Join(opts.Dir, packages.IndexFileName)
	if err := os.WriteFile(target, data, 0o644); err != nil {
		return err
	}
	count := 0
	for _, versions := range index.Entries {
		count += len(versions)
	}
	_, err = fmt.Fprintf(streams.Out, "index written: %s (%d package(s), %d version(s))\n", target, len(index.Entries), count)
	return err
}
