// Package initcmd is `kubectl kudo init`: install kudo-ng — its CRDs, or
// everything `make deploy` installs — into a cluster, or print it.
package initcmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kudo-ng/kudo/config"
	"github.com/kudo-ng/kudo/internal/cli/clientutil"
)

// Options are the flags of init.
type Options struct {
	DryRun  bool
	Output  string
	CRDOnly bool
}

// NewCmd returns the init command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install kudo-ng's CRDs, RBAC, webhooks and manager (needs cert-manager), or print them",
		Example: `  kubectl kudo init --dry-run -o yaml
  kubectl kudo init --crd-only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var c client.Client
			if !opts.DryRun {
				var err error
				if c, _, err = clientutil.New(flags); err != nil {
					return err
				}
			}
			return Run(cmd.Context(), c, streams, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "Print the manifests instead of applying them (with -o yaml)")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "Output format of --dry-run: yaml")
	cmd.Flags().BoolVar(&opts.CRDOnly, "crd-only", false, "Only the CustomResourceDefinitions")
	return cmd
}

// Run prints or server-side applies the manifests.
func Run(ctx context.Context, c client.Client, streams genericiooptions.IOStreams, opts *Options) error {
	if opts.DryRun && opts.Output != "yaml" {
		return fmt.Errorf("--dry-run prints the manifests: add -o yaml")
	}
	objs, err := manifests(opts.CRDOnly)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if opts.DryRun {
			b, err := yaml.Marshal(obj.Object)
			if err != nil {
				return err
			}
			_, _ = fmt.Fprintf(streams.Out, "---\n%s", b)
			continue
		}
		if err := c.Patch(ctx, obj, client.Apply, client.FieldOwner("kubectl-kudo"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		_, _ = fmt.Fprintf(streams.Out, "%s/%s applied\n", obj.GetKind(), obj.GetName())
	}
	return nil
}

func manifests(crdOnly bool) ([]*unstructured.Unstructured, error) {
	var docs []byte
	if crdOnly {
		crds, err := config.CRDs()
		if err != nil {
			return nil, err
		}
		docs = bytes.Join(crds, []byte("\n---\n"))
	} else {
		var err error
		if docs, err = config.Release(); err != nil {
			return nil, err
		}
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(docs)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}
