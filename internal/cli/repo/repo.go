// Package repo is `kubectl kudo repo`: operator package repositories.
package repo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/repoconfig"
	"github.com/kudo-ng/kudo/internal/packages"
)

// NewCmd returns the repo command and its verbs.
func NewCmd(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "repo",
		Short: "Manage operator package repositories",
	}
	cmd.AddCommand(newIndexCmd(streams), newAddCmd(streams), newRemoveCmd(streams), newListCmd(streams), newContextCmd(streams))
	return cmd
}

func newAddCmd(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "add NAME URL",
		Short: "Add a repository; the first one added is the one in use",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			c, err := repoconfig.Load()
			if err != nil {
				return err
			}
			for _, r := range c.Repositories {
				if r.Name == args[0] {
					return fmt.Errorf("repository %s exists (%s): remove it first", r.Name, r.URL)
				}
			}
			c.Repositories = append(c.Repositories, repoconfig.Repository{Name: args[0], URL: args[1]})
			if c.Context == "" {
				c.Context = args[0]
			}
			if err := c.Save(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "repository %s added\n", args[0])
			return err
		},
	}
}

func newRemoveCmd(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a repository",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			c, err := repoconfig.Load()
			if err != nil {
				return err
			}
			kept := c.Repositories[:0]
			for _, r := range c.Repositories {
				if r.Name != args[0] {
					kept = append(kept, r)
				}
			}
			if len(kept) == len(c.Repositories) {
				return fmt.Errorf("repository %s is not configured", args[0])
			}
			c.Repositories = kept
			if c.Context == args[0] {
				c.Context = ""
			}
			if err := c.Save(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "repository %s removed\n", args[0])
			return err
		},
	}
}

func newListCmd(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the repositories; * marks the one in use",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, err := repoconfig.Load()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			_, _ = fmt.Fprintln(w, "NAME\tURL")
			for _, r := range c.Repositories {
				name := r.Name
				if r.Name == c.Context {
					name = "*" + name
				}
				_, _ = fmt.Fprintf(w, "%s\t%s\n", name, r.URL)
			}
			return w.Flush()
		},
	}
}

func newContextCmd(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "context NAME",
		Short: "Use a repository for installs by name",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			c, err := repoconfig.Load()
			if err != nil {
				return err
			}
			if _, err := c.URL(args[0]); err != nil {
				return err
			}
			c.Context = args[0]
			if err := c.Save(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "using repository %s\n", args[0])
			return err
		},
	}
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
