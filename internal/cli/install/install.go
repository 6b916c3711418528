// Package install is `kubectl kudo install`: a package's Operator and
// OperatorVersion, those of its dependencies, and an Instance.
package install

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/action"
	"github.com/kudo-ng/kudo/internal/preview"
)

// Options are the flags of install.
type Options struct {
	action.Install
	action.WaitOptions
	Preview action.PreviewOptions
}

// NewCmd returns the install command.
func NewCmd(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "install <name|dir|tgz|url>",
		Short: "Install an operator package and an Instance of it",
		Example: `  kubectl kudo install ./zookeeper/operator --instance zk -p NODE_COUNT=5 --wait
  kubectl kudo install zookeeper --repo http://127.0.0.1:8080
  kubectl kudo install ./zookeeper/operator --instance zk --dry-run=server`,
		Args: cobra.ExactArgs(1),
		RunE: action.RunE(flags, streams, func(ctx context.Context, cfg action.Config, args []string) error {
			opts.Package = args[0]
			return Run(ctx, cfg, opts)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.Instance, "instance", "", "Instance name (default <operator>-instance)")
	opts.ParameterOptions.AddFlags(f)
	opts.PackageOptions.AddFlags(f, "of the package to install")
	f.BoolVar(&opts.SkipInstance, "skip-instance", false, "Install the Operator and OperatorVersion only")
	f.BoolVar(&opts.CreateNamespace, "create-namespace", false, "Create the namespace if it does not exist")
	opts.WriteOptions.AddFlags(f)
	opts.AddFlags(f, "Wait until the deploy plan has finished")
	f.BoolVar(&opts.InCluster, "in-cluster", false, "Install an Instance of an OperatorVersion already in the namespace, "+
		"named by its operator (the newest, or --operator-version and --app-version), reading no package")
	f.StringVar(&opts.KubeConfigSecret, "kubeconfig-secret", "", "NAME[:KEY]: act on another cluster with the kubeconfig in "+
		"this Secret of the namespace (key \"value\" by default, as Cluster API writes it)")
	opts.Preview.AddFlags(f)
	return cmd
}

// Run installs (action.Install), says which Instance it created and, with
// --wait, waits for its deploy plan.
func Run(ctx context.Context, cfg action.Config, opts *Options) error {
	if err := opts.Preview.Check(opts.Wait); err != nil {
		return err
	}
	if opts.Preview.Enabled() {
		return opts.Preview.Preview(cfg.Out, func() (*preview.Report, error) { return opts.Install.Preview(ctx, cfg) })
	}
	i, err := opts.Run(ctx, cfg)
	if err != nil || i == nil {
		return err
	}
	_, _ = fmt.Fprintf(cfg.Out, "instance.kudo.dev/%s created\n", i.Name)
	if !opts.Wait {
		return nil
	}
	if err := action.Wait(ctx, cfg.Client, i.Namespace, cfg.Out, i.Name, opts.WaitTime); err != nil {
		return err
	}
	_, err = fmt.Fprintf(cfg.Out, "instance %s is deployed\n", i.Name)
	return err
}
