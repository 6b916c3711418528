// Package repo is `kubectl kudo repo`: operator package repositories.
package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"time"

	"github.com/gosuri/uitable"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/repoconfig"
	"github.com/kudo-ng/kudo/internal/cli/resolve"
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
	var skipCheck bool
	var registry resolve.Registry
	cmd := &cobra.Command{
		Use:   "add NAME URL",
		Short: "Add a repository (an HTTP one's URL, a file:// one's, or an OCI one's oci://REGISTRY/REPOSITORY); repo context NAME uses it",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := repoconfig.Load()
			if err != nil {
				return err
			}
			for _, r := range c.Repositories {
				if r.Name == args[0] {
					return fmt.Errorf("repository %s exists (%s): remove it first", r.Name, r.URL)
				}
			}
			if !skipCheck {
				if _, err := resolve.Index(cmd.Context(), args[1], registry); err != nil {
					return fmt.Errorf("%w (--skip-check adds it unchecked)", err)
				}
			}
			c.Repositories = append(c.Repositories, repoconfig.Repository{Name: args[0], URL: args[1]})
			if c.Context == "" {
				c.Context = args[0]
			}
			if err := c.Save(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "%q has been added to your repositories\n", args[0])
			return err
		},
	}
	cmd.Flags().BoolVarP(&skipCheck, "skip-check", "f", false, "Skip URL and index file validation")
	registry.AddFlags(cmd.Flags())
	return cmd
}

func newRemoveCmd(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Remove a repository",
		Args:    cobra.ExactArgs(1),
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
			_, err = fmt.Fprintf(streams.Out, "%q has been removed from your repositories\n", args[0])
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
			if len(c.Repositories) == 0 {
				return errors.New("no repositories to show")
			}
			table := uitable.New()
			table.AddRow("NAME", "URL")
			for _, r := range c.Repositories {
				name := r.Name
				if r.Name == c.Context {
					name = "*" + name
				}
				table.AddRow(name, r.URL)
			}
			_, err = fmt.Fprintln(streams.Out, table)
			return err
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
	// URLRepo names the configured repository whose URL is URL.
	URLRepo string
	// Merge is an index (a repository's URL, or a file) whose packages are
	// added to the directory's; MergeRepo names a configured repository.
	Merge, MergeRepo string
	// Overwrite replaces an index.yaml the directory has.
	Overwrite bool
	// Now stamps the index; tests fix it.
	Now func() time.Time
}

func newIndexCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &IndexOptions{Now: time.Now}
	cmd := &cobra.Command{
		Use:   "index <dir>",
		Short: "Write index.yaml for the package tarballs of a directory",
		Example: `  kubectl kudo package create ./zookeeper/operator -d repo/
  kubectl kudo repo index repo/ --url http://127.0.0.1:8080
  kubectl kudo repo index repo/ --url-repo local --merge-repo community --overwrite`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			return RunIndex(cmd.Context(), streams, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.URL, "url", "", "URL the repository is served at; the tarballs' URLs start with it")
	f.StringVar(&opts.URLRepo, "url-repo", "", "Name of the configured repository whose URL is --url")
	f.StringVar(&opts.Merge, "merge", "", "URL of a repository, or path of an index file, whose packages are added to the directory's")
	f.StringVar(&opts.MergeRepo, "merge-repo", "", "Name of the configured repository to merge, as --merge")
	f.BoolVarP(&opts.Overwrite, "overwrite", "w", false, "Overwrite the directory's index.yaml")
	return cmd
}

// RunIndex indexes the directory's tarballs into <dir>/index.yaml, with the
// packages of the merged index the directory has not.
func RunIndex(ctx context.Context, streams genericiooptions.IOStreams, opts *IndexOptions) error {
	switch {
	case opts.Merge != "" && opts.MergeRepo != "":
		return errors.New("specify either 'merge' or 'merge-repo', not both")
	case opts.URL != "" && opts.URLRepo != "":
		return errors.New("specify either 'url' or 'url-repo', not both")
	}
	target := filepath.Join(opts.Dir, packages.IndexFileName)
	if _, err := os.Stat(target); err == nil && !opts.Overwrite {
		return fmt.Errorf("%s exists: pass --overwrite to replace it", target)
	}
	url, err := configured(opts.URL, opts.URLRepo)
	if err != nil {
		return err
	}
	index, err := packages.IndexDirectory(opts.Dir, url, opts.Now().UTC())
	if err != nil {
		return err
	}
	if err := merge(ctx, index, opts); err != nil {
		return err
	}
	data, err := index.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(target, data, 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "index %s created.\n", target)
	return err
}

// configured is url, or the URL of the configured repository named.
func configured(url, repo string) (string, error) {
	if repo == "" {
		return url, nil
	}
	c, err := repoconfig.Load()
	if err != nil {
		return "", err
	}
	return c.URL(repo)
}

// merge adds the packages of the index --merge or --merge-repo names that
// the directory has not: the directory's own win.
func merge(ctx context.Context, index *packages.Index, opts *IndexOptions) error {
	from, err := configured(opts.Merge, opts.MergeRepo)
	if err != nil || from == "" {
		return err
	}
	var merged *packages.Index
	if data, err := os.ReadFile(from); err == nil {
		if merged, err = packages.ParseIndex(data); err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
	} else if merged, err = resolve.Index(ctx, from, resolve.Registry{}); err != nil {
		return err
	}
	for _, versions := range merged.Entries {
		for _, pv := range versions {
			if !index.Has(pv) {
				index.Add(pv)
			}
		}
	}
	return nil
}
